import BeaconCore
import BeaconService
import BeaconTestSupport
import BeacondAPI
import Foundation
import Testing

/// What the service says when the engine cannot keep up, end to end: the
/// service runs in this process with no room at all for advertisements, so
/// that every one a replay delivers is dropped — a count known in advance,
/// which a real flood on a fast machine would not give. busctl reads it on
/// a real bus; the journal's lines are caught in memory.
@Suite struct DroppedAdvertisementsTests {
    @Test func everyDroppedAdvertisementIsCountedOnTheBusAndInTheLog() async throws {
        let recording = TestSupport.recording("rpi-hcidump-ibeacon.raw")
        var reader = try RecordingReader(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: recording))))
        var total = 0
        while reader.next() != nil { total += 1 }
        try #require(total > 0)

        let bus = try PrivateBus()
        let service = try InProcessService(source: .replay(path: recording, speed: .max), bus: bus) { $0.limits.advertisementQueue = 0 }

        // The replay's end is posted after its last advertisement, and the
        // publication that says the source ended carries the count by then.
        var property = ""
        // Generous: each busctl call waits on this process, which the whole suite starting at once can starve.
        let deadline = ContinuousClock.now + .seconds(120)
        repeat {
            let read = try await TestSupport.run(
                TestSupport.tool("busctl")!,
                ["--address=\(bus.address)", "get-property", Beacond.busName, Beacond.root, Beacond.Manager1.name,
                 Beacond.Manager1.droppedAdvertisements.name])
            property = read.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            if property != "t \(total)" { try await Task.sleep(for: .milliseconds(20)) }
        } while property != "t \(total)" && ContinuousClock.now < deadline
        await service.stop()
        let lines = service.lines
        #expect(property == "t \(total)", "\(lines)")

        // The journal: a warning at the first drop, giving the count since
        // start (within the minute, later drops wait for the next line), and
        // the stopping line's total; no advertisement reached the decoder.
        let warnings = service.journal.entries.filter { $0.level == .warning }.map(\.message.description).filter { $0.hasPrefix("dropped ") }
        let first = try #require(warnings.first, "\(lines)")
        let counts = first.split(separator: " ")
        #expect(counts.count > 2 && first.contains("(\(counts[1]) since start)"), "\(first)")
        #expect(warnings.count == 1, "\(warnings)")
        let stopping = try #require(lines.last { $0.hasPrefix("beacond stopping:") }, "\(lines)")
        #expect(stopping.contains(" 0 advertisements, 0 iBeacons") && stopping.hasSuffix(", \(total) dropped unprocessed"), "\(stopping)")
    }
}
