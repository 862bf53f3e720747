import PropertyBased
import Testing

@testable import BeaconCore

/// LE Meta events (PLATFORM-NOTES "Raw HCI"): legacy reports (0x02) and extended reports (0x0D).
@Suite struct HCIEventTests {
    static func reports(in packet: [UInt8]) throws(HCIError) -> [AdvertisingReport] {
        var reports: [AdvertisingReport] = []
        try HCIEvent.forEachAdvertisingReport(in: packet[...]) { reports.append($0) }
        return reports
    }

    // MARK: Legacy reports

    @Test func realRaspberryPiEventByHand() throws {
        let reports = try Self.reports(in: Fixtures.raspberryPiIBeaconEvent)
        let report = try #require(reports.first)
        #expect(reports.count == 1)
        #expect(report.kind == .legacy(.advInd))
        #expect(report.eventTypeName == "ADV_IND")
        #expect(report.addressType == 0)
        #expect(report.addressTypeName == "public")
        #expect(report.address == BluetoothAddress(0xD0, 0x39, 0x72, 0xC9, 0xC1, 0x58))
        #expect(report.address.description == "D0:39:72:C9:C1:58")
        #expect(report.rssi == -68)
        #expect(report.txPower == nil)
        #expect(!report.isScanResponse)
        #expect(report.data.count == 27)
        #expect(Array(report.data) == Array(Fixtures.raspberryPiIBeaconEvent[13..<40]))
        // The data is a slice of the packet, not a copy.
        #expect(report.data.startIndex == 13)
    }

    @Test func realRaspberryPiScanResponse() throws {
        let report = try #require(try Self.reports(in: Fixtures.raspberryPiScanResponseEvent).first)
        #expect(report.kind == .legacy(.scanResponse))
        #expect(report.isScanResponse)
        #expect(report.eventTypeName == "SCAN_RSP")
        #expect(report.rssi == -59)
        #expect(Array(report.data.prefix(6)) == Fixtures.hex("05 09 4C 69 67 74"))
    }

    @Test func encoderMatchesTheRealControllersBytes() {
        let report = AdvertisingReport(
            kind: .legacy(.advInd), addressType: 0, address: Fixtures.raspberryPiAddress, rssi: -68,
            data: Fixtures.raspberryPiIBeaconEvent[13..<40])
        #expect(HCIEvent.advertisingReportEvent([report]) == Fixtures.raspberryPiIBeaconEvent)
    }

    static let threeLegacyReports = [
        AdvertisingReport(
            kind: .legacy(.advInd), addressType: 0, address: Fixtures.raspberryPiAddress, rssi: -68,
            data: IBeaconFrameTests.estimoteAD[...]),
        AdvertisingReport(
            kind: .legacy(.scanResponse), addressType: 1, address: BluetoothAddress(0xC0, 0x11, 0x22, 0x33, 0x44, 0x55),
            rssi: nil, data: Fixtures.hex("05 09 4C 69 67 74")[...]),
        AdvertisingReport(
            kind: .legacy(.advNonconnInd), addressType: 1, address: BluetoothAddress(0xF0, 0, 0, 0, 0, 0x01),
            rssi: -100, data: [][...]),
    ]

    @Test func oneLegacyReportRoundTrips() throws {
        let event = HCIEvent.advertisingReportEvent([Self.threeLegacyReports[0]])
        #expect(event[0] == 0x3E)
        #expect(event[2] == 0x02)
        #expect(Int(event[1]) == event.count - 2)
        #expect(try Self.reports(in: event) == [Self.threeLegacyReports[0]])
    }

    @Test func threeLegacyReportsInOneEvent() throws {
        let event = HCIEvent.advertisingReportEvent(Self.threeLegacyReports)
        #expect(event[2] == 0x02)
        #expect(event[3] == 3)
        // 2 header + subevent + count + 3 × 10 fixed bytes + 27 + 6 + 0 data bytes.
        #expect(event.count == 4 + 30 + 33)
        let reports = try Self.reports(in: event)
        #expect(reports == Self.threeLegacyReports)
        #expect(reports[1].rssi == nil)  // 127 on the wire
        #expect(event[4 + 37 + 9 + 6] == 127)
        #expect(reports[2].data.isEmpty)
    }

    @Test func unknownLegacyEventTypeIsKeptAsBits() throws {
        var event = Fixtures.raspberryPiIBeaconEvent
        event[4] = 0x07
        let report = try #require(try Self.reports(in: event).first)
        #expect(report.kind == .extended(AdvertisingReport.ExtendedType(rawValue: 0x07).union(.legacyPDU)))
        // A damaged type byte with the bits an extended report's data status sits in is still whole:
        // decoded, not held as a piece of a chain.
        event[4] = 0x23
        var decoder = AdvertisementDecoder()
        var sightings = 0
        decoder.decode(event: event[...], at: Timestamp(microsecondsSinceEpoch: 0)) { _ in sightings += 1 }
        #expect(sightings == 1 && decoder.incompleteAdvertisements == 0 && decoder.chains.pending == 0)
    }

