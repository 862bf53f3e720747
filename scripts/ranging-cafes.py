#!/usr/bin/env python3
"""The simulated cafés over many seeds: beacond beside the strongest-raw-RSSI
and 20 s-average baselines, as means over seeds and as how many seeds
beacond beats both on. In brackets, the stand average: `beacond evaluate`'s
reference, the mean RSSI since the true distance last changed, which knows
when the listener moved as no ranger can.

    scripts/ranging-cafes.py [--beacond .build/debug/beacond] [--seeds 8] [SCENARIO ...]

One seed is one walk with one draw of shadowing and fading, and a single
walk moves a figure by points either way (docs/ranging.md), so a change to
ranging is judged here on several. Each scenario of scenarios/ (or those
named) is copied to a temporary directory with its `seed:` line replaced by
1, 2, … and scored with `beacond evaluate --source simulate:FILE --json`
against the repository's beacons.yaml, as the README's single-seed figures
are; the last column is the share of standing time beacond's distance was
within its accuracy (an honest one sigma covers about 68 %). Nothing is
fitted; two runs print the same table.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCENARIOS = os.path.join(ROOT, "scenarios")
# (JSON key, column title, scale, whether more is better)
FIGURES = [
    ("nearest_venue_accuracy", "venue right (standing, %)", 100, True),
    ("band_accuracy", "bands (standing, %)", 100, True),
    ("median_distance_error_m", "median error (standing, m)", 1, False),
    ("spurious_switches", "spurious venue switches", 1, False),
]


def evaluate(beacond, scenario):
    result = subprocess.run(
        [beacond, "evaluate", "--source", f"simulate:{scenario}", "--json"], cwd=ROOT, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"{beacond} evaluate --source simulate:{scenario}: {result.stderr.strip()}")
    report = json.loads(result.stdout)
    baselines = {baseline["name"]: baseline for baseline in report["baselines"]}
    return [report["beacond"], baselines["strongest raw RSSI"], baselines["20 s running average"],
            report["reference"]["stand_average"]]


def seeded(path, seed, directory):
    if not os.path.exists(path):
        raise SystemExit(f"{path}: no such scenario (the names are those of scenarios/*.yaml)")
    text = open(path).read()
    if not re.search(r"^seed: .*$", text, flags=re.MULTILINE):
        raise SystemExit(f"{path}: no 'seed:' line to replace")
    copy = os.path.join(directory, f"{os.path.basename(path)[:-5]}-seed{seed}.yaml")
    with open(copy, "w") as file:
        file.write(re.sub(r"^seed: .*$", f"seed: {seed}", text, flags=re.MULTILINE))
    return copy


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--beacond", default=os.path.join(ROOT, ".build/debug/beacond"))
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("scenarios", nargs="*")
    arguments = parser.parse_args()
    if arguments.seeds < 1:
        parser.error("--seeds must be 1 or more")
    names = arguments.scenarios or sorted(name[:-5] for name in os.listdir(SCENARIOS) if name.endswith(".yaml"))
    print(f"{arguments.seeds} seeds each; every cell is beacond / raw / 20 s average (means), "
          "then on how many seeds beacond beats both baselines; "
          "in brackets the stand average (a reference that knows when the listener moved: evaluate's footnote)")
    print(f"{'scenario':16}" + "".join(f"{title:44}" for _, title, _, _ in FIGURES) + "beacond's coverage (%)")
    with tempfile.TemporaryDirectory() as directory:
        for name in names:
            runs = [evaluate(arguments.beacond, seeded(os.path.join(SCENARIOS, f"{name}.yaml"), seed, directory))
                    for seed in range(1, arguments.seeds + 1)]
            cells = []
            for key, _, scale, more_is_better in FIGURES:
                means = [statistics.mean(run[index][key] * scale for run in runs) for index in range(3)]
                better = (lambda a, b: a > b) if more_is_better else (lambda a, b: a < b)
                won = sum(better(run[0][key], run[1][key]) and better(run[0][key], run[2][key]) for run in runs)
                digits = 3 if scale == 1 and key.endswith("_m") else 1
                cell = " / ".join(f"{mean:.{digits}f}" for mean in means) + f", {won} of {len(runs)}"
                if runs[0][3].get(key) is not None:
                    cell += f" ({statistics.mean(run[3][key] * scale for run in runs):.{digits}f})"
                cells.append(cell)
            coverage = statistics.mean(100 * run[0]["accuracy_coverage"] for run in runs)
            print(f"{name:16}" + "".join(f"{cell:44}" for cell in cells) + f"{coverage:.1f}")


if __name__ == "__main__":
    main()
