import BeaconTestSupport
import Foundation
import Testing

/// The scripts behind the README's ranging tables report what `beacond
/// evaluate` says: a renamed JSON key or a wrong seed would otherwise show
/// only when someone next reran them.
@Suite struct EvaluationScriptsTests {
    /// beacond's own figures from `evaluate --json`.
    static func beacondFigures(_ json: String) throws -> [String: Any] {
        let report = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        return try #require(report["beacond"] as? [String: Any])
    }

    /// A script's table row after its name, cut into the cells its columns of two or more spaces separate.
    static func cells(_ row: Substring, after name: String) -> [String] {
        row.dropFirst(name.count).split(separator: "  ", omittingEmptySubsequences: true).map { $0.trimmingCharacters(in: .whitespaces) }
    }

    /// `scripts/ranging-cafes.py` with one seed: its row for `busy` holds the
    /// figures `evaluate --json` gives for `busy` with `seed: 1`.
    @Test func theCafesScriptReportsWhatEvaluateSaysForThatSeed() async throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let shipped = try String(contentsOfFile: TestSupport.repository("scenarios/busy.yaml"), encoding: .utf8)
        let seeded = shipped.replacing(/^seed: .*$/.anchorsMatchLineEndings(), with: "seed: 1")
        #expect(seeded != shipped)
        let scenario = directory.appendingPathComponent("busy-1.yaml").path
        try Data(seeded.utf8).write(to: URL(fileURLWithPath: scenario))
        let direct = try await TestSupport.run(
            TestSupport.product("beacond"),
            ["evaluate", "--source", "simulate:\(scenario)", "--config", TestSupport.repository("beacons.yaml"), "--json"])
        #expect(direct.status == 0, "\(direct.stderr)")
        let beacond = try Self.beacondFigures(direct.stdout)
        let venue = try #require(beacond["nearest_venue_accuracy"] as? Double)
        let median = try #require(beacond["median_distance_error_m"] as? Double)