    // MARK: Extended reports (0x0D)

    /// Hand-written per PLATFORM-NOTES: type u16 LE, address type, address, PHYs,
    /// SID, TX power, RSSI, periodic interval, direct address type and address, length, data.
    static let extendedIBeaconReport = Fixtures.hex(
        "13 00  01  66 55 44 33 22 11  01 00 FF  F4  C4  00 00  00  00 00 00 00 00 00  1E")
        + Fixtures.hex("02 01 06") + IBeaconFrameTests.estimoteAD
    static let extendedEmptyReport = Fixtures.hex(
        "20 00  00  06 05 04 03 02 01  03 00 02  7F  7F  40 00  01  AA BB CC DD EE FF  00")

    @Test func extendedReportByHand() throws {
        let event = Fixtures.hex("3E 38 0D 01") + Self.extendedIBeaconReport
        #expect(event.count == 0x38 + 2)
        let report = try #require(try Self.reports(in: event).first)
        #expect(report.kind == .extended([.connectable, .scannable, .legacyPDU]))
        #expect(report.eventTypeName == "EXT(0x0013)")
        #expect(report.addressType == 1)
        #expect(report.addressTypeName == "random")
        #expect(report.address.description == "11:22:33:44:55:66")
        #expect(report.txPower == -12)
        #expect(report.advertisingSID == nil)  // 0xFF: none
        #expect(report.rssi == -60)
        #expect(!report.isScanResponse)
        #expect(Array(report.data) == Fixtures.hex("02 01 06") + IBeaconFrameTests.estimoteAD)
        let frame = try #require(try IBeaconFrame.decode(advertisingData: report.data))
        #expect(frame.identity.uuid == Fixtures.estimoteUUID)
    }

    @Test func extendedReportWithoutRSSIOrTXPower() throws {
        let event = Fixtures.hex("3E 1A 0D 01") + Self.extendedEmptyReport
        let report = try #require(try Self.reports(in: event).first)
        #expect(report.rssi == nil)
        #expect(report.txPower == nil)
        #expect(report.data.isEmpty)
        guard case .extended(let type) = report.kind else {
            Issue.record("expected an extended kind, got \(report.kind)")
            return
        }
        #expect(type.dataStatus == .incomplete)
        #expect(report.dataStatus == .incomplete)
        #expect(report.advertisingSID == 2)
        #expect(!type.contains(.legacyPDU))
        #expect(report.address.description == "01:02:03:04:05:06")
    }

    @Test func twoExtendedReportsInOneEvent() throws {
        let event = Fixtures.hex("3E 50 0D 02") + Self.extendedIBeaconReport + Self.extendedEmptyReport
        #expect(event.count == 0x50 + 2)
        let reports = try Self.reports(in: event)
        #expect(reports.count == 2)
        #expect(reports.map(\.rssi) == [-60, nil])
        #expect(reports.map(\.data.count) == [30, 0])
    }

    @Test func extendedScanResponseAndDataStatus() throws {
        var report = Self.extendedEmptyReport
        report[0] = 0x4A  // scannable | scan response | data status 2 (truncated)
        let parsed = try #require(try Self.reports(in: Fixtures.hex("3E 1A 0D 01") + report).first)
        #expect(parsed.isScanResponse)
        guard case .extended(let type) = parsed.kind else {
            Issue.record("expected an extended kind")
            return
        }
        #expect(type.dataStatus == .truncated)
    }

    @Test func mixedReportsAreEncodedAsExtended() throws {
        let extended = AdvertisingReport(
            kind: .extended([.connectable]), addressType: 1, address: BluetoothAddress(1, 2, 3, 4, 5, 6),
            rssi: -70, txPower: 4, advertisingSID: 5, data: Fixtures.hex("02 01 06")[...])
        let event = HCIEvent.advertisingReportEvent([Self.threeLegacyReports[0], extended])
        #expect(event[2] == 0x0D)
        let reports = try Self.reports(in: event)
        #expect(reports.count == 2)
        // ADV_IND as extended bits: connectable, scannable, legacy PDU.
        #expect(reports[0].kind == .extended(AdvertisingReport.ExtendedType(rawValue: 0x13)))
        #expect(reports[0].rssi == -68)
        #expect(reports[0].data == Self.threeLegacyReports[0].data)
        #expect(reports[1] == extended)
    }

    // MARK: Events that carry no advertising reports

