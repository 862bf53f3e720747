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
`--beacon`, only that beacon's sightings are kept.

A trace may hold several beacons, each a venue of its own for `evaluate`'s
nearest-venue score; each then needs its own distance, a column named after
it instead of `distance_m` (beacons without a column are left out):

    start_s,end_s,E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/1/1,E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/1/2
    0,60,1.0,4.5
    75,135,3.0,2.0

One `distance_m` for several beacons is refused: the score would compare
equal distances and mean nothing.

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


def beacon(text, what):
    """UUID/MAJOR/MINOR as (UUID, major, minor), or exit naming `what`."""
    parts = text.split("/")
    if len(parts) != 3 or not parts[1].isdigit() or not parts[2].isdigit():
        raise SystemExit(f"{what} {text}: expected UUID/MAJOR/MINOR, MAJOR and MINOR numbers")
    return parts[0].upper(), int(parts[1]), int(parts[2])


def read_stands(path):
    """(stands, beacons): stands as (start, end, {beacon: distance}), the
    beacon None for `distance_m`; beacons the columns name, or None for all."""
    stands = []
    with open(path, newline="") as file:
        reader = csv.DictReader(file)
        columns = [name for name in reader.fieldnames or [] if name not in ("start_s", "end_s")]
        if columns == ["distance_m"]:
            keys = {"distance_m": None}
        elif columns and "distance_m" not in columns:
            keys = {name: beacon(name, f"{path}: column") for name in columns}
        else:
            raise SystemExit(f"{path}: expected the columns start_s,end_s and either distance_m or one UUID/MAJOR/MINOR per beacon")
        for line, row in enumerate(reader, start=2):
            try:
                start, end = float(row["start_s"]), float(row["end_s"])
                distances = {key: float(row[name]) for name, key in keys.items()}
            except (KeyError, TypeError, ValueError):
                raise SystemExit(f"{path}: line {line}: expected {','.join(reader.fieldnames)} as numbers, got {row}")
            if not 0 <= start < end or min(distances.values()) < 0 or (stands and start < stands[-1][1]):
                raise SystemExit(f"{path}: line {line}: a stand must start after the one before and end after it starts")
            stands.append((start, end, distances))
    if not stands:
        raise SystemExit(f"{path}: no stands")
    return stands, (None if columns == ["distance_m"] else set(keys.values()))


def true_distance(stands, seconds, key):
    """(distance, stand): the stand's distance for `key` and the stand, a
    walk's interpolated distance between stands and None, or (None, None)
    outside them."""
    for index, (start, end, distances) in enumerate(stands):
        if start <= seconds <= end:
            return distances[key], stands[index]
        if index + 1 < len(stands) and end < seconds < stands[index + 1][0]:
            following_start, _, following = stands[index + 1]
            walked = (seconds - end) / (following_start - end)
            return distances[key] + (following[key] - distances[key]) * walked, None
    return None, None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sightings", help="the output of `beacond scan --json`")
    parser.add_argument("stands", help="start_s,end_s,distance_m rows, or start_s,end_s and a UUID/MAJOR/MINOR column per beacon")
    parser.add_argument("--beacon", help="UUID/MAJOR/MINOR: keep only this beacon's sightings")
    arguments = parser.parse_args()
    stands, columns = read_stands(arguments.stands)
    wanted = beacon(arguments.beacon, "--beacon") if arguments.beacon else None
    if wanted and columns is not None and wanted not in columns:
        raise SystemExit(f"--beacon {arguments.beacon}: {arguments.stands} has no column for it")

    rows, first, at_stand, unnamed = [], None, {}, set()
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
            if columns is not None and identity not in columns:
                unnamed.add(identity)
                continue
            seconds = (time_us - first) / 1e6
            distance, stand = true_distance(stands, seconds, None if columns is None else identity)
            if distance is None:
                continue
            rssi = sighting.get("rssi", 127)
            rows.append([round(seconds * 1000), *identity, rssi, power, f"{distance:.3f}"])
            if stand and rssi != 127:
                at_stand.setdefault((stand[0], stand[1], distance, identity), []).append(rssi)
    if not at_stand:
        raise SystemExit(f"{arguments.sightings}: no sightings" + (f" of {arguments.beacon}" if wanted else "") + " inside the stands")
    heard = sorted({tuple(row[1:4]) for row in rows})
    if columns is None and len(heard) > 1:
        raise SystemExit(f"{arguments.sightings}: {len(heard)} beacons heard and one distance_m for all; give each beacon "
                         f"its distance (a UUID/MAJOR/MINOR column in {arguments.stands}) or keep one with --beacon")
    for uuid, major, minor in sorted(unnamed):
        print(f"left out {uuid}/{major}/{minor}: no column in {arguments.stands}", file=sys.stderr)
    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(HEADER)
    writer.writerows(rows)
    for (start, end, distance, (uuid, major, minor)), values in sorted(at_stand.items()):
        print(f"stand {start:g}-{end:g} s at {distance:g} m, {uuid}/{major}/{minor}: {len(values)} rows, "
              f"median RSSI {statistics.median(values):g} dBm", file=sys.stderr)


if __name__ == "__main__":
    main()
