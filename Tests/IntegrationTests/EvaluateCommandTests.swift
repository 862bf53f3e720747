import BeaconTestSupport
import Foundation
import Testing

/// `beacond evaluate --trace` as a person runs it: the table, the JSON and the estimates file.
@Suite struct EvaluateCommandTests {
    @Test func aTraceIsScoredWithCoverageStationarityAndTheNearestVenue() async throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // Two beacons, 1 m and 4 m away, alternating at 5 Hz each for 30 s.
        var text = "time_ms,uuid,major,minor,rssi,measured_power,true_distance_m\n"
        for step in 0..<300 {
            let minor = step % 2 + 1
            let (rssi, distance) = minor == 1 ? (-59 - step % 3, 1.0) : (-71 - step % 3, 4.0)
            text += "\(step * 100),E2C56DB5-DFFB-48D2-B060-D0F5A71096E0,7,\(minor),\(rssi),-59,\(distance)\n"
        }
        let trace = directory.appendingPathComponent("two.csv").path
        let estimates = directory.appendingPathComponent("out.csv").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: trace))
        let missing = directory.appendingPathComponent("none.yaml").path

        let table = try await TestSupport.run(
            TestSupport.product("beacond"), ["evaluate", "--trace", trace, "--config", missing, "--estimates", estimates])
        #expect(table.status == 0, "\(table.stderr)")
        #expect(table.stdout.contains("accuracy coverage"))
        #expect(table.stdout.contains("stationary (share of rows)"))
        #expect(table.stdout.contains("needed to cover 68% of this file"))
        #expect(table.stdout.contains("nearest venue right"))
        #expect(table.stdout.contains("stand average *"))
        #expect(table.stdout.contains("* a reference, not a baseline"))
        #expect(table.stdout.contains("of 299 rows"))
        // Band switches per beacon (SPEC section 5) under the total, when the trace has more than one.
        #expect(table.stdout.contains("\n  E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/7/1 "), "\(table.stdout)")
        #expect(table.stdout.contains("\n  E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/7/2 "))
        let written = try String(contentsOfFile: estimates, encoding: .utf8).split(separator: "\n")
        #expect(written.count == 301)
        #expect(written[0].hasSuffix(",stationary,nearest_venue,venue_margin,listener_stationary"))
        #expect(written[300].contains(",E2C56DB5-DFFB-48D2-B060-D0F5A71096E0-7-1,"))

        let swayed = try await TestSupport.run(
            TestSupport.product("beacond"), ["evaluate", "--trace", trace, "--config", missing, "--sway", "3:8"])
        #expect(swayed.status == 0, "\(swayed.stderr)")
        #expect(swayed.stdout != table.stdout)
        // Once a second per beacon, as iOS reports: 30 s of two beacons are 60 rows, and as many estimates.
        let perSecond = try await TestSupport.run(
            TestSupport.product("beacond"), ["evaluate", "--trace", trace, "--config", missing, "--per-second", "--estimates", estimates])
        #expect(perSecond.status == 0, "\(perSecond.stderr)")
        #expect(perSecond.stdout.contains("two.csv: 60 rows"), "\(perSecond.stdout)")
        #expect(try String(contentsOfFile: estimates, encoding: .utf8).split(separator: "\n").count == 61)
        let lonely = try await TestSupport.run(TestSupport.product("beacond"), ["evaluate", "--source", "simulate", "--per-second"])
        #expect(lonely.status != 0 && lonely.stderr.contains("--per-second goes with --trace"), "\(lonely.stderr)")
        #expect(!table.stderr.contains("goes back"))
        let lines = text.split(separator: "\n")
        let shuffled = directory.appendingPathComponent("shuffled.csv").path
        try Data(([lines[0], lines[2], lines[1]] + lines[3...]).joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: shuffled))
        let warned = try await TestSupport.run(TestSupport.product("beacond"), ["evaluate", "--trace", shuffled, "--config", missing])
        #expect(warned.status == 0, "\(warned.stderr)")
        #expect(warned.stderr.contains("shuffled.csv: line 3: time_ms goes back from 100 to 0"), "\(warned.stderr)")
        #expect(warned.stdout.contains("band accuracy"))
        // Averaged per second, rows go by the second they fall in: nothing is evaluated out of order.
        let ordered = try await TestSupport.run(
            TestSupport.product("beacond"), ["evaluate", "--trace", shuffled, "--config", missing, "--per-second"])
        #expect(ordered.status == 0 && !ordered.stderr.contains("goes back"), "\(ordered.stderr)")
        let refused = try await TestSupport.run(TestSupport.product("beacond"), ["evaluate", "--trace", trace, "--sway", "3"])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("--sway takes DB:SECONDS"))

        let json = try await TestSupport.run(TestSupport.product("beacond"), ["evaluate", "--trace", trace, "--config", missing, "--json"])
        #expect(json.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let beacond = try #require(object["beacond"] as? [String: Any])
        let coverage = try #require(beacond["accuracy_coverage"] as? Double)
        #expect((0...1).contains(coverage))
        #expect(beacond["accuracy_coverage_by_distance"] is Double)
        #expect((beacond["relative_accuracy_median"] as? Double).map { $0 > 0 } == true)
        #expect(beacond["relative_error_p68"] is Double)
        let perBeacon = try #require(beacond["band_switches_per_beacon"] as? [[String: Any]])
        #expect(perBeacon.map { $0["minor"] as? Int } == [1, 2])
        #expect(perBeacon.compactMap { $0["band_switches"] as? Int }.reduce(0, +) == beacond["band_switches"] as? Int)
        let baselines = try #require(object["baselines"] as? [String: Any])
        #expect(((baselines["raw"] as? [String: Any])?["relative_error_p68"]) is Double)
        let reference = try #require((object["reference"] as? [String: Any])?["stand_average"] as? [String: Any])
        #expect((reference["band_accuracy"] as? Double).map { $0 > 0.9 } == true)
        #expect(reference["accuracy_coverage"] is NSNull)
        #expect((beacond["nearest_venue_accuracy"] as? Double).map { $0 > 0.9 } == true)
        #expect(beacond["nearest_venue_rows_scored"] as? Int == 299)
        #expect(beacond["stationary_share"] is Double)
    }
}
