import BeaconCore
import BeaconEvaluation

/// Renders evaluations as a side-by-side table or as JSON.
enum EvaluationReport {
    static func table(_ e: SimulationEvaluation) -> String {
        let methods = [e.beacond] + e.baselines
        func venueRow(_ label: String, _ figure: (VenueScore) -> String) -> [String] { [label] + methods.map { figure($0.venues) } + ["-"] }
        func bandRow(_ label: String, _ figure: (BandScore) -> String) -> [String] {
            [label] + methods.map { figure($0.bands) } + [figure(e.standAverage)]
        }
        var rows: [[String]] = [[""] + methods.map(\.name) + [StandAverageLabel.column]]
        rows.append(venueRow("nearest-venue accuracy (standing)") { percent($0.accuracy) })
        rows.append(venueRow("time to correct venue, median") { seconds($0.medianTimeToCorrect) })
        rows.append(venueRow("time to correct venue, worst") { seconds($0.worstTimeToCorrect) })
        rows.append(venueRow("spurious switches") { String($0.spuriousSwitches) })
        rows.append(venueRow("all switches") { String($0.switches) })
        rows.append(bandRow("proximity-band accuracy (standing)") { percent($0.bandAccuracy) })
        rows.append(bandRow("median distance error (standing)") { metres($0.medianError) })
        rows.append(bandRow("accuracy coverage (standing)") { percent($0.coverage) })
        var lines = [
            "scenario \(e.scenarioName): \(seconds(e.duration)) simulated, \(e.advertisements) advertisements received",
            render(rows), StandAverageLabel.footnote,
            "region enter latency: \(latencies(e.regions.enterLatencies)); exit latency: \(latencies(e.regions.exitLatencies)); "
                + "spurious region events: \(e.regions.spuriousEvents)",
        ]
        lines.append(
            "listener stationary: \(percent(e.stationaryStanding)) of standing time, \(percent(e.stationaryWalking)) of walking time")
        lines.append("(the baselines have no regions; they answer from the same advertisements with no margin or dwell)")
        return lines.joined(separator: "\n")
    }

    static func table(_ e: TraceEvaluation, file: String) -> String {
        let methods =
            [("beacond", e.beacond)] + BaselineKinds.all.map { ($0.label, e.baselines[$0.kind] ?? BandScore()) }
            + [(StandAverageLabel.column, e.standAverage)]
        var rows: [[String]] = [[""] + methods.map(\.0)]
        rows.append(["band accuracy"] + methods.map { percent($0.1.bandAccuracy) })
        rows.append(["median distance error"] + methods.map { metres($0.1.medianError) })
        rows.append(["band switches"] + methods.map { String($0.1.switches) })
        let beacons = Set(methods.flatMap(\.1.switchesPerBeacon.keys)).sorted()
        if beacons.count > 1 {
            for beacon in beacons { rows.append(["  \(beacon)"] + methods.map { String($0.1.switchesPerBeacon[beacon] ?? 0) }) }
        }
        rows.append(["accuracy coverage (|error| <= accuracy)"] + methods.map { percent($0.1.coverage) })
        rows.append(["  each true distance weighted equally"] + methods.map { percent($0.1.coverageByDistance) })
        rows.append(["accuracy / distance, median"] + methods.map { ratio($0.1.medianRelativeAccuracy) })
        rows.append(["  needed to cover 68% of this file"] + methods.map { ratio($0.1.relativeErrorAtOneSigma) })
        rows.append(["stationary (share of rows)"] + methods.map { $0.0 == "beacond" ? percent($0.1.stationaryShare) : "-" })
        rows.append(["hand-held model (share of rows)"] + methods.map { $0.0 == "beacond" ? percent($0.1.handHeldShare) : "-" })
        rows.append(["nearest venue right"] + methods.map { $0.0 == "beacond" ? venueShare(e.venues) : "-" })
        return "trace \(file): \(e.rows) rows\n" + render(rows) + "\n" + StandAverageLabel.footnote
    }

    /// The band figures every method and the reference share, in traces and scenarios alike.
    private static func bandFigures(_ s: BandScore) -> [String: JSONValue] {
        [
            "band_accuracy": JSONValue(s.bandAccuracy), "median_distance_error_m": JSONValue(s.medianError),
            "accuracy_coverage": JSONValue(s.coverage),
        ]
    }

