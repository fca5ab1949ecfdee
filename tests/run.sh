#!/usr/bin/env bash
# Runs the C unit tests (build/hs_tests) and the command-line tests (tests/cli/*.sh), then
# prints one closing line "N passed, N failed, N skipped". A CLI test passes with exit 0,
# is skipped with exit 77 (its last line says why), and fails otherwise.
set -u
cd "$(dirname "$0")/.."
BUILD=${HS_BUILD:-build}
FILTER=${1:-}
export HS_BIN="$PWD/$BUILD/hybridscope" HS_BUILD="$BUILD" HS_ROOT="$PWD"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
passed=0; failed=0; skipped=0
log=$(mktemp)
"$BUILD/hs_tests" "$FILTER" | tee "$log"
read -r p f s < <(tail -n 1 "$log" | sed -E 's/([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped/\1 \2 \3/')
if ! [[ "${p:-x}" =~ ^[0-9]+$ ]]; then echo "FAIL hs_tests: runner crashed"; p=0; f=1; s=0; fi
passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
for t in tests/cli/*.sh; do
    [ -e "$t" ] || continue
    name=$(basename "$t" .sh)
    if [ -n "$FILTER" ] && [[ "$name" != *"$FILTER"* ]]; then continue; fi
    start=$(date +%s%N)
    out=$(bash "$t" 2>&1); rc=$?
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    if [ $rc -eq 0 ]; then passed=$((passed + 1)); echo "ok   cli/$name ($ms ms)"
    elif [ $rc -eq 77 ]; then skipped=$((skipped + 1)); echo "skip cli/$name: $(printf '%s\n' "$out" | tail -n 1)"
    else failed=$((failed + 1)); echo "FAIL cli/$name ($ms ms):"; printf '%s\n' "$out" | tail -n 20 | sed 's/^/    /'; fi
done
rm -f "$log"
echo "$passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]
