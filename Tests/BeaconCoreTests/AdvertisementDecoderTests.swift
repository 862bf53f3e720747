import Testing

@testable import BeaconCore

/// The first stage of the pipeline: it decodes what it can and counts what it drops.
@Suite struct AdvertisementDecoderTests {
    static let time = Timestamp(microsecondsSinceEpoch: 1_714_564_800_250_000)

    @Test func goodEventGivesASighting() throws {
        var decoder = AdvertisementDecoder()
        var sightings: [BeaconSighting] = []
        decoder.decode(event: Fixtures.raspberryPiIBeaconEvent[...], at: Self.time) { sightings.append($0) }
        let sighting = try #require(sightings.first)
        #expect(sightings.count == 1)
        #expect(sighting.time == Self.time)
        #expect(sighting.identity == BeaconIdentity(uuid: Fixtures.lightBlueBeanUUID, major: 12345, minor: 65535))
        #expect(sighting.frame.measuredPower == -59)
        #expect(sighting.rssi == -68)
        #expect(sighting.address == Fixtures.raspberryPiAddress)
        #expect(sighting.addressType == 0)
        #expect(decoder.events == 1)
        #expect(decoder.advertisements == 1)
        #expect(decoder.iBeacons == 1)
        #expect(decoder.malformed == 0)
        #expect(decoder.lastProblem == nil)
    }

    @Test func malformedEventsAndFramesAreCountedWithTheLastReason() {
        var decoder = AdvertisementDecoder()
        var sightings = 0
        // 1. a good iBeacon
        decoder.decode(event: Fixtures.raspberryPiIBeaconEvent[...], at: Self.time) { _ in sightings += 1 }
        // 2. a scan response: an advertisement, not an iBeacon, not malformed
        decoder.decode(event: Fixtures.raspberryPiScanResponseEvent[...], at: Self.time) { _ in sightings += 1 }
        // 3. a malformed event: the length byte disagrees
        var badLength = Fixtures.raspberryPiIBeaconEvent
        badLength[1] = 0x30
        decoder.decode(event: badLength[...], at: Self.time) { _ in sightings += 1 }
        #expect(decoder.lastProblem?.hasPrefix("HCI event:") == true)
        #expect(decoder.lastProblem?.contains("48") == true)  // declared 0x30
        // 4. a well-formed event whose iBeacon has the wrong length byte
        var badFrame = Fixtures.raspberryPiIBeaconEvent
        badFrame[13 + 5] = 0x14
        decoder.decode(event: badFrame[...], at: Self.time) { _ in sightings += 1 }
        #expect(decoder.lastProblem?.hasPrefix("D0:39:72:C9:C1:58:") == true)
        #expect(decoder.lastProblem?.contains("0x14") == true)
        // 5. an event that is not an advertising report
        decoder.decode(event: Fixtures.hex("0E 04 01 0C 20 00")[...], at: Self.time) { _ in sightings += 1 }

        #expect(sightings == 1)
        #expect(decoder.events == 5)
        #expect(decoder.advertisements == 3)
        #expect(decoder.iBeacons == 1)
        #expect(decoder.malformedEvents == 1)
        #expect(decoder.malformedFrames == 1)
        #expect(decoder.malformed == 2)
    }

    @Test func decodingOneAdvertisement() throws {
        var decoder = AdvertisementDecoder()
        let report = AdvertisingReport(
            kind: .extended([.legacyPDU]), addressType: 1, address: BluetoothAddress(1, 2, 3, 4, 5, 6), rssi: nil,
            data: (Fixtures.hex("02 01 06") + IBeaconFrameTests.estimoteAD)[...])
        let decoded = decoder.decode(Advertisement(time: Self.time, report: report))
        let sighting = try #require(decoded)
        #expect(sighting.rssi == nil)
        #expect(sighting.identity.uuid == Fixtures.estimoteUUID)
        #expect(sighting.addressType == 1)
        let truncated = AdvertisingReport(
            kind: .legacy(.advInd), addressType: 0, address: BluetoothAddress(1, 2, 3, 4, 5, 6), rssi: -50,
            data: Fixtures.hex("02 01 06 1A FF 4C 00")[...])
        #expect(decoder.decode(Advertisement(time: Self.time, report: truncated)) == nil)
        #expect(decoder.malformedFrames == 1)
        #expect(decoder.lastProblem == "01:02:03:04:05:06: \(FrameError.truncatedStructure(offset: 3, declaredLength: 26, remaining: 3))")
        #expect(decoder.events == 0)
        #expect(decoder.advertisements == 2)
        #expect(decoder.iBeacons == 1)
    }

