import BeaconCore
import DBus
import Foundation
import Testing

@testable import BeaconSources

/// The bluez source hands BlueZ's `RSSI` to the same decoder as every other
/// source, so 127 and 0 are no reading there too: presence, never a number.
@Suite struct BlueZDeviceRSSITests {
    static let cafe = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!

    /// Device1 properties for an iBeacon (Apple's data after the company id) with this RSSI.
    static func properties(rssi: Int16) -> [String: DBusValue] {
        let frame = IBeaconFrame(
            identity: BeaconIdentity(uuid: Self.cafe, major: 1, minor: 2), measuredPower: -59)
        let apple = Array(frame.advertisingData.dropFirst(4))  // after `1A FF 4C 00`
        return [
            "Address": .variant(.string("C0:00:00:00:00:01")),
            "AddressType": .variant(.string("random")),
            "RSSI": .variant(.int16(rssi)),
            "ManufacturerData": .variant(
                .dictionary(
                    keySignature: "q", valueSignature: "v",
                    [.init(.uint16(0x004C), .variant(.array(elementSignature: "y", apple.map(DBusValue.byte))))])),
        ]
    }

    /// RSSI alone is a report without manufacturer data (a scan response,
    /// another frame of a multi-frame beacon): heard, but no iBeacon, and not
    /// the last iBeacon again with this report's RSSI (the audit of 2026-11-27).
    @Test func rssiAloneIsAReportWithoutTheIBeacon() throws {
        var device = BlueZDevice()
        let first = device.merge(Self.properties(rssi: -60))
        let alone = device.merge(["RSSI": .variant(.int16(-80))])
        #expect(first && alone)
        let advertisement = try #require(device.advertisement(at: Timestamp(microsecondsSinceEpoch: 1_000_000)))
        #expect(advertisement.report.data.isEmpty)
        #expect(advertisement.report.rssi == -80)
        var decoder = AdvertisementDecoder()
        let none = decoder.decode(advertisement)
        #expect(none == nil)
        #expect(decoder.advertisements == 1 && decoder.malformed == 0)
        // The next report with the iBeacon is one again.
        _ = device.merge(Self.properties(rssi: -61))
        let next = try #require(device.advertisement(at: Timestamp(microsecondsSinceEpoch: 1_100_000)))
        let again = decoder.decode(next)
        #expect(again?.rssi == -61)
    }

    @Test(arguments: [Int16(127), 0, -67])
    func rssiFromBlueZGoesThroughTheDecoder(rssi: Int16) throws {
        var device = BlueZDevice()
        let merged = device.merge(Self.properties(rssi: rssi))
        #expect(merged)
        let advertisement = try #require(device.advertisement(at: Timestamp(microsecondsSinceEpoch: 1_000_000)))
        var decoder = AdvertisementDecoder()
        let decoded = decoder.decode(advertisement)
        let sighting = try #require(decoded)
        #expect(sighting.identity == BeaconIdentity(uuid: Self.cafe, major: 1, minor: 2))
        #expect(sighting.rssi == (rssi == -67 ? -67 : nil))
    }
}
