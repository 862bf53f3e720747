import BeaconCore
import BeaconService
import BeaconTestSupport
import Foundation
import Testing

/// A source is silent when it delivers no advertisement of any kind (SPEC
/// section 2), not when it delivers no iBeacon: a radio that hears phones
/// and no beacon is not deaf. The service runs in this process with a
/// silence of one second, on a replay paced in real time: three seconds of a
/// phone's advertisements (no iBeacon among them), nine and a half of
/// nothing, then one last advertisement of the phone, with which the replay
/// ends: the silence is over when it is in, not at a tick that never comes.
/// The gap is long because when the whole suite starts, every process thread
/// is busy for tens of seconds and the service's ticks may come seconds late:
/// a 2.5 s gap passed unticked once (CI, 2026-11-27).
@Suite struct SilentSourceTests {
    static func capture(in directory: URL) throws -> String {
        let phone = AdvertisingReport(
            kind: .legacy(.advInd), addressType: 1, address: BluetoothAddress(0x5A, 1, 2, 3, 4, 5), rssi: -70,
            data: [0x02, 0x01, 0x06, 0x05, 0x09, 0x50, 0x68, 0x6F, 0x6E][...])  // flags, and the name "Phon"
        let packet = ([UInt8(4)] + HCIEvent.advertisingReportEvent([phone])).map { String(format: "%02X", $0) }.joined(separator: " ")
        let times = (0..<30).map { $0 * 100 } + [12_500]  // milliseconds
        let lines = times.map { ms in
            "2024-05-01 12:00:\(String(format: "%02d", ms / 1000)).\(String(format: "%06d", ms % 1000 * 1000)) > \(packet)"
        }
        let path = directory.appendingPathComponent("phone.txt").path
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func onlyASilenceOfEveryAdvertisementIsFlagged() async throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let capture = try Self.capture(in: directory)
        let service = try InProcessService(source: .replay(path: capture, speed: .factor(1))) { $0.silenceAfter = .seconds(1) }
        let ended = await eventually(seconds: 60) { service.lines.contains { $0.hasPrefix("source replay:") && $0.contains(" ended: ") } }
        await service.stop()
        let lines = service.lines
        try #require(ended, "\(lines)")
        let silent = lines.indices.filter { lines[$0].hasPrefix("not scanning: ") && lines[$0].contains("is up but has delivered no advertisement for 1s") }
        let back = lines.indices.filter { lines[$0].hasPrefix("scanning: advertisements arrive again") }
        // Once, in the gap (the phone's first three seconds are not silence), and over when the phone is heard again.
        #expect(silent.count == 1 && back.count == 1, "\(lines)")
        #expect(silent.first.flatMap { first in back.first.map { first < $0 } } == true, "\(lines)")
        #expect(lines.contains { $0.contains("0 iBeacons") }, "\(lines)")
    }
}
