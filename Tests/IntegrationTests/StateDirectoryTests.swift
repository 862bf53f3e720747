import BeaconClient
import BeaconTestSupport
import BeacondAPI
import Foundation
import Testing

/// The state directory refusing writes (full, read-only, wrong owner) and a
/// planted temporary file: nothing is acknowledged that is not on disk, the
/// log says so once, and nothing is written through a link.
@Suite(
    .serialized,
    .enabled(
        if: getuid() == 0 && getpwnam("beacond") != nil,
        "needs root and the account beacond (root writes anywhere): run scripts/test.sh as root, or sudo dist/accounts.sh"))
struct StateDirectoryTests {
    typealias Service = ServiceBusTests.Service

    static func preferredVenue(_ service: Service) throws -> String {
        try service.busctl(["get-property", Beacond.busName, Beacond.root, Beacond.Manager1.name, "PreferredVenue"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func aSaveThatFailsIsRefusedSaidOnceAndTheValueKeptOnlyOnceSaved() async throws {
        let service = try await Service(user: "beacond")
        #expect(chmod(service.state.path, 0o500) == 0)
        for venue in ["counter-2", "coffee-bar"] {
            let refused = try service.call("SetPreferredVenue", ["s", venue])
            #expect(refused.status != 0)
            #expect(refused.stderr.contains("the preferred venue is unchanged"), "\(refused.stderr)")
        }
        #expect(try Self.preferredVenue(service) == "s \"\"")
        #expect(service.logText.components(separatedBy: "cannot save state").count - 1 == 1, "\(service.logText)")
        // Writable again: the next change is saved, and survives a restart.
        #expect(chmod(service.state.path, 0o700) == 0)
        #expect(try service.call("SetPreferredVenue", ["s", "counter-2"]).status == 0)
        service.stop()
        try await service.start()
        #expect(try Self.preferredVenue(service) == "s \"counter-2\"")
    }

    /// Each refused change tried to write the disk, so it counts against its
    /// user's pace: while saving fails, a loop of calls is refused after the
    /// burst without touching the disk (the audit of 2026-11-27).
    @Test func changesThatCouldNotBeSavedSpendThePace() async throws {
        let service = try await Service(user: "beacond")
        #expect(chmod(service.state.path, 0o500) == 0)
        let burst = ServiceLimits().changesPerUser
        for attempt in 1...burst {
            let refused = try service.call("SetPreferredVenue", ["s", attempt % 2 == 0 ? "counter-2" : "coffee-bar"])
            #expect(refused.stderr.contains("the preferred venue is unchanged"), "\(attempt): \(refused.stderr)")
        }
        let paced = try service.call("SetPreferredVenue", ["s", "counter-2"])
        #expect(paced.status != 0 && paced.stderr.contains("changes (SetPreferredVenue, Reload) in a row"), "\(paced.stderr)")
    }

    /// A save waiting out its backoff is tried once more at a clean stop, so
    /// the region states of the last seconds survive a restart: the file is
    /// written at the stop, not at the next retry (1 s or more away).
    @Test func aCleanStopSavesWhatTheBackoffHeldBack() async throws {
        let service = try await Service(user: "beacond")
        #expect(chmod(service.state.path, 0o500) == 0)
        // The simulated listener's regions change within seconds, and that save fails.
        let failed = await eventually(seconds: 60) { service.logText.contains("cannot save state") }
        try #require(failed, "no save failed: \(service.logText)")
        #expect(chmod(service.state.path, 0o700) == 0)
        let writable = Date()
        service.stop()
        let file = service.state.appendingPathComponent("state.json").path
        let written = try #require(try FileManager.default.attributesOfItem(atPath: file)[.modificationDate] as? Date)
        #expect(written >= writable.addingTimeInterval(-0.01), "state.json was last written at \(written), before the stop at \(writable)")
        #expect(!service.logText.contains("stopping with the state unsaved"), "\(service.logText)")
    }

    @Test func aClientIsToldStateNotSavedAndNothingChanges() async throws {
        let service = try await Service(user: "beacond")
        #expect(chmod(service.state.path, 0o500) == 0)
        let client = try await BeaconClient.connect(bus: .address(service.bus.address))
        do {
            try await client.setPreferredVenue("counter-2")
            Issue.record("a change that could not be saved was acknowledged")
        } catch {
            #expect(error.code == .stateNotSaved && error.message.contains("unchanged"), "\(error)")
        }
        #expect(try await client.status().preferredVenue == nil)
    }

    @Test func aPlantedTemporaryFileIsNeverWrittenThrough() async throws {
        let state = try TestSupport.temporaryDirectory()
        let victim = try TestSupport.temporaryDirectory().appendingPathComponent("victim")
        try Data("untouched".utf8).write(to: victim)
        try FileManager.default.createSymbolicLink(
            atPath: state.appendingPathComponent("state.json.tmp").path, withDestinationPath: victim.path)
        let service = try await Service(state: state)
        #expect(try service.call("SetPreferredVenue", ["s", "counter-2"]).status == 0)
        #expect(try String(contentsOf: victim, encoding: .utf8) == "untouched")
        let saved = try String(contentsOf: service.state.appendingPathComponent("state.json"), encoding: .utf8)
        #expect(saved.contains("counter-2"))
        #expect(!FileManager.default.fileExists(atPath: service.state.appendingPathComponent("state.json.tmp").path))
    }
}