        let script = try await TestSupport.run(
            "/usr/bin/env",
            ["python3", TestSupport.repository("scripts/ranging-cafes.py"), "--beacond", TestSupport.product("beacond"), "--seeds", "1", "busy"])
        #expect(script.status == 0, "\(script.stderr)")
        let row = try #require(script.stdout.split(separator: "\n").first { $0.hasPrefix("busy ") }, "\(script.stdout)")
        // "busy   86.0 / 86.8 / 77.2, 1 of 1   80.0 / … (77.8)   1.251 / … (1.164)   10.5 / …   72.3"
        let cells = Self.cells(row, after: "busy")
        #expect(cells.count == 5, "\(cells)")
        #expect(cells[0].hasPrefix(String(format: "%.1f / ", venue * 100)), "\(cells[0]) against \(venue)")
        #expect(cells[2].hasPrefix(String(format: "%.3f / ", median)), "\(cells[2]) against \(median)")
        #expect(cells[2].hasSuffix(")"), "the stand average in brackets: \(cells[2])")
    }

    /// `scripts/ranging-walks.py`'s stands with one seed and the trace kept:
    /// its row holds what `evaluate --trace --json` gives on that trace.
    @Test func theStandsScriptReportsWhatEvaluateSaysOnTheTraceItWrote() async throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let script = try await TestSupport.run(
            "/usr/bin/env",
            [
                "python3", TestSupport.repository("scripts/ranging-walks.py"), "--beacond", TestSupport.product("beacond"),
                "--stands-only", "--receivers", "10hz", "--seeds", "1", "--keep", directory.path,
            ])
        #expect(script.status == 0, "\(script.stderr)")
        let row = try #require(script.stdout.split(separator: "\n").first { $0.hasPrefix("10hz ") }, "\(script.stdout)")
        let direct = try await TestSupport.run(
            TestSupport.product("beacond"), ["evaluate", "--trace", directory.appendingPathComponent("stands-10hz-s1.csv").path, "--json"])
        #expect(direct.status == 0, "\(direct.stderr)")
        let beacond = try Self.beacondFigures(direct.stdout)
        let median = try #require(beacond["median_distance_error_m"] as? Double)
        let bands = try #require(beacond["band_accuracy"] as? Double)
        // "10hz   0.504 / 0.756 / 0.530, 1 of 1 (0.558)   83.6 / 72.5 / 84.8, 1 of 1 (83.7)   59.6 (55-64)"
        let cells = Self.cells(row, after: "10hz")
        #expect(cells.count == 3, "\(cells)")
        #expect(cells[0].hasPrefix(String(format: "%.3f / ", median)), "\(cells[0]) against \(median)")
        #expect(cells[1].hasPrefix(String(format: "%.1f / ", bands * 100)), "\(cells[1]) against \(bands)")
    }

    /// `scripts/make-trace.py` turns `beacond scan --json` lines and a list
    /// of stands into a trace `evaluate` reads: the stand's distance inside a
    /// stand, a walk's in between, 127 for a sighting without RSSI, times from
    /// the recording's first sighting whichever beacon it is of.
    @Test func aSiteRecordingBecomesATrace() async throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let uuid = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
        var lines: [String] = []
        for step in 0..<100 {  // 10 s at 10 Hz; minor 2 heard first, once
            let time = 1_700_000_000_000_000 + step * 100_000
            if step == 0 { lines.append(#"{"time_us":\#(time - 50_000),"uuid":"\#(uuid)","major":1,"minor":2,"measured_power":-59,"rssi":-80}"#) }
            let rssi = step == 30 ? "" : #","rssi":\#(step < 50 ? -60 : -70)"#
            lines.append(#"{"time_us":\#(time),"uuid":"\#(uuid.lowercased())","major":1,"minor":1,"measured_power":-59\#(rssi)}"#)
        }
        let sightings = directory.appendingPathComponent("site.jsonl").path
        let stands = directory.appendingPathComponent("stands.csv").path
        try Data(lines.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: sightings))
        try Data("start_s,end_s,distance_m\n0,4,1.0\n6,9,3.0\n".utf8).write(to: URL(fileURLWithPath: stands))

        let made = try await TestSupport.run(
            "/usr/bin/env", ["python3", TestSupport.repository("scripts/make-trace.py"), sightings, stands, "--beacon", "\(uuid)/1/1"])
        #expect(made.status == 0, "\(made.stderr)")
        let rows = made.stdout.split(separator: "\n").map(String.init)
        #expect(rows.first == "time_ms,uuid,major,minor,rssi,measured_power,true_distance_m")
        // The first sighting (minor 2) is at 0; minor 1 starts 50 ms later and
        // is kept from 0.05 s to 9 s: 90 rows after the header.
        #expect(rows.count == 91, "\(rows.count) rows")
        #expect(rows[1] == "50,\(uuid),1,1,-60,-59,1.000")
        #expect(rows.contains("3050,\(uuid),1,1,127,-59,1.000"), "no reading")
        #expect(rows.contains("5050,\(uuid),1,1,-70,-59,2.050"), "a walk from 1 m (4 s) to 3 m (6 s)")
        #expect(rows.last == "8950,\(uuid),1,1,-70,-59,3.000")
        #expect(made.stderr.contains("stand 0-4 s at 1 m, \(uuid)/1/1: 39 rows, median RSSI -60 dBm"), "\(made.stderr)")

        let trace = directory.appendingPathComponent("site.csv").path
        try Data(made.stdout.utf8).write(to: URL(fileURLWithPath: trace))
        let evaluated = try await TestSupport.run(TestSupport.product("beacond"), ["evaluate", "--trace", trace, "--json"])
        #expect(evaluated.status == 0, "\(evaluated.stderr)")
        #expect(evaluated.stderr.isEmpty, "no warning: \(evaluated.stderr)")
    }

    /// Several beacons, each with its own distance (a column per beacon in
    /// the stands): two counters that swap halfway, so the nearest venue
    /// changes and `evaluate` scores the choice. One `distance_m` for both is
    /// refused: equal distances would make the score mean nothing.
    @Test func aSiteRecordingWithTwoBeaconsScoresTheNearestVenue() async throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let uuid = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
        var lines: [String] = []
        for step in 0..<600 {  // 60 s at 10 Hz each; 1 m and 4 m, swapped at 30 s
            let time = 1_700_000_000_000_000 + step * 100_000
            let near = step % 3 == 0 ? -61 : -59, far = step % 3 == 0 ? -72 : -71
            let (first, second) = step < 300 ? (near, far) : (far, near)
            lines.append(#"{"time_us":\#(time),"uuid":"\#(uuid)","major":1,"minor":1,"measured_power":-59,"rssi":\#(first)}"#)
            lines.append(#"{"time_us":\#(time + 50_000),"uuid":"\#(uuid)","major":1,"minor":2,"measured_power":-59,"rssi":\#(second)}"#)
        }
        let sightings = directory.appendingPathComponent("site.jsonl").path
        try Data(lines.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: sightings))
        let stands = directory.appendingPathComponent("stands.csv").path
        let shared = directory.appendingPathComponent("shared.csv").path
        try Data("start_s,end_s,\(uuid)/1/1,\(uuid)/1/2\n0,29,1.0,4.0\n31,60,4.0,1.0\n".utf8).write(to: URL(fileURLWithPath: stands))
        try Data("start_s,end_s,distance_m\n0,60,1.0\n".utf8).write(to: URL(fileURLWithPath: shared))

        let refused = try await TestSupport.run("/usr/bin/env", ["python3", TestSupport.repository("scripts/make-trace.py"), sightings, shared])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("2 beacons heard and one distance_m for all"), "\(refused.stderr)")

        let made = try await TestSupport.run("/usr/bin/env", ["python3", TestSupport.repository("scripts/make-trace.py"), sightings, stands])
        #expect(made.status == 0, "\(made.stderr)")
        #expect(made.stdout.contains("\n0,\(uuid),1,1,-61,-59,1.000\n"))
        #expect(made.stdout.contains("\n50,\(uuid),1,2,-72,-59,4.000\n"))
        #expect(made.stdout.contains("\n30050,\(uuid),1,2,-61,-59,2.425\n"), "halfway through the swap")
        let trace = directory.appendingPathComponent("site.csv").path
        try Data(made.stdout.utf8).write(to: URL(fileURLWithPath: trace))
        let evaluated = try await TestSupport.run(TestSupport.product("beacond"), ["evaluate", "--trace", trace, "--json"])
        #expect(evaluated.status == 0, "\(evaluated.stderr)")
        let beacond = try Self.beacondFigures(evaluated.stdout)
        let scored = try #require(beacond["nearest_venue_rows_scored"] as? Int)
        let right = try #require(beacond["nearest_venue_accuracy"] as? Double)
        #expect(scored > 1_000, "\(scored) rows scored")
        // Right but for the seconds it takes to follow the swap.
        #expect(right > 0.85 && right < 1, "nearest venue right on \(right)")
    }
}
