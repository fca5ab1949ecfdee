# Sourced by the scripts that take a kept run's calls (ship_family.sh, ship_variant.sh,
# keep_train_state.sh): where call N is kept, and the checks of a FIRST..LAST range. Needs $root
# (the repository root) and $me (the script's name, for its messages).

# call N's folder: .train-state/callN (unpack_call.sh's) or, in a fresh checkout, train-state/callN
src_of() { if [ -d "$root/.train-state/call$1/logs" ]; then echo "$root/.train-state/call$1";
           elif [ -d "$root/train-state/call$1/logs" ]; then echo "$root/train-state/call$1"; fi; }

# digits, or exit 2 naming the argument
need_call_number() {
    case $1 in ''|*[!0-9]*) echo "$me: call number: expected digits, got '$1'" >&2; exit 2 ;; esac
}

# FIRST and LAST numbers, FIRST <= LAST, and every call between them kept, or exit
need_call_range() {
    need_call_number "$1"; need_call_number "$2"
    [ "$1" -le "$2" ] || { echo "$me: FIRST $1 is after LAST $2" >&2; exit 2; }
    local n
    for n in $(seq "$1" "$2"); do
        [ -n "$(src_of "$n")" ] || { echo "$me: call $n: neither .train-state/call$n nor train-state/call$n" >&2; exit 1; }
    done
}
