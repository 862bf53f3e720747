#!/usr/bin/env python3
"""Research prototype, not part of beacond: a set-down listener model as
Bayesian online change-point detection (Adams & MacKay, "Bayesian Online
Changepoint Detection", 2007), scored like `beacond evaluate` beside raw
RSSI, the 20 s trimmed average and the stand average.

    scripts/changepoint-prototype.py [STAND-RECEIVER | TRACE.csv] ...
    scripts/changepoint-prototype.py 1hz-averaged 10hz Tests/Data/trace-lcn22-office-pi-to-pi4.csv

Stand receivers are those of scripts/ranging-walks.py (eight seeds each,
means, and on how many seeds the prototype beats both baselines).

The model: the level is constant between change points, which come at a
hazard of one per `STAND_SECONDS` (a listener stands tens of seconds to
minutes); the samples scatter about it with a spread sigma shared by all
segments and measured as the RMS of successive differences over the last
`DIFF_WINDOW` samples (the largest 5 % left out) over the square root of 2,
at least 1 dB: a level change spoils one difference only, and a receiver
that averages (iOS's one sample a second) shows its small spread. The
run-length posterior is kept to `KEEP` hypotheses, each with the count and
the winsorised sum of its samples (a packet adds at most two sigmas from
the run's mean: some receivers' packets jump by a channel's difference);
the reported level is the posterior mean. In the likelihood a packet
counts at most four sigmas from a hypothesis' mean.

It has no hand-held (swaying) model, no stationarity flag and no accuracy:
it is the piece that would replace the set-down model's Kalman filter,
CUSUMs and re-seeding (docs/ranging-tried.md, "The change-point posterior").
"""

import csv
import importlib.util
import math
import os
import random
import statistics
import sys


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STAND_SECONDS = 60.0
PRIOR_SD = 10.0  # dB: a new segment's level, before its first sample
DIFF_WINDOW = 60
KEEP = 32
WINDOW_20S = 20.0

spec = importlib.util.spec_from_file_location("walks", os.path.join(ROOT, "scripts/ranging-walks.py"))
walks = importlib.util.module_from_spec(spec)
spec.loader.exec_module(walks)


def band(distance):
    return 0 if distance < 0.5 else 1 if distance < 3 else 2


def log_sum(values):
    top = max(values)
    return top + math.log(sum(math.exp(v - top) for v in values))


def levels(times, values):
    """The posterior-mean level after each sample."""
    runs = [(0.0, 0, 0.0)]  # (log probability, count, sum) per run length
    differences, out = [], []
    last, previous = times[0], None
    for time, value in zip(times, values):
        elapsed, last = max(time - last, 1e-3), time
        if previous is not None:
            differences = (differences + [abs(value - previous)])[-DIFF_WINDOW:]
        previous = value
        if len(differences) >= 5:
            kept = sorted(differences)[: max(5, int(len(differences) * 0.95))]
            sigma = max(1.0, math.sqrt(sum(d * d for d in kept) / len(kept) / 2))
        else:
            sigma = 4.0
        hazard = min(0.5, elapsed / STAND_SECONDS)
        grown = []
        for log_p, count, total in runs:
            mean = total / count if count else value
            variance = sigma**2 * (1 + 1 / count) if count else sigma**2 + PRIOR_SD**2
            fit = -0.5 * min((value - mean) ** 2 / variance, 16.0) - 0.5 * math.log(variance)
            # Winsorised: a packet adds at most two sigmas from the run's mean to its sum.
            kept_value = min(max(value, mean - 2 * sigma), mean + 2 * sigma) if count else value
            grown.append((log_p + fit, count + 1, total + kept_value))
        change = log_sum([g[0] for g in grown]) + math.log(hazard)
        runs = [(change, 1, value)] + [(g[0] + math.log(1 - hazard), g[1], g[2]) for g in grown]
        runs = sorted(runs, key=lambda r: r[0])[-KEEP:]
        norm = log_sum([r[0] for r in runs])
        runs = [(r[0] - norm, r[1], r[2]) for r in runs]
        out.append(sum(math.exp(r[0]) * r[2] / r[1] for r in runs))
    return out


def score(rows, estimated):
    """Band accuracy (%) and median error (m): prototype, raw, 20 s average, stand average."""
    right, errors = [0] * 4, [[] for _ in range(4)]
    stand, stand_distance, recent = {}, {}, {}
    for (time, rssi, distance, beacon, power), level in zip(rows, estimated):
        if stand_distance.get(beacon) != distance:
            stand[beacon], stand_distance[beacon] = [], distance
        stand[beacon].append(rssi)
        history = recent.setdefault(beacon, [])
        history.append((time, rssi))
        while time - history[0][0] >= WINDOW_20S:
            history.pop(0)
        ordered = sorted(v for _, v in history)
        trim = len(ordered) // 10
        kept = ordered[trim : len(ordered) - trim]
        candidates = (level, rssi, sum(kept) / len(kept), sum(stand[beacon]) / len(stand[beacon]))
        for index, candidate in enumerate(candidates):
            estimate = 10 ** ((power - candidate) / 20)
            right[index] += band(estimate) == band(distance)
            errors[index].append(abs(estimate - distance))
    return [100 * r / len(rows) for r in right], [statistics.median(e) for e in errors]


def run(rows_by_beacon):
    rows, estimated = [], []
    for beacon_rows in rows_by_beacon:
        rows += beacon_rows
        estimated += levels([r[0] for r in beacon_rows], [r[1] for r in beacon_rows])
    return score(rows, estimated)


def main():
    print(f"{'':28} {'bands (%): prototype / raw / 20 s / stand average':52} median error (m): the same")
    for argument in sys.argv[1:] or ["1hz-averaged", "10hz"]:
        if argument.endswith(".csv"):
            beacons = {}
            for row in csv.DictReader(open(argument)):
                if int(row["rssi"]) in (0, 127):
                    continue
                key = (row["uuid"], row["major"], row["minor"])
                beacons.setdefault(key, []).append(
                    (int(row["time_ms"]) / 1000, float(row["rssi"]), float(row["true_distance_m"]), key, float(row["measured_power"])))
            bands, errors = run(beacons.values())
            print(f"{os.path.basename(argument)[:28]:28} {' / '.join(f'{b:.1f}' for b in bands):52} {' / '.join(f'{e:.3f}' for e in errors)}")
        else:
            scores = []
            for seed in range(1, 9):
                stands = walks.stands(argument, random.Random(f"stands-{argument}-{seed}"))
                scores.append(run([[(t / 1000, float(walks.rssi(r)), d, 0, walks.POWER) for t, r, d in stands]]))
            bands = [statistics.mean(s[0][i] for s in scores) for i in range(4)]
            errors = [statistics.mean(s[1][i] for s in scores) for i in range(4)]
            won_bands = sum(s[0][0] > max(s[0][1], s[0][2]) for s in scores)
            won_errors = sum(s[1][0] < min(s[1][1], s[1][2]) for s in scores)
            print(
                f"{argument:28} {' / '.join(f'{b:.1f}' for b in bands) + f', {won_bands} of 8':52} "
                f"{' / '.join(f'{e:.3f}' for e in errors)}, {won_errors} of 8")


if __name__ == "__main__":
    main()
