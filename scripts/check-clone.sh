#!/usr/bin/env bash
# Checks that the repository stands on its own: clones the committed HEAD into
# an empty temporary directory (nothing beside it, so nothing outside the clone
# can be read by accident), builds there, runs the suites that read the
# recordings in Tests/Data, the scenarios, beacons.yaml and dist/, and
# reproduces one trace evaluation as docs/ranging.md shows it.
# scripts/test.sh runs it after the whole suite. It checks commits, not the
# work tree: commit first. Takes a full debug build in the clone.
set -euo pipefail
cd "$(dirname "$0")/.."

suites='RaspberryPiLogTests|BtmonCrossCheckTests|ScanCommandTests|ScenarioLoaderTests|DeploymentTests|aReplayThatEndsExitsItsRegionsAndSaysSo|SwayingListenerTests|ConfigurationLoaderTests|GeneratedAPITests'

commit=$(git rev-parse HEAD)
if [[ -n $(git status --porcelain) ]]; then
    echo "check-clone: the work tree has changes the clone will not have; checking commit $commit" >&2
fi
place=$(mktemp -d)
trap 'rm -rf "$place"' EXIT
git clone --quiet --no-checkout "$PWD" "$place/beacond"
cd "$place/beacond"
git checkout --quiet --detach "$commit"
if [[ $(ls -A "$place") != beacond ]]; then
    echo "check-clone: $place holds more than the clone" >&2
    exit 1
fi
echo "check-clone: $commit cloned into $place/beacond, nothing beside it" >&2

scripts/install-deps.sh
swift build --build-tests
swift test --skip-build --filter "$suites"
# The evaluation docs/ranging.md's first table shows, reproduced to the digit.
bands=$(.build/debug/beacond evaluate --trace Tests/Data/trace-lcn22-office-pi-to-pi4.csv --json |
    python3 -c 'import json, sys; print("%.1f" % (100 * json.load(sys.stdin)["beacond"]["band_accuracy"]))')
grep -qF "| LCN22 Pi | band accuracy | $bands % |" docs/ranging.md ||
    { echo "check-clone: beacond evaluate gives the Pi trace $bands % band accuracy; docs/ranging.md says otherwise" >&2; exit 1; }
echo "check-clone: a clone on its own builds and passes its quick checks" >&2
