import BeaconCore
import FoundationEssentials

/// The benchmarks' inputs, shared by the benchmarks and `write-capture` (which
/// writes the same traffic as a file for `beacond scan` and `btmon -r`).
public enum Inputs {
    public static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
    static let otherCompany: [UInt8] = [0x02, 0x01, 0x06, 0x07, 0xFF, 0x59, 0x00, 0x01, 0x02, 0x03, 0x04]
    static let scanResponse: [UInt8] = [0x08, 0x09] + Array("beacon1".utf8)

    /// Flags and an iBeacon, as a beacon sends them.
    public static func payload(major: UInt16 = 1, minor: UInt16 = 2) -> [UInt8] {
        [0x02, 0x01, 0x06]
            + IBeaconFrame(identity: BeaconIdentity(uuid: uuid, major: major, minor: minor), measuredPower: -59)
            .advertisingData
    }

    public static func address(_ beacon: Int) -> BluetoothAddress {
        BluetoothAddress(
            0xC0, 0x00, UInt8(truncatingIfNeeded: beacon >> 16), UInt8(truncatingIfNeeded: beacon >> 8),
            UInt8(truncatingIfNeeded: beacon), 0x01)
    }

    /// One legacy LE advertising report.
    static func report(_ data: [UInt8], beacon: Int = 0, rssi: Int8 = -67, scanResponse: Bool = false) -> AdvertisingReport {
        AdvertisingReport(
            kind: .legacy(scanResponse ? .scanResponse : .advNonconnInd), addressType: 1,
            address: address(beacon), rssi: rssi, data: data[...])
    }

    /// One legacy LE advertising report event, as the controller sends it.
    public static func event(_ data: [UInt8], beacon: Int = 0, rssi: Int8 = -67, scanResponse: Bool = false) -> [UInt8] {
        HCIEvent.advertisingReportEvent([report(data, beacon: beacon, rssi: rssi, scanResponse: scanResponse)])
    }

    public static let payload: [UInt8] = payload()
    public static let event: [UInt8] = event(payload)

    /// `count` advertisements of a busy room, about 3,000 a second: iBeacons
    /// from 50 beacons (half), scan responses (a quarter) and another
    /// company's data (a quarter).
    public static func capturedReports(_ count: Int) -> [(AdvertisingReport, Timestamp)] {
        let iBeacons = (0..<50).map { payload(major: 1, minor: UInt16($0)) }
        return (0..<count).map { index in
            let beacon = index % 50
            let report: AdvertisingReport =
                switch index % 4 {
                case 0, 1: report(iBeacons[beacon], beacon: beacon, rssi: Int8(-45 - index % 40))
                case 2: report(scanResponse, beacon: beacon, rssi: Int8(-45 - index % 40), scanResponse: true)
                default: report(otherCompany, beacon: 1000 + beacon, rssi: -80)
                }
            return (report, Timestamp(microsecondsSinceEpoch: 1_700_000_000_000_000 + Int64(index) * 333))
        }
    }

    /// The replay benchmarks' 100,000 advertisements.
    public static let capturedEvents = 100_000
    public static let capturedReports: [(AdvertisingReport, Timestamp)] = capturedReports(capturedEvents)

    /// Reports as a btsnoop capture (datalink 2001, as `btmon -w` writes), one event each.
    public static func capture(_ reports: [(AdvertisingReport, Timestamp)]) -> [UInt8] {
        var writer = BtsnoopWriter(datalink: .monitor)
        for (report, time) in reports { writer.append(event: HCIEvent.advertisingReportEvent([report]), at: time) }
        return writer.bytes
    }

    public static let capture: [UInt8] = capture(capturedReports)

    /// Those as a pcapng capture with one interface of `linkType`.
    public static func pcapngCapture(_ linkType: LinkType) -> [UInt8] {
        var writer = PcapngWriter()
        let interface = writer.addInterface(linkType: linkType.rawValue)
        for (report, time) in capturedReports { writer.append(report: report, interface: interface, at: time) }
        return writer.bytes
    }

    /// One region covering the UUID; one venue per beacon when `venues`.
    public static func configuration(beacons: Int, venues: Bool) -> Configuration {
        Configuration(
            regions: [RegionDefinition(id: "all", constraint: BeaconConstraint(uuid: uuid))],
            venues: venues
                ? (0..<beacons).map { beacon in
                    VenueDefinition(
                        id: "venue-\(beacon)", name: "Venue \(beacon)",
                        constraint: BeaconConstraint(
                            uuid: uuid, major: UInt16(beacon / 1000), minor: UInt16(beacon % 1000)))
                }
                : [])
    }

    public static func identity(_ beacon: Int) -> BeaconIdentity {
        BeaconIdentity(uuid: uuid, major: UInt16(beacon / 1000), minor: UInt16(beacon % 1000))
    }

    /// A stranger: the region's UUID, majors from 1,000 up (no venue's).
    public static func stranger(_ n: Int) -> BeaconIdentity {
        BeaconIdentity(uuid: uuid, major: UInt16(1_000 + n / 1_000), minor: UInt16(n % 1_000))
    }

    /// A made-up but repeatable RSSI: each beacon at its own level, a few dB of noise.
    public static func rssi(beacon: Int, step: Int) -> Int8 {
        Int8(-48 - (beacon * 7) % 35 - (beacon &+ step &* 13) % 5)
    }
}

