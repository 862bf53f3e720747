#!/usr/bin/env bash
# Builds BeaconFuzz with libFuzzer + AddressSanitizer and fuzzes for N seconds.
#
#   Fuzz/run.sh [SECONDS] [extra libFuzzer flags…]     (SECONDS defaults to 300)
#
# The corpus grows in Fuzz/corpus/ (not in git), seeded from Fuzz/seeds/;
# a crashing input lands in Fuzz/artifacts/. Exits non-zero if libFuzzer found one.
#
# The flags, as checked with Swift 6.3.1 on Linux:
# - `--sanitize=fuzzer`: SwiftPM links executables with `--defsym main=<Module>_main`,
#   a symbol a `-parse-as-library` fuzz target never defines, so `-Xswiftc
#   -sanitize=fuzzer` alone fails to link; with SwiftPM's own --sanitize=fuzzer it
#   skips that rename and libFuzzer's main is the entry point.
# - `-Xswiftc -sanitize=fuzzer,address` as well: SwiftPM hands the compiler
#   `-sanitize=fuzzer -sanitize=address` as two flags and the driver keeps only the
#   last, so without this nothing (BeaconCore included) gets coverage counters and
#   libFuzzer mutates blind ("no interesting inputs … instrumented for coverage?").
#   `-sanitize-coverage=edge` is no use either: libFuzzer refuses trace-pc-guard.
# - SWIFT_BACKTRACE=enable=no: otherwise a Swift trap starts the runtime's
#   backtracer, which ASan flags inside its own crash handler (hiding the real
#   cause), and which outlives the fuzzer holding the output pipe, so this script hangs.
set -euo pipefail
cd "$(dirname "$0")"

seconds="${1:-300}"
shift || true

flags=(-c release --scratch-path .build --sanitize=fuzzer --sanitize=address
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library)
swift build "${flags[@]}"
fuzzer="$(swift build "${flags[@]}" --show-bin-path)/BeaconFuzz"
export SWIFT_BACKTRACE=enable=no

mkdir -p corpus artifacts
cp -n seeds/* corpus/ 2>/dev/null || true

log="artifacts/last-run.log"
status=0
"$fuzzer" corpus \
    -dict=beacon.dict \
    -max_total_time="$seconds" \
    -max_len=4096 \
    -timeout=10 \
    -rss_limit_mb=2048 \
    -artifact_prefix=artifacts/ \
    -print_final_stats=1 \
    "$@" 2>&1 | tee "$log" || status=$?

echo
echo "== BeaconFuzz summary (${seconds}s requested) =="
grep -E '^#[0-9]+[[:space:]]+(DONE|pulse|NEW|REDUCE|INITED)' "$log" | tail -1 || true
grep -E '^stat::' "$log" || true
echo "corpus: $(find corpus -type f | wc -l) inputs"
if grep -qE '^==[0-9]+==ERROR|deadly signal|Test unit written to' "$log"; then
    echo "CRASH found:"
    grep -E 'Test unit written to|SUMMARY' "$log" || true
    exit 1
fi
echo "no crash found"
exit "$status"
