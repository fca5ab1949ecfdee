#!/usr/bin/env bash
# `hybridscope tui` driven through tmux: start in a detached session of fixed size, wait for
# results, switch every view (assert its title), toggle each knob (assert the status line),
# resize the pane (assert the redraw), then q: the process exits 0 and the shell is back.
set -u
command -v tmux >/dev/null || { echo "skip: tmux is missing"; exit 77; }
"$HS_BIN" tui --help >/dev/null 2>&1 || { echo "skip: this build has no tui command"; exit 77; }
tmp=$(mktemp -d)
sock="hs-tui-$$"
T() { tmux -L "$sock" -f /dev/null "$@"; }
cleanup() { T kill-server >/dev/null 2>&1; sleep 0.3; rm -rf "$tmp"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; echo "--- screen:"; T capture-pane -p -t hs 2>/dev/null; echo "--- stderr:"; tail -n 20 "$tmp/stderr" 2>/dev/null; exit 1; }

"$HS_BIN" init "$tmp/m" --preset tiny --layout HH --train-context 512 >/dev/null 2>&1 || fail "init"
term=tmux-256color; infocmp $term >/dev/null 2>&1 || term=screen-256color
T new-session -d -s hs -x 120 -y 32 "env -i PATH=/usr/bin:/bin HOME=$tmp TERM=$term LANG=C.UTF-8 PS1='hs\$ ' bash --norc --noprofile" || fail "tmux"
T set-option -t hs -g default-terminal "$term" >/dev/null
# The tui (ASan settings travel along for the sanitizer build).
cmd="cd $tmp && ASAN_OPTIONS=${ASAN_OPTIONS:-} UBSAN_OPTIONS=${UBSAN_OPTIONS:-} $HS_BIN tui $tmp/m --length 512 --bins 8 --head-bins 32 --lengths 512 --depths 0:100:50 --tasks sk1 --ppl-length 512 2>$tmp/stderr; echo EXIT=\$?"
T send-keys -t hs "$cmd" Enter

screen() { T capture-pane -p -t hs; }
# wait_for TEXT [SECONDS]: until the screen shows TEXT (fixed string)
wait_for() {
    local text=$1 limit=${2:-60} i=0
    while [ $i -lt $((limit * 10)) ]; do
        screen | grep -qF -- "$text" && return 0
        sleep 0.1; i=$((i + 1))
    done
    fail "waited ${limit}s for '$text'"
}
# wait_idle: until the status line shows no job (no percentage, nothing queued)
wait_idle() {
    local i=0
    while [ $i -lt 900 ]; do
        local s; s=$(screen | tail -n 2 | head -n 1)
        if ! grep -qE '(^| )[0-9]{1,3}%|queued|probe sk|sweep|perplexity L=|map of head|loading' <<<"$s"; then return 0; fi
        sleep 0.1; i=$((i + 1))
    done
    fail "jobs never finished"
}
status() { screen | tail -n 2 | head -n 1; }

wait_for "Heads: pooled attention" 30
wait_idle
screen | grep -qF "1 Heads" || fail "no tab bar"
screen | tail -n 1 | grep -qF "quit" || fail "no key bar"
status | grep -qF "knobs: off" || fail "status line: $(status)"

# every view by number, and back with Tab
for pair in "2:Head L0.M0.H0" "3:Tidal: entropy vs hit rate" "4:Needle in a haystack" \
            "5:Perplexity by position" "6:Model: layers and memory" "1:Heads: pooled attention"; do
    key=${pair%%:*}; title=${pair#*:}
    T send-keys -t hs "$key"
    wait_for "$title" 30
    wait_idle
done
T send-keys -t hs Tab;  wait_for "Head L0.M0.H0" 10
T send-keys -t hs BTab; wait_for "Heads: pooled attention" 10

# knobs: each toggles what the status line says
knob() {  # KEY EXPECTED-TEXT
    T send-keys -t hs -- "$1"
    local i=0
    while [ $i -lt 100 ]; do status | grep -qF -- "$2" && return 0; sleep 0.1; i=$((i + 1)); done
    fail "key '$1': status line lacks '$2': $(status)"
}
knob w "swla=exact"
knob w "swla=overlap"
knob ] "swla=overlap W=1024"
knob w "knobs: off"
knob g "log(L0=train)"
knob } "log(L0=1024)"
knob g "knobs: off"
knob r "rope_window="
knob r "rope_window=256"
knob R "rope_window=512"
knob r "rope_window=256"
knob r "rope_window=128"
knob r "rope_window=64"
knob r "knobs: off"
knob x "ablate=0.0.0"
knob x "knobs: off"
knob ">" "L=1024"
knob "<" "L=512"
knob t "sk2"
knob t "sk3"
knob t "sk1"
knob D "d=60%"
knob d "d=50%"
knob A "no SWA mixer"
knob m "no sibling"
knob c "| cpu |"
knob c "no CUDA device"
wait_idle

# help overlay
T send-keys -t hs "?"; wait_for "Keys (? or Esc closes)" 10
T send-keys -t hs Escape
i=0; while screen | grep -qF "Keys (? or Esc closes)"; do sleep 0.1; i=$((i + 1)); [ $i -gt 50 ] && fail "help did not close"; done

# resize: the layout follows the new size
T resize-window -t hs -x 80 -y 24
wait_for "Heads: pooled attention" 10
[ "$(screen | wc -l)" -eq 24 ] || fail "pane is not 24 rows"
screen | tail -n 1 | grep -qF "quit" || fail "no key bar after resizing to 80x24"
T resize-window -t hs -x 60 -y 20
i=0; while screen | grep -qF "Heads: pooled attention"; do sleep 0.1; i=$((i + 1)); [ $i -gt 50 ] && fail "no redraw at 60x20"; done
i=0; until screen | head -n 2 | grep -qF "Heads"; do sleep 0.1; i=$((i + 1)); [ $i -gt 50 ] && fail "no short title at 60x20"; done
[ "$(screen | wc -l)" -eq 20 ] || fail "pane is not 20 rows"
screen | tail -n 1 | grep -qF "quit" || fail "no key bar at 60x20"
T resize-window -t hs -x 120 -y 32
wait_for "Heads: pooled attention" 10

# s saves the view as PNG in the current directory
T send-keys -t hs s
wait_for "saved " 20
ls "$tmp"/hybridscope-heads-*.png >/dev/null 2>&1 || fail "no PNG saved"

# q quits: exit 0, terminal restored (the shell prompt is back)
T send-keys -t hs q
i=0; until screen | grep -qE '^EXIT=[0-9]+'; do sleep 0.1; i=$((i + 1)); [ $i -gt 300 ] && fail "the tui did not quit"; done
screen | grep -qE '^EXIT=0$' || fail "tui exited non-zero: $(screen | grep -E '^EXIT=')"
screen | grep -q '^hs\$' || fail "no shell prompt after quitting"
echo "tui: 6 views, 27 knob keys, help, resize, save and quit ok"