    @Test func severalReportsInOneEventAreEachDecoded() {
        var decoder = AdvertisementDecoder()
        var identities: [BeaconIdentity] = []
        decoder.decode(event: HCIEvent.advertisingReportEvent(HCIEventTests.threeLegacyReports)[...], at: Self.time) {
            identities.append($0.identity)
        }
        #expect(identities == [BeaconIdentity(uuid: Fixtures.estimoteUUID, major: 12345, minor: 7)])
        #expect(decoder.advertisements == 3)
        #expect(decoder.iBeacons == 1)
        #expect(decoder.malformed == 0)
    }

    @Test func theLaterProblemReplacesTheEarlierOne() {
        var decoder = AdvertisementDecoder()
        decoder.decode(event: Fixtures.hex("3E 02 02 00")[...], at: Self.time) { _ in }
        let first = decoder.lastProblem
        decoder.decode(event: Fixtures.hex("3E")[...], at: Self.time) { _ in }
        #expect(first != nil)
        #expect(decoder.lastProblem != first)
        #expect(decoder.lastProblem == "HCI event: \(HCIError.missingHeader(available: 1))")
        #expect(decoder.malformedEvents == 2)
    }

    /// RSSI 127 (HCI's "not available"), 0 and what HCI cannot report
    /// (−128, +21…+126: a damaged capture) are no reading: the sighting is
    /// still there (presence), its RSSI is `nil`, from an HCI event (hci, replay) ...
    @Test(arguments: [UInt8(127), 0, 0x80, 21, 100])
    func noReadingInAnHCIEvent(rssiByte: UInt8) throws {
        var event = Fixtures.raspberryPiIBeaconEvent
        event[event.count - 1] = rssiByte
        var decoder = AdvertisementDecoder()
        var sightings: [BeaconSighting] = []
        decoder.decode(event: event[...], at: Self.time) { sightings.append($0) }
        let sighting = try #require(sightings.first)
        #expect(sighting.rssi == nil)
        #expect(sighting.identity.uuid == Fixtures.lightBlueBeanUUID)
        #expect(decoder.iBeacons == 1)
        #expect(decoder.malformed == 0)
    }

    /// ... and from an advertisement a source decoded itself (bluez, simulate).
    @Test(arguments: [Int8(127), 0, -128, 21, 100])
    func noReadingInAnAdvertisement(rssi: Int8) throws {
        var decoder = AdvertisementDecoder()
        let report = AdvertisingReport(
            kind: .legacy(.advNonconnInd), addressType: 0, address: Fixtures.raspberryPiAddress, rssi: rssi,
            data: IBeaconFrameTests.estimoteAD[...])
        let decoded = decoder.decode(Advertisement(time: Self.time, report: report))
        let sighting = try #require(decoded)
        #expect(sighting.rssi == nil)
        #expect(sighting.identity.uuid == Fixtures.estimoteUUID)
    }

    /// Every other value HCI can report (−127…+20 dBm) is a reading.
    @Test(arguments: [Int8(-1), -127, -60, 1, 20])
    func everyOtherRSSIIsAReading(rssi: Int8) throws {
        var decoder = AdvertisementDecoder()
        let report = AdvertisingReport(
            kind: .legacy(.advNonconnInd), addressType: 0, address: Fixtures.raspberryPiAddress, rssi: rssi,
            data: IBeaconFrameTests.estimoteAD[...])
        let decoded = decoder.decode(Advertisement(time: Self.time, report: report))
        #expect(decoded?.rssi == rssi)
    }
}
