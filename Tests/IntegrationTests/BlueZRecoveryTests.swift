import BeaconSources
import BeaconTestSupport
import Foundation
import Testing

/// The bluez source restarting its own discovery when it has gone quiet, in
/// process against the mocked bluetoothd: bounded, noted, and the comeback
/// seen. (The real stack is exercised by Tests/RealStack.)
@Suite(.serialized) struct BlueZRecoveryTests {
    @Test func aQuietDiscoveryIsRestartedAFewTimesAndTheComebackNoted() async throws {
        let bus = try PrivateBus()
        let mock = try BlueZSourceTests.MockBlueZ(bus: bus)
        let source = BlueZSource(adapter: "hci0", bus: .address(bus.address), quietCheck: .seconds(2), recoveryAttempts: 2)
        let (events, continuation) = AsyncStream<String>.makeStream()
        let task = Task {
            try await source.run { event in
                switch event {
                case .note(let note): continuation.yield(note)
                case .advertisement: continuation.yield("advertisement")
                case .availability, .hciEvent: break
                }
            }
        }
        let deadline = Task {
            try await Task.sleep(for: .seconds(60))
            continuation.finish()
        }
        defer {
            deadline.cancel()
            task.cancel()
        }
        var seen: [String] = []
        var advertiser: Task<Void, Never>?
        defer { advertiser?.cancel() }
        // Tries at 2 s, 6 s and 14 s of quiet. After the first, a beacon
        // advertises as a real one does (every 300 ms) until beacond hears
        // it: a single report could land while the restarted discovery is
        // not yet on, and bluetoothd would drop it.
        for await event in events {
            if event == "advertisement" {
                advertiser?.cancel()
                if seen.contains(event) { continue }
            }
            seen.append(event)
            if event.contains("try 1 of 2"), advertiser == nil {
                let counter = BlueZSourceTests.counter1
                try mock.run(["add-beacon", "hci0", counter.address, BlueZSourceTests.uuid, "1", "\(counter.minor)", "-59", "-60"])
                advertiser = Task {
                    while !Task.isCancelled {
                        try? mock.advertise([(counter.address, -60)])
                        try? await Task.sleep(for: .milliseconds(300))
                    }
                }
            }
            if event.contains("leaving it alone") { break }
        }
        let restart = "hci0: no advertisement through BlueZ for"
        #expect(seen == [
            "\(restart) 2s; restarted our discovery (StopDiscovery, StartDiscovery; try 1 of 2)",
            "advertisement",
            "hci0: advertisements came back after restarting discovery (1 try)",
            "\(restart) 2s; restarted our discovery (StopDiscovery, StartDiscovery; try 1 of 2)",
            "\(restart) 6s; restarted our discovery (StopDiscovery, StartDiscovery; try 2 of 2)",
            "hci0: still no advertisement through BlueZ after 2 restarts of discovery (14s of quiet); leaving it alone "
                + "until one arrives. Nothing in range, or a deaf radio: `bluetoothctl power off; bluetoothctl power on`",
        ])
        // Three restarts, each our own session stopped and started again with the filter set anew.
        let methods = try mock.calls().map(\.method).filter { $0.hasSuffix("Discovery") || $0 == "SetDiscoveryFilter" }
        #expect(methods == ["SetDiscoveryFilter", "StartDiscovery"] + Array(repeating: ["StopDiscovery", "SetDiscoveryFilter", "StartDiscovery"], count: 3).flatMap { $0 })
    }
}
