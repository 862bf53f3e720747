#!/usr/bin/env bash
# Builds BeaconFuzz with libFuzzer + AddressSanitizer and fuzzes for N seconds.
#
#   Fuzz/run.sh [SECONDS] [extra libFuzzer flags…]     (SECONDS defaults to 300)
#
# The corpus grows in Fuzz/corpus/ (not in git), seeded from Fuzz/seeds/;
# a crashing input lands in Fuzz/artifacts/. Exits non-zero if libFuzzer found one.
#
# Why `--sanitize=fuzzer` and not `-Xswiftc -sanitize=fuzzer`: SwiftPM (6.x, Linux)
# links executables with `--defsym main=<Module>_main`, a symbol that a
# `-parse-as-library` fuzz target never defines, so the -Xswiftc form fails to
# link. With SwiftPM's own --sanitize=fuzzer it skips that rename and libFuzzer's
# main is the program's entry point.
set -euo pipefail
cd "$(dirname "$0")"

seconds="${1:-300}"
shift || true

swift build -c release --scratch-path .build \
    --sanitize=fuzzer --sanitize=address -Xswiftc -parse-as-library
fuzzer="$(swift build -c release --scratch-path .build \
    --sanitize=fuzzer --sanitize=address -Xswiftc -parse-as-library --show-bin-path)/BeaconFuzz"

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
