/// iBeacon test vectors that other decoders publish with their own tests,
/// and what those tests assert about them. beacond's decoder is checked
/// against them (`PeerVectorTests`) and, on the same bytes, against btmon
/// (`BtmonCrossCheckTests`). Sources, commits and licences:
/// `Tests/Data/README.md`, "Peers' test vectors".
public struct PeerVector: Sendable, CustomStringConvertible {
    /// What the vector's bytes are, as the peer's test feeds them.
    public enum Bytes: Sendable {
        /// A whole HCI event, the H4 packet type (`04`) first, as `hcidump --raw` shows it.
        case hciEvent(String)
        /// Manufacturer-specific data keyed by company, as BlueZ's
        /// `ManufacturerData` and Home Assistant's `manufacturer_data` hold it:
        /// the bytes after the company identifier.
        case manufacturerData(company: UInt16, String)
    }

    /// What the peer's test asserts (or, where it asserts something derived, what that is).
    public enum Verdict: Sendable {
        case iBeacon(uuid: String, major: Int, minor: Int, measuredPower: Int)
        /// A Jaalee JHT: the peer reads temperature (175·major/65535 − 45 °C)
        /// and humidity (100·minor/65535 %) from the iBeacon, and the battery
        /// from the byte after it (ble_monitor's `jaalee.py`).
        case jaalee(temperature: Double, humidity: Double, battery: Int)
        /// A Tilt hydrometer: temperature (major − 32)·5/9 °C, gravity minor/1000 (ble_monitor's `tilt.py`).
        case tilt(uuid: String, temperature: Double, gravity: Double)
        /// The peer finds no iBeacon in it.
        case noIBeacon
    }

    /// The peer's repository and test.
    public var peer: String
    public var bytes: Bytes
    /// The advertiser's address as the peer writes it (`6A6BC9A23E43`) and
    /// the RSSI, where the peer's test gives them.
    public var address: String? = nil
    public var rssi: Int? = nil
    public var verdict: Verdict

    public var description: String { peer }

    /// The vector as an HCI LE Advertising Report event, without the H4 byte.
    /// Manufacturer data is put, after flags, into one ADV_NONCONN_IND from
    /// `address` (else C0:FE:ED:00:00:01, random) at `rssi` (else −63 dBm),
    /// built here by hand from the Core specification's layout, not by beacond's encoder.
    public var hciEvent: [UInt8] {
        switch bytes {
        case .hciEvent(let hex):
            let packet = Self.bytes(hex: hex)
            precondition(packet.first == 0x04, "an HCI event vector starts with the H4 byte 04")
            return Array(packet.dropFirst())
        case .manufacturerData(let company, let hex):
            let manufacturer = [0xFF, UInt8(company & 0xFF), UInt8(company >> 8)] + Self.bytes(hex: hex)
            let data: [UInt8] = [0x02, 0x01, 0x06, UInt8(manufacturer.count)] + manufacturer
            let addressBytes = Self.bytes(hex: address ?? "C0FEED000001").reversed()
            let report = [0x03, 0x01] + addressBytes + [UInt8(data.count)] + data + [UInt8(bitPattern: Int8(rssi ?? -63))]
            let parameters: [UInt8] = [0x02, 0x01] + report
            return [0x3E, UInt8(parameters.count)] + parameters
        }
    }

    /// Hex pairs, with or without spaces, to bytes. Test inputs only: traps on a typo.
    public static func bytes(hex: String) -> [UInt8] {
        let digits = Array(hex.filter { !$0.isWhitespace })
        precondition(digits.count % 2 == 0, "odd hex in a peer vector")
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...($0 + 1)]), radix: 16)! }
    }
}

extension PeerVector {
    static let bleMonitor = "custom-components/ble_monitor"
    static let homeAssistant = "home-assistant/core tests/components/ibeacon"

