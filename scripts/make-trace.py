#!/usr/bin/env python3
"""Turns a recording made at your own site into a trace for `beacond evaluate --trace`.

    beacond scan --source hci --json > site.jsonl        # while you stand, then walk, then stand…
    scripts/make-trace.py site.jsonl stands.csv [--beacon UUID/MAJOR/MINOR] > site.csv
    beacond evaluate --trace site.csv

`site.jsonl` is what `beacond scan --json` prints, one sighting a line (a live
source, or `--source replay:CAPTURE@max` on a btsnoop or pcapng capture).
`stands.csv` says where the receiver stood, timed from the first sighting
(a stopwatch started with the recording):

    start_s,end_s,distance_m
    0,60,1.0
    75,135,3.0

Rows inside a stand get its distance; rows between two stands get the
distance interpolated along a walk at constant speed from one to the next;
rows before the first stand or after the last are left out. A sighting
without RSSI becomes 127 (no reading), as the trace format says. With
`--beacon`, only that beacon's sightings are kept (a trace may hold several:
each is a venue of its own for `evaluate`'s nearest-venue score).

For each stand and beacon it prints to stderr the rows and the median RSSI:
at a 1 m stand that median is the beacon's measured power at your site, the
`measured_power` of its venue in beacons.yaml (docs/configuration.md).
"""

import argparse
import csv
import json
import statistics
import sys

HEADER = ["time_ms", "uuid", "major", "minor", "rssi", "measured_power", "true_distance_m"]


def read_stands(path):
    stands = []
    with open(path, newline="") as file:
        for line, row in enumerate(csv.DictReader(file), start=2):
            try:
                start, end, distance = float(row["start_s"]), float(row["end_s"]), float(row["distance_m"])
            except (KeyError, TypeError, ValueError):
                raise SystemExit(f"{path}: line {line}: expected start_s,end_s,distance_m as numbers, got {row}")
            if not 0 <= start < end or distance < 0 or (stands and start < stands[-1][1]):
                raise SystemExit(f"{path}: line {line}: a stand must start after the one before and end after it starts")
            stands.append((start, end, distance))
    if not stands:
        raise SystemExit(f"{path}: no stands")
    return stands


def true_distance(stands, seconds):
    """(distance, stand): the stand's distance and the stand, a walk's
    interpolated distance between stands and None, or (None, None) outside them."""
    for index, (start, end, distance) in enumerate(stands):
        if start <= seconds <= end:
            return distance, stands[index]
        if index + 1 < len(stands) and end < seconds < stands[index + 1][0]:
            following_start, _, following = stands[index + 1]
            return distance + (following - distance) * (seconds - end) / (following_start - end), None
    return None, None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sightings", help="the output of `beacond scan --json`")
    parser.add_argument("stands", help="start_s,end_s,distance_m rows")
    parser.add_argument("--beacon", help="UUID/MAJOR/MINOR: keep only this beacon's sightings")
    arguments = parser.parse_args()
    stands = read_stands(arguments.stands)
    wanted = None
    if arguments.beacon:
        parts = arguments.beacon.split("/")
        if len(parts) != 3 or not parts[1].isdigit() or not parts[2].isdigit():
            raise SystemExit(f"--beacon {arguments.beacon}: expected UUID/MAJOR/MINOR, MAJOR and MINOR numbers")
        wanted = (parts[0].upper(), int(parts[1]), int(parts[2]))

    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(HEADER)
    first, at_stand = None, {}
    with open(arguments.sightings) as file:
        for line, text in enumerate(file, start=1):
            if not text.strip():
                continue
            try:
                sighting = json.loads(text)
                time_us, identity = sighting["time_us"], (sighting["uuid"].upper(), sighting["major"], sighting["minor"])
                power = sighting["measured_power"]
            except (ValueError, KeyError, AttributeError, TypeError):
                raise SystemExit(f"{arguments.sightings}: line {line}: not a sighting of `beacond scan --json`")
            first = time_us if first is None else first  # the recording's start, whichever beacon
            if wanted and identity != wanted:
                continue
            seconds = (time_us - first) / 1e6
            distance, stand = true_distance(stands, seconds)
            if distance is None:
                continue
            rssi = sighting.get("rssi", 127)
            writer.writerow([round(seconds * 1000), *identity, rssi, power, f"{distance:.3f}"])
            if stand and rssi != 127:
                at_stand.setdefault((stand, identity), []).append(rssi)
    if not at_stand:
        raise SystemExit(f"{arguments.sightings}: no sightings" + (f" of {arguments.beacon}" if wanted else "") + " inside the stands")
    for ((start, end, distance), (uuid, major, minor)), values in sorted(at_stand.items()):
        print(f"stand {start:g}-{end:g} s at {distance:g} m, {uuid}/{major}/{minor}: {len(values)} rows, "
              f"median RSSI {statistics.median(values):g} dBm", file=sys.stderr)


if __name__ == "__main__":
    main()