    static func json(_ e: SimulationEvaluation) -> String {
        func method(_ m: SimulationEvaluation.Method) -> JSONValue {
            .object(
                bandFigures(m.bands).merging([
                    "name": .string(m.name),
                    "nearest_venue_accuracy": JSONValue(m.venues.accuracy),
                    "time_to_correct_median_s": JSONValue(m.venues.medianTimeToCorrect?.seconds),
                    "time_to_correct_worst_s": JSONValue(m.venues.worstTimeToCorrect?.seconds),
                    "times_to_correct_s": .array(m.venues.timesToCorrect.map { JSONValue($0?.seconds) }),
                    "spurious_switches": .int(m.venues.spuriousSwitches),
                    "switches": .int(m.venues.switches),
                ]) { $1 })
        }
        let document: JSONValue = [
            "scenario": .string(e.scenarioName),
            "duration_s": .double(e.duration.seconds),
            "advertisements": .int(e.advertisements),
            "listener_stationary_standing": JSONValue(e.stationaryStanding),
            "listener_stationary_walking": JSONValue(e.stationaryWalking),
            "beacond": method(e.beacond),
            "baselines": .array(e.baselines.map(method)),
            "reference": [StandAverageLabel.key: .object(bandFigures(e.standAverage))],
            "regions": [
                "enter_latencies_s": .array(e.regions.enterLatencies.map { .double($0.seconds) }),
                "exit_latencies_s": .array(e.regions.exitLatencies.map { .double($0.seconds) }),
                "spurious_events": .int(e.regions.spuriousEvents),
            ],
        ]
        return document.text
    }

    static func json(_ e: TraceEvaluation, file: String) -> String {
        func score(_ s: BandScore) -> [String: JSONValue] {
            bandFigures(s).merging([
                "band_switches": .int(s.switches),
                "band_switches_per_beacon": .array(
                    s.switchesPerBeacon.sorted { $0.key < $1.key }.map { beacon, switches in
                        [
                            "uuid": .string(beacon.uuid.uuidString), "major": .int(Int(beacon.major)),
                            "minor": .int(Int(beacon.minor)), "band_switches": .int(switches),
                        ]
                    }),
                "accuracy_coverage_by_distance": JSONValue(s.coverageByDistance),
                "relative_accuracy_median": JSONValue(s.medianRelativeAccuracy),
                "relative_error_p68": JSONValue(s.relativeErrorAtOneSigma),
            ]) { $1 }
        }
        var baselines: [String: JSONValue] = [:]
        for kind in BaselineKinds.all { baselines[kind.key] = .object(score(e.baselines[kind.kind] ?? BandScore())) }
        var beacond = score(e.beacond)
        beacond["stationary_share"] = JSONValue(e.beacond.stationaryShare)
        beacond["hand_held_share"] = JSONValue(e.beacond.handHeldShare)
        beacond["nearest_venue_accuracy"] = JSONValue(e.venues.accuracy)
        beacond["nearest_venue_rows_scored"] = .int(e.venues.scoredRows)
        let document: JSONValue = [
            "trace": .string(file), "rows": .int(e.rows), "beacond": .object(beacond), "baselines": .object(baselines),
            "reference": [StandAverageLabel.key: .object(score(e.standAverage))],
        ]
        return document.text
    }

    // MARK: Formatting

    private enum BaselineKinds {
        static let all: [(kind: BaselineRanger.Kind, label: String, key: String)] = [
            (.raw, "raw RSSI", "raw"), (.runningAverage, "20 s average", "average_20s"),
        ]
    }

    /// The hindsight reference: beside the baselines, never one of them.
    private enum StandAverageLabel {
        static let column = "stand average *"
        static let key = "stand_average"
        static let footnote =
            "* a reference, not a baseline: the mean RSSI since the true distance last changed. It knows when the "
            + "listener moved, as no ranger can: what a filter that saw every move at once and then averaged would give."
    }

    private static func render(_ rows: [[String]]) -> String {
        let widths = (0..<rows[0].count).map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { index, cell in
                let padding = String(repeating: " ", count: widths[index] - cell.count)
                return index == 0 ? cell + padding : padding + cell
            }.joined(separator: "   ")
        }.joined(separator: "\n")
    }

    private static func percent(_ value: Double?) -> String { value.map { format($0 * 100, 1) + "%" } ?? "-" }
    private static func ratio(_ value: Double?) -> String { value.map { format($0, 2) } ?? "-" }

    private static func venueShare(_ score: TraceVenueScore) -> String {
        score.accuracy.map { "\(percent($0)) of \(score.scoredRows) rows" } ?? "one venue"
    }
    private static func metres(_ value: Double) -> String { value.isFinite ? format(value, 3) + " m" : "-" }
    private static func seconds(_ value: Duration?) -> String { value.map { format($0.seconds, 1) + " s" } ?? "never" }

    private static func latencies(_ values: [Duration]) -> String {
        guard !values.isEmpty else { return "none" }
        let sorted = values.sorted()
        return "median \(seconds(sorted[sorted.count / 2])), worst \(seconds(sorted.last))"
    }

    static func format(_ value: Double, _ decimals: Int) -> String { value.decimals(decimals) }
}