    public static let all: [PeerVector] = [
        PeerVector(
            peer: "\(bleMonitor) test_ibeacon_parser.py test_ibeacon_sensor, test_ibeacon_tracker",
            bytes: .hciEvent("043E2A02010001433EA2C96B6A1E02011A1AFF4C000215E2C56DB5DFFB48D2B060D0F5A71096E000640000C5B3"),
            address: "6A6BC9A23E43", rssi: -77,
            verdict: .iBeacon(uuid: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", major: 100, minor: 0, measuredPower: -59)),
        PeerVector(
            peer: "\(bleMonitor) test_ibeacon_parser.py test_ibeacon_iphone_ble_packet_var_1",
            bytes: .hciEvent("043E2202010001433EA2C96B6A1602011A020A0C0FFF4C000F06A033BD08C5001002440CC4"),
            verdict: .noIBeacon),
        PeerVector(
            peer: "\(bleMonitor) test_ibeacon_parser.py test_ibeacon_iphone_ble_packet_var_2",
            bytes: .hciEvent("043E1D02010001433EA2C96B6A1102011A020A0C0AFF4C001005441CBD08C5BB"),
            verdict: .noIBeacon),
        PeerVector(
            peer: "\(bleMonitor) test_tilt.py test_tilt_red",
            bytes: .hciEvent("043E27020100005A099B16A3041B1AFF4C000215A495BB10C5B14B44B5121370F02D74DE004403F8C5C7"),
            address: "04A3169B095A", rssi: -57,
            verdict: .tilt(uuid: "A495BB10-C5B1-4B44-B512-1370F02D74DE", temperature: 20.0, gravity: 1.016)),
        PeerVector(
            peer: "\(bleMonitor) test_jaalee.py test_jaalee_jht",
            bytes: .hciEvent("043e22020104014b1ecdb4f3d216020a00030325f50e1625f5644b1ecdb4f3d27420591ad9"),
            address: "D2F3B4CD1E4B", rssi: -39, verdict: .noIBeacon),
        PeerVector(
            peer: "\(bleMonitor) test_jaalee.py test_jaalee_jht_skipping_ibeacon",
            bytes: .hciEvent("043e2b020100014b1ecdb4f3d21f0201041bff4c000215ebefd08370a247c89837e7b5634df5257420591acb64d7"),
            address: "D2F3B4CD1E4B", rssi: -41, verdict: .jaalee(temperature: 34.38, humidity: 34.81, battery: 100)),
        PeerVector(
            peer: "\(bleMonitor) test_jaalee.py test_jaalee_jht_api_example",
            bytes: .hciEvent("043e2b020100014b1ecdb4f3d21f0201041BFF4C000215EBEFD08370A247C89837E7B5634DF52565823D1ACC64d7"),
            address: "D2F3B4CD1E4B", rssi: -41, verdict: .jaalee(temperature: 24.39, humidity: 23.87, battery: 100)),
        PeerVector(
            peer: "Bluetooth-Devices/ibeacon-ble tests/test_init.py test_parse (and \(homeAssistant) BLUECHARM_BEACON_SERVICE_INFO)",
            bytes: .manufacturerData(company: 0x004C, "0215426c7565436861726d426561636f6e730efe1355c5"),
            address: "000000000000", rssi: -60,
            verdict: .iBeacon(uuid: "426C7565-4368-6172-6D42-6561636F6E73", major: 3838, minor: 4949, measuredPower: -59)),
        PeerVector(
            peer: "Bluetooth-Devices/ibeacon-ble tests/test_init.py test_not_parse",
            bytes: .manufacturerData(company: 0x0015, "0215426c7565436861726d426561636f6e730efe1355c5"),
            verdict: .noIBeacon),
        PeerVector(
            peer: "\(homeAssistant) test_coordinator.py test_ignore_not_ibeacons",
            bytes: .manufacturerData(company: 0x004C, "0215696e76616c6964"),
            verdict: .noIBeacon),
        // Home Assistant asserts only the distance its formula makes of these
        // at −63 dBm: 400 m (its cap) from the first one's −3, 0 m from the
        // second's −75. The fields are what ibeacon-ble's parser reads.
        PeerVector(
            peer: "\(homeAssistant) test_sensor.py test_multiple_uuids_same_beacon (FEASY_BEACON_SERVICE_INFO_1)",
            bytes: .manufacturerData(company: 0x004C, "0215fda50693a4e24fb1afcfc6eb07647825275165c1fd"),
            address: "AABBCCDDEEFF", rssi: -63,
            verdict: .iBeacon(uuid: "FDA50693-A4E2-4FB1-AFCF-C6EB07647825", major: 10065, minor: 26049, measuredPower: -3)),
        PeerVector(
            peer: "\(homeAssistant) test_sensor.py test_multiple_uuids_same_beacon (FEASY_BEACON_SERVICE_INFO_2)",
            bytes: .manufacturerData(company: 0x004C, "0215d546df97475747efbe093e2dcbdd0c77edd13bd2b5"),
            address: "AABBCCDDEEFF", rssi: -63,
            verdict: .iBeacon(uuid: "D546DF97-4757-47EF-BE09-3E2DCBDD0C77", major: 60881, minor: 15314, measuredPower: -75)),
    ]
}
