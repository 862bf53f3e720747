import Foundation
import Testing

@testable import BeaconCore

/// The whole real `hcidump --raw` log from a Raspberry Pi (Tests/Data/README.md):
/// 242 events, 113 iBeacons from two beacons, nothing malformed.
@Suite struct RaspberryPiLogTests {
    @Test func wholeLogDecodesToItsIBeacons() throws {
        let url = Fixtures.recording("rpi-hcidump-ibeacon.raw")
        let bytes = try [UInt8](Data(contentsOf: url))
        var reader = try RecordingReader(bytes: bytes)
        #expect(reader.format == .hcidump)
        var decoder = AdvertisementDecoder()
        var counts: [String: Int] = [:]
        var addresses: Set<BluetoothAddress> = []
        var rssiMissing = 0
        while let event = reader.next() {
            decoder.decode(event: event.packet, at: event.timestamp ?? Timestamp(microsecondsSinceEpoch: 0)) { sighting in
                let key = "\(sighting.identity.uuid.uuidString)/\(sighting.identity.major)/\(sighting.identity.minor)/\(sighting.frame.measuredPower)"
                counts[key, default: 0] += 1
                addresses.insert(sighting.address)
                if sighting.rssi == nil { rssiMissing += 1 }
            }
        }
        #expect(reader.failure == nil)
        #expect(reader.skippedRecords == 0)
        #expect(decoder.events == 242)
        #expect(decoder.advertisements == 242)  // one report per event
        #expect(decoder.iBeacons == 113)
        #expect(decoder.malformedEvents == 0)
        #expect(decoder.malformedFrames == 0)
        #expect(decoder.malformed == 0)
        #expect(decoder.lastProblem == nil)
        #expect(counts == [
            "A495DEAD-C5B1-4B44-B512-1370F02D74DE/12345/65535/-59": 34,
            "DAF246CE-8363-11E4-B116-123B93F75CBA/0/1/-62": 79,
        ])
        #expect(addresses.contains(Fixtures.raspberryPiAddress))
        #expect(rssiMissing == 0)
    }

    @Test func theLogIsThereAndIsText() throws {
        let text = try String(contentsOf: Fixtures.recording("rpi-hcidump-ibeacon.raw"), encoding: .utf8)
        // Independent count: every event starts on a line beginning with "> 04 3E".
        let starts = text.split(separator: "\n").filter { $0.hasPrefix("> 04 3E") }.count
        #expect(starts == 242)
        #expect(text.contains("\n// Gimbal\n"))
    }
}
