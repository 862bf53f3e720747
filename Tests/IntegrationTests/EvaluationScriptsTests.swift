import BeaconTestSupport
import Foundation
import Testing

/// The scripts behind the README's ranging tables report what `beacond
/// evaluate` says: a renamed JSON key or a wrong seed would otherwise show
/// only when someone next reran them.
@Suite struct EvaluationScriptsTests {
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
        let report = try #require(try JSONSerialization.jsonObject(with: Data(direct.stdout.utf8)) as? [String: Any])
        let beacond = try #require(report["beacond"] as? [String: Any])
        let venue = try #require(beacond["nearest_venue_accuracy"] as? Double)
        let median = try #require(beacond["median_distance_error_m"] as? Double)

        let script = try await TestSupport.run(
            "/usr/bin/env",
            ["python3", TestSupport.repository("scripts/ranging-cafes.py"), "--beacond", TestSupport.product("beacond"), "--seeds", "1", "busy"])
        #expect(script.status == 0, "\(script.stderr)")
        let row = try #require(script.stdout.split(separator: "\n").first { $0.hasPrefix("busy ") }, "\(script.stdout)")
        // "busy   86.0 / 86.8 / 77.2, 1 of 1   80.0 / … (77.8)   1.251 / … (1.164)   10.5 / …   72.3"
        let cells = row.dropFirst("busy".count).split(separator: "  ", omittingEmptySubsequences: true)
            .map { $0.trimmingCharacters(in: .whitespaces) }
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
        let report = try #require(try JSONSerialization.jsonObject(with: Data(direct.stdout.utf8)) as? [String: Any])
        let beacond = try #require(report["beacond"] as? [String: Any])
        let median = try #require(beacond["median_distance_error_m"] as? Double)
        let bands = try #require(beacond["band_accuracy"] as? Double)
        // "10hz   0.504 / 0.756 / 0.530, 1 of 1 (0.558)   83.6 / 72.5 / 84.8, 1 of 1 (83.7)   59.6 (55-64)"
        let cells = row.dropFirst("10hz".count).split(separator: "  ", omittingEmptySubsequences: true)
            .map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(cells.count == 3, "\(cells)")
        #expect(cells[0].hasPrefix(String(format: "%.3f / ", median)), "\(cells[0]) against \(median)")
        #expect(cells[1].hasPrefix(String(format: "%.1f / ", bands * 100)), "\(cells[1]) against \(bands)")
    }
}
