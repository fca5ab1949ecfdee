#!/usr/bin/env bash
# `hybridscope export`: every view to PNG (SVG and PDF for a heatmap view, the needle grid,
# the curves and the layout) from a tiny init'd model; the PNG has the asked size and is not
# blank, the SVG parses (heatmap views embed images), the PDF renders (pdftoppm); knobs change
# the picture; bad input exits 2 without leaving a file.
set -u
here=$(cd "$(dirname "$0")" && pwd)
command -v python3 >/dev/null || { echo "skip: python3 is missing"; exit 77; }
"$HS_BIN" export --help >/dev/null 2>&1 || { echo "skip: this build has no export command"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$HS_BIN" init "$tmp/m" --preset tiny --layout HH --train-context 512 >/dev/null 2>&1 || fail "init"
small=(--length 512 --bins 8 --head-bins 32 --lengths 512,1024 --depths 0:100:100 --tasks sk1 --samples 1 --ppl-length 512)
have_pdftoppm=1; command -v pdftoppm >/dev/null || have_pdftoppm=0

# every view as PNG; the vector formats for a heatmap view, the needle grid and the curves
for ve in heads:png heads:svg heads:pdf head:png tidal:png needle:png needle:svg needle:pdf \
          ppl:png ppl:pdf model:png model:svg; do
    v=${ve%%:*}
    for ext in ${ve#*:}; do
        out="$tmp/$v.$ext"
        "$HS_BIN" export --view "$v" "$tmp/m" "${small[@]}" --width 480 --height 320 --out "$out" \
            2>"$tmp/err" || fail "export --view $v --out .$ext: $(cat "$tmp/err")"
        [ -s "$out" ] || fail "$out is empty"
        case $ext in
        png) python3 "$here/imgcheck.py" png "$out" 480 320 || fail "$v.png" ;;
        svg) n=$(python3 "$here/imgcheck.py" svg "$out") || fail "$v.svg does not parse"
             case $v in heads|head) [ "$n" -ge 1 ] || fail "$v.svg embeds no heatmap image" ;; esac ;;
        pdf) head -c 5 "$out" | grep -q '%PDF-' || fail "$v.pdf has no PDF header"
             if [ $have_pdftoppm = 1 ]; then
                 pdftoppm -png -r 36 -singlefile "$out" "$tmp/pdf_$v" 2>/dev/null || fail "$v.pdf does not render"
                 [ -s "$tmp/pdf_$v.png" ] || fail "$v.pdf rendered nothing"
             fi ;;
        esac
    done
done

# --scale: device pixels
"$HS_BIN" export --view model "$tmp/m" --width 300 --height 200 --scale 2 --out "$tmp/s2.png" 2>/dev/null || fail "scale 2"
python3 "$here/imgcheck.py" png "$tmp/s2.png" 600 400 || fail "scale 2 size"

# knobs change the tidal plot (the heads move); the same settings give the same picture
"$HS_BIN" export --view tidal "$tmp/m" "${small[@]}" --width 480 --height 320 --out "$tmp/t2.png" 2>/dev/null || fail "tidal again"
cmp -s "$tmp/tidal.png" "$tmp/t2.png" || fail "the same settings gave another tidal picture"
"$HS_BIN" export --view tidal "$tmp/m" "${small[@]}" --swla --log-scale=64 --width 480 --height 320 --out "$tmp/t3.png" 2>/dev/null || fail "tidal with knobs"
cmp -s "$tmp/tidal.png" "$tmp/t3.png" && fail "swla + log scaling did not change the tidal plot"
"$HS_BIN" export --view tidal "$tmp/m" "${small[@]}" --theme dark --width 480 --height 320 --out "$tmp/t4.png" 2>/dev/null || fail "dark"
cmp -s "$tmp/tidal.png" "$tmp/t4.png" && fail "--theme dark changed nothing"

# --tide: the knob-free result stays in the picture (tidal: ghosts; ppl: a second, pinned
# curve), so it differs from the same knobs exported alone
"$HS_BIN" export --view ppl "$tmp/m" "${small[@]}" --swla --swla-window 64 --width 480 --height 320 --out "$tmp/p1.png" 2>/dev/null || fail "ppl with knobs"
"$HS_BIN" export --view ppl "$tmp/m" "${small[@]}" --swla --swla-window 64 --tide --width 480 --height 320 --out "$tmp/p2.png" 2>"$tmp/err" || fail "ppl --tide: $(cat "$tmp/err")"
python3 "$here/imgcheck.py" png "$tmp/p2.png" 480 320 || fail "ppl --tide png"
cmp -s "$tmp/p1.png" "$tmp/p2.png" && fail "ppl --tide drew no knob-free curve"
"$HS_BIN" export --view tidal "$tmp/m" "${small[@]}" --swla --log-scale=64 --tide --width 480 --height 320 --out "$tmp/t5.png" 2>/dev/null || fail "tidal --tide"
cmp -s "$tmp/t3.png" "$tmp/t5.png" && fail "tidal --tide drew no ghosts"

# bad input: exit 2, one line naming the flag, no file left behind
expect2() {
    local what=$1; shift
    "$HS_BIN" export "$@" >"$tmp/o" 2>"$tmp/e"; rc=$?
    [ $rc -eq 2 ] || fail "$what: exit $rc (want 2): $(cat "$tmp/e")"
    [ "$(wc -l <"$tmp/e")" -ge 1 ] || fail "$what: no message"
}
expect2 "unknown view" --view bogus "$tmp/m" --out "$tmp/x.png"
expect2 "bad extension" --view heads "$tmp/m" --out "$tmp/x.gif"
expect2 "missing --out" --view heads "$tmp/m"
expect2 "missing model" --view heads "$tmp/nope" --out "$tmp/x.png"
expect2 "bad knob" --view heads "$tmp/m" --swla=sideways --out "$tmp/x.png"
expect2 "bad head" --view head "$tmp/m" --head 9.0.0 --out "$tmp/x.png"
expect2 "bad length" --view heads "$tmp/m" --length 12 --out "$tmp/x.png"
expect2 "--tide on a view without one" --view heads "$tmp/m" --swla --tide --out "$tmp/x.png"
expect2 "--tide without knobs" --view ppl "$tmp/m" --tide --out "$tmp/x.png"
expect2 "too short for sk1" --view heads "$tmp/m" --length 300 --out "$tmp/x.png"
grep -q -- "--swla" <("$HS_BIN" export --view heads "$tmp/m" --swla=sideways --out "$tmp/x.png" 2>&1) || fail "knob error does not name --swla"
ls "$tmp"/x.* >/dev/null 2>&1 && fail "a failed export left a file"
# an unwritable destination: runtime failure (1), nothing left
"$HS_BIN" export --view model "$tmp/m" --out "$tmp/no/such/dir/x.png" 2>/dev/null; rc=$?
[ $rc -eq 1 ] || fail "unwritable --out: exit $rc (want 1)"
echo "export: 6 views as PNG, SVG and PDF samples, knobs, sizes and bad input ok"