    @Test(arguments: [
        "0E 04 01 0C 20 00",  // Command Complete for LE Set Scan Enable
        "0F 04 00 01 0B 20",  // Command Status
        "05 04 00 40 00 13",  // Disconnection Complete
        "3E 13 01 00 40 00 00 00 58 C1 C9 72 39 D0 18 00 00 00 48 00 00",  // LE Connection Complete
        "3E 0C 03 00 40 00 18 00 00 00 48 00 00 00",  // LE Connection Update Complete (0x03)
        "3E 01 12",  // an LE meta event of another subevent, with no parameters
    ])
    func otherEventsDeliverNothing(hexText: String) throws {
        let packet = Fixtures.hex(hexText)
        var delivered = 0
        try HCIEvent.forEachAdvertisingReport(in: packet[...]) { _ in delivered += 1 }
        #expect(delivered == 0)
    }

    @Test func nonMetaEventWithWrongLengthStillThrows() {
        #expect(throws: HCIError.lengthMismatch(declared: 4, available: 3)) {
            try HCIEvent.forEachAdvertisingReport(in: Fixtures.hex("0E 04 01 0C 20")[...]) { _ in }
        }
    }

    // MARK: Malformed events

    @Test func everyPrefixOfAValidEventThrows() {
        for event in [
            Fixtures.raspberryPiIBeaconEvent,
            HCIEvent.advertisingReportEvent(Self.threeLegacyReports),
            Fixtures.hex("3E 50 0D 02") + Self.extendedIBeaconReport + Self.extendedEmptyReport,
        ] {
            for cut in 0..<event.count {
                let prefix = event[..<cut]
                let expected: HCIError =
                    cut < 2 ? .missingHeader(available: cut) : .lengthMismatch(declared: Int(event[1]), available: cut - 2)
                #expect(throws: expected) {
                    try HCIEvent.forEachAdvertisingReport(in: prefix) { _ in }
                }
            }
        }
    }

    /// Cuts that also fix the length byte reach the report walk itself: it must
    /// still throw, and may only have delivered complete reports before the cut.
    @Test func everyTruncationWithACorrectedLengthThrows() throws {
        for event in [
            Fixtures.raspberryPiIBeaconEvent,
            HCIEvent.advertisingReportEvent(Self.threeLegacyReports),
            Fixtures.hex("3E 50 0D 02") + Self.extendedIBeaconReport + Self.extendedEmptyReport,
        ] {
            let complete = try Self.reports(in: event)
            for cut in 3..<event.count {
                var packet = Array(event[..<cut])
                packet[1] = UInt8(cut - 2)
                var delivered: [AdvertisingReport] = []
                let error = #expect(throws: HCIError.self) {
                    try HCIEvent.forEachAdvertisingReport(in: packet[...]) { delivered.append($0) }
                }
                switch error {
                case .invalidReportCount?, .truncatedReport?: break
                default: Issue.record("cut at \(cut): unexpected \(String(describing: error))")
                }
                #expect(delivered == Array(complete.prefix(delivered.count)))
                #expect(delivered.count < complete.count)
            }
        }
    }

    @Test func lengthMismatch() {
        // Declares 0x28 parameter bytes, carries 0x27.
        var packet = Fixtures.raspberryPiIBeaconEvent
        packet[1] = 0x28
        #expect(throws: HCIError.lengthMismatch(declared: 0x28, available: 0x27)) {
            try HCIEvent.forEachAdvertisingReport(in: packet[...]) { _ in }
        }
        packet[1] = 0x26
        #expect(throws: HCIError.lengthMismatch(declared: 0x26, available: 0x27)) {
            try HCIEvent.forEachAdvertisingReport(in: packet[...]) { _ in }
        }
    }

    @Test func reportCountZero() {
        #expect(throws: HCIError.invalidReportCount(0)) {
            try HCIEvent.forEachAdvertisingReport(in: Fixtures.hex("3E 02 02 00")[...]) { _ in }
        }
        #expect(throws: HCIError.invalidReportCount(0)) {
            try HCIEvent.forEachAdvertisingReport(in: Fixtures.hex("3E 02 0D 00")[...]) { _ in }
        }
        // Subevent 0x02 without even a count byte.
        #expect(throws: HCIError.invalidReportCount(0)) {
            try HCIEvent.forEachAdvertisingReport(in: Fixtures.hex("3E 01 02")[...]) { _ in }
        }
    }

    /// An LE Meta event always carries a subevent code; `3E 00` is malformed, and
    /// the decoder should count it as such rather than as an event with no reports.
    @Test func leMetaEventWithoutASubeventCode() {
        #expect(throws: HCIError.self) {
            try HCIEvent.forEachAdvertisingReport(in: Fixtures.hex("3E 00")[...]) { _ in }
        }
    }

    @Test func reportCountTooLargeToFit() {
        var packet = Fixtures.raspberryPiIBeaconEvent
        packet[3] = 5
        #expect(throws: HCIError.invalidReportCount(5)) {
            try HCIEvent.forEachAdvertisingReport(in: packet[...]) { _ in }
        }
    }

    @Test func dataLengthPastTheEnd() {
        var packet = Fixtures.raspberryPiIBeaconEvent
        packet[12] = 0x1C  // one more data byte than there is
        #expect(throws: HCIError.truncatedReport(index: 0, needed: 10 + 0x1C, available: 0x27 - 2)) {
            try HCIEvent.forEachAdvertisingReport(in: packet[...]) { _ in }
        }
    }

    @Test func trailingBytes() {
        var packet = Fixtures.raspberryPiIBeaconEvent + [0x00, 0x00]
        packet[1] += 2
        var delivered = 0
        #expect(throws: HCIError.trailingBytes(2)) {
            try HCIEvent.forEachAdvertisingReport(in: packet[...]) { _ in delivered += 1 }
        }
        // The complete report before the extra bytes was delivered.
        #expect(delivered == 1)
    }

    @Test func readsAPacketThatIsASliceOfALargerBuffer() throws {
        let slice = Fixtures.offsetSlice(HCIEvent.advertisingReportEvent(Self.threeLegacyReports), by: 13)
        var reports: [AdvertisingReport] = []
        try HCIEvent.forEachAdvertisingReport(in: slice) { reports.append($0) }
        #expect(reports == Self.threeLegacyReports)
        for report in reports {
            #expect(report.data.startIndex >= slice.startIndex && report.data.endIndex <= slice.endIndex)
        }
    }

    @Test func errorDescriptionsSayWhere() {
        #expect(HCIError.lengthMismatch(declared: 40, available: 39).description.contains("40"))
        #expect(HCIError.truncatedReport(index: 2, needed: 37, available: 5).description.contains("report 2"))
    }
}

