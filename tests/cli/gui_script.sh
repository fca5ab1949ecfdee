#!/usr/bin/env bash
# `hybridscope gui --script` with SDL's dummy (software) video driver: scripted keys and
# clicks toggle knobs and switch views, screenshots come back at the window size, and the
# picture changes when a knob changes (and not when nothing does).
set -u
here=$(cd "$(dirname "$0")" && pwd)
command -v python3 >/dev/null || { echo "skip: python3 is missing"; exit 77; }
"$HS_BIN" gui --help >/dev/null 2>&1 || { echo "skip: this build has no gui command"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; tail -n 20 "$tmp/err" 2>/dev/null; exit 1; }

"$HS_BIN" init "$tmp/m" --preset tiny --layout HH --train-context 512 >/dev/null 2>&1 || fail "init"
cat >"$tmp/script" <<SCRIPT
# heads view, results in
wait 120
screenshot $tmp/heads.png
screenshot $tmp/heads_again.png
# tidal, then SWLA on: the heads move
key 3
wait
screenshot $tmp/tidal.png
key w
wait
screenshot $tmp/tidal_swla.png
# log scaling too
key g
wait
screenshot $tmp/tidal_swla_log.png
# the head view: hover, wheel zoom and drag pan re-query the map
key 2
wait
screenshot $tmp/head.png
move 300 300
wheel 300 300 2
wait
screenshot $tmp/head_zoom.png
drag 300 300 200 250
wait
screenshot $tmp/head_pan.png
# a click on a tile of the heads view selects that head (the pointer parked where no tooltip
# shows, so only the selection differs)
key 1
wait
move 5 505
screenshot $tmp/heads_before.png
click 300 200
move 5 505
wait
screenshot $tmp/heads_click.png
# help overlay, theme, save
key ?
screenshot $tmp/help.png
key esc
key T
screenshot $tmp/dark.png
key s
resize 700 450
wait
screenshot $tmp/small.png
quit
SCRIPT
( cd "$tmp" && SDL_VIDEODRIVER=dummy "$HS_BIN" gui "$tmp/m" --width 800 --height 520 --length 512 \
    --bins 8 --head-bins 32 --lengths 512 --depths 0:100:50 --tasks sk1 --ppl-length 512 \
    --script "$tmp/script" 2>"$tmp/err" ) || fail "gui exited $?"

for f in heads heads_again tidal tidal_swla tidal_swla_log head head_zoom head_pan heads_before heads_click help dark; do
    python3 "$here/imgcheck.py" png "$tmp/$f.png" 800 520 || fail "$f.png"
done
python3 "$here/imgcheck.py" png "$tmp/small.png" 700 450 || fail "small.png after resize"
cmp -s "$tmp/heads.png" "$tmp/heads_again.png" || fail "two screenshots of the same state differ"
cmp -s "$tmp/tidal.png" "$tmp/tidal_swla.png" && fail "SWLA did not change the tidal plot"
cmp -s "$tmp/tidal_swla.png" "$tmp/tidal_swla_log.png" && fail "log scaling did not change the tidal plot"
cmp -s "$tmp/head.png" "$tmp/head_zoom.png" && fail "the wheel did not zoom the head view"
cmp -s "$tmp/head_zoom.png" "$tmp/head_pan.png" && fail "the drag did not pan the head view"
cmp -s "$tmp/heads_before.png" "$tmp/heads_click.png" && fail "the click selected nothing"
cmp -s "$tmp/heads_click.png" "$tmp/help.png" && fail "? showed no help"
ls "$tmp"/hybridscope-heads-*.png >/dev/null 2>&1 || fail "s saved no PNG"

# a broken script is bad input (exit 2, names the line)
printf 'key tab\nfly 1 2\n' >"$tmp/bad"
SDL_VIDEODRIVER=dummy "$HS_BIN" gui "$tmp/m" --script "$tmp/bad" 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] || fail "bad script: exit $rc"
grep -q "bad:2" "$tmp/err" || fail "bad script message: $(cat "$tmp/err")"
echo "gui: scripted knobs, views, zoom, pan, click, help, theme, save and resize ok"
