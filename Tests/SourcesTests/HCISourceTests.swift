import BeaconCore
import BeaconSources
import Synchronization
import Testing

/// The `hci` source around the scanner: its thread, losing the adapter and
/// getting it back, and stopping cleanly.
@Suite struct HCISourceTests {
    /// What the source delivered, in a form tests compare.
    enum Seen: Equatable {
        case report(minor: UInt16)
        case available(Bool, String)
    }

    /// Runs `source` until `done` holds for what it delivered (or 10 s pass), then cancels it.
    static func run(_ source: HCISource, until done: @escaping @Sendable ([Seen]) -> Bool) async throws -> [Seen] {
        let (stream, continuation) = AsyncStream<Seen>.makeStream()
        let task = Task {
            try await source.run { event in
                switch event {
                case .hciEvent(let packet, _):
                    var decoder = AdvertisementDecoder()
                    decoder.decode(event: packet, at: Timestamp(microsecondsSinceEpoch: 0)) {
                        continuation.yield(.report(minor: $0.identity.minor))
                    }
                case .availability(let available, let reason):
                    continuation.yield(.available(available, reason))
                case .advertisement:
                    break
                }
            }
        }
        let deadline = Task {
            try await Task.sleep(for: .seconds(10))
            continuation.finish()
        }
        var seen: [Seen] = []
        for await item in stream {
            seen.append(item)
            if done(seen) { break }
        }
        deadline.cancel()
        task.cancel()
        try await task.value
        return seen
    }

    @Test func aProblemAtTheFirstStartIsAnError() async {
        let source = HCISource(adapter: "hci0") { _ throws(SourceError) in
            throw .unavailable("no Bluetooth adapter named hci0")
        }
        await #expect {
            try await source.run { _ in }
        } throws: { error in
            "\(error)" == "no Bluetooth adapter named hci0"
        }
    }

    @Test func losingTheAdapterIsReportedAndScanningResumesWhenItIsBack() async throws {
        let first = ScriptedController {
            $0.reports = [ScriptedController.iBeaconReport(minor: 1), ScriptedController.iBeaconReport(minor: 2)]
            $0.failure = .unavailable("hci0 stopped delivering (Broken pipe): removed, reset or powered off")
        }
        let second = ScriptedController { $0.reports = [ScriptedController.iBeaconReport(minor: 3)] }
        let attempts = Mutex(0)
        let source = HCISource(adapter: "hci0", retryInterval: .milliseconds(5)) { _ throws(SourceError) -> any HCIChannel in
            let attempt = attempts.withLock {
                $0 += 1
                return $0
            }
            switch attempt {
            case 1: return first
            case 2, 3: throw .unavailable("no Bluetooth adapter named hci0")
            default: return second
            }
        }
        let seen = try await Self.run(source) { $0.contains(.report(minor: 3)) }
        let scanning = "hci0: scanning with legacy LE commands (the controller lists no extended scanning)"
        #expect(seen == [
            .available(true, scanning),
            .report(minor: 1),
            .report(minor: 2),
            .available(false, "hci0 stopped delivering (Broken pipe): removed, reset or powered off; trying again every 5ms"),
            .available(false, "no Bluetooth adapter named hci0; trying again every 5ms"),
            .available(true, scanning),
            .report(minor: 3),
        ])
        #expect(attempts.withLock { $0 } == 4)
        // Stopped: our scan is switched off and the socket's filter is as it was.
        #expect(second.sent.last == HCIScannerTests.legacyDisable)
        #expect(second.state.withLock { $0.filter } == ScriptedController.originalFilter)
        #expect(first.state.withLock { $0.filter } == ScriptedController.originalFilter)
    }

    @Test func anAdapterThatWentDownWhileQuietIsNoticed() async throws {
        let controller = ScriptedController { $0.adapterUp = false }
        let source = HCISource(adapter: "hci0", retryInterval: .seconds(60), quietCheck: .milliseconds(1)) {
            _ throws(SourceError) in controller
        }
        let seen = try await Self.run(source) { $0.count == 2 }
        #expect(seen.count == 2)
        #expect(seen.last.map { if case .available(false, let reason) = $0 { reason.contains("hci0 went down") } else { false } } == true)
    }
}