// MARK: Encoder and reader, both ways

extension HCIEventTests {
    static let address = Gen.uint8().array(of: 6).map { BluetoothAddress($0[0], $0[1], $0[2], $0[3], $0[4], $0[5]) }
    /// Any RSSI or TX power a controller can send: -128...126, or 127 for "not available".
    static let decibels = Gen.int(in: -128...127).map { $0 == 127 ? nil : Int8($0) }

    @Test func legacyReportsRoundTrip() async {
        let report = zip(Gen.uint8(in: 0...4), Gen.uint8(in: 0...3), Self.address, Self.decibels, Gen.uint8().array(of: 0...31))
        await propertyCheck(count: 200, input: report.array(of: 1...6)) { fields in
            let reports = fields.map { type, addressType, address, rssi, data in
                AdvertisingReport(
                    kind: .legacy(AdvertisingReport.LegacyType(rawValue: type)!), addressType: addressType,
                    address: address, rssi: rssi, data: data[...])
            }
            let event = HCIEvent.advertisingReportEvent(reports)
            // Sizes from PLATFORM-NOTES: 2 header bytes, subevent, count, then 10 + data per report.
            #expect(event.count == 4 + fields.reduce(0) { $0 + 10 + $1.4.count })
            #expect(Array(event.prefix(4)) == [0x3E, UInt8(event.count - 2), 0x02, UInt8(reports.count)])
            var decoded: [AdvertisingReport] = []
            try HCIEvent.forEachAdvertisingReport(in: event[...]) { decoded.append($0) }
            #expect(decoded == reports)
        }
    }

    @Test func extendedReportsRoundTrip() async {
        let report = zip(
            Gen.uint16(in: 0...0x7F), Gen.uint8(in: 0...3), Self.address, Self.decibels, Self.decibels,
            Gen.uint8().array(of: 0...60))
        await propertyCheck(count: 200, input: report.array(of: 1...3)) { fields in
            let reports = fields.map { type, addressType, address, rssi, txPower, data in
                AdvertisingReport(
                    kind: .extended(AdvertisingReport.ExtendedType(rawValue: type)), addressType: addressType,
                    address: address, rssi: rssi, txPower: txPower, data: data[...])
            }
            let event = HCIEvent.advertisingReportEvent(reports)
            #expect(event.count == 4 + fields.reduce(0) { $0 + 24 + $1.5.count })
            #expect(event[2] == 0x0D)
            // The first report's RSSI and TX power at their PLATFORM-NOTES offsets.
            #expect(event[4 + 12] == UInt8(bitPattern: reports[0].txPower ?? 127))
            #expect(event[4 + 13] == UInt8(bitPattern: reports[0].rssi ?? 127))
            var decoded: [AdvertisingReport] = []
            try HCIEvent.forEachAdvertisingReport(in: event[...]) { decoded.append($0) }
            #expect(decoded == reports)
        }
    }
}
