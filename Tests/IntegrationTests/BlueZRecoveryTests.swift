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
        var advertised = false
        // Tries at 2 s, 6 s and 14 s of quiet: the beacon, added after the first,
        // has 4 s to come through (the python mock takes well under one).
        for await event in events {
            seen.append(event)
            if event.contains("try 1 of 2"), !advertised {
                // The radio hears again: a beacon appears through the restarted discovery.
                advertised = true
                let counter = BlueZSourceTests.counter1
                try mock.run(["add-beacon", "hci0", counter.address, BlueZSourceTests.uuid, "1", "\(counter.minor)", "-59", "-60"])
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
