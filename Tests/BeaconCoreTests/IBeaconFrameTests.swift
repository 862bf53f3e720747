import Foundation
import PropertyBased
import Testing

@testable import BeaconCore

/// SPEC §3: iBeacon is manufacturer data (0xFF), company 0x004C little-endian,
/// type 0x02, length 0x15, UUID, major and minor big-endian, signed measured power.
@Suite struct IBeaconFrameTests {
    /// Estimote's default UUID as it is sent on the air: `B9 40 7F 30 …`.
    static let estimoteAD = Fixtures.hex(
        "1A FF 4C 00 02 15 B9 40 7F 30 F5 F8 46 6E AF F9 25 55 6B 57 FE 6D 30 39 00 07 C5")

    @Test func estimoteUUIDIsReadInAirOrderNotReversed() throws {
        let frame = try #require(try IBeaconFrame.decode(advertisingData: Self.estimoteAD))
        #expect(frame.identity.uuid.uuidString == "B9407F30-F5F8-466E-AFF9-25556B57FE6D")
        #expect(frame.identity.uuid == Fixtures.estimoteUUID)
    }

    @Test func majorAndMinorAreBigEndian() throws {
        let frame = try #require(try IBeaconFrame.decode(advertisingData: Self.estimoteAD))
        #expect(frame.identity.major == 12345)  // 0x3039
        #expect(frame.identity.minor == 7)  // 00 07, not 0x0700
    }

    @Test(arguments: [
        (UInt8(0xC5), Int8(-59)), (0x00, 0), (0x7F, 127), (0x80, -128), (0xFF, -1), (0xBE, -66),
    ])
    func measuredPowerIsSigned(byte: UInt8, dBm: Int8) throws {
        var payload = Self.estimoteAD
        payload[26] = byte
        let frame = try #require(try IBeaconFrame.decode(advertisingData: payload))
        #expect(frame.measuredPower == dBm)
    }

    @Test func flagsBeforeTheIBeacon() throws {
        let payload = Fixtures.hex("02 01 06") + Self.estimoteAD
        let frame = try #require(try IBeaconFrame.decode(advertisingData: payload))
        #expect(frame.identity == BeaconIdentity(uuid: Fixtures.estimoteUUID, major: 12345, minor: 7))
        #expect(frame.measuredPower == -59)
    }

    @Test func iBeaconAfterSeveralOtherStructures() throws {
        // Flags, a 16-bit service UUID list, a short name "Bn", then the iBeacon.
        let payload = Fixtures.hex("02 01 06  03 03 AA FE  03 08 42 6E") + Self.estimoteAD
        let frame = try #require(try IBeaconFrame.decode(advertisingData: payload))
        #expect(frame.identity.uuid == Fixtures.estimoteUUID)
        #expect(frame.identity.minor == 7)
    }

    @Test func realRaspberryPiIBeaconPayload() throws {
        // The 27 data bytes of the first report in rpi-hcidump-ibeacon.raw.
        let payload = Array(Fixtures.raspberryPiIBeaconEvent[13..<40])
        #expect(payload.first == 0x1A)
        let frame = try #require(try IBeaconFrame.decode(advertisingData: payload))
        #expect(frame.identity == BeaconIdentity(uuid: Fixtures.lightBlueBeanUUID, major: 12345, minor: 65535))
        #expect(frame.measuredPower == -59)
    }

    @Test func scanResponseWithNameAndServiceUUIDIsNotAnIBeacon() throws {
        // The scan response of the same log: name "Ligt", a 128-bit service UUID
        // (which happens to contain 0xFF and the beacon's UUID reversed), TX power.
        let payload = Array(Fixtures.raspberryPiScanResponseEvent[13..<40])
        #expect(try IBeaconFrame.decode(advertisingData: payload) == nil)
    }

    @Test func appleDataOfAnotherTypeIsNotAnIBeacon() throws {
        // Apple "Nearby Info" (0x10), as iPhones send it.
        let payload = Fixtures.hex("02 01 1A  08 FF 4C 00 10 03 1B 18 08")
        #expect(try IBeaconFrame.decode(advertisingData: payload) == nil)
        // Apple type 0x10 with a full 25-byte body: still not an iBeacon, and not malformed.
        var tenType = Self.estimoteAD
        tenType[4] = 0x10
        #expect(try IBeaconFrame.decode(advertisingData: tenType) == nil)
    }

    @Test func anotherCompanysIBeaconLayoutIsNotAnIBeacon() throws {
        var nordic = Self.estimoteAD
        nordic[2] = 0x59  // company 0x0059
        #expect(try IBeaconFrame.decode(advertisingData: nordic) == nil)
        var byteSwappedApple = Self.estimoteAD
        byteSwappedApple[2] = 0x00
        byteSwappedApple[3] = 0x4C  // 0x4C00 is not Apple: the company is little-endian
        #expect(try IBeaconFrame.decode(advertisingData: byteSwappedApple) == nil)
    }

    @Test func wrongLengthByteIsMalformed() {
        var payload = Fixtures.hex("02 01 06") + Self.estimoteAD
        payload[3 + 5] = 0x14
        #expect(throws: FrameError.malformedIBeacon(offset: 3, lengthByte: 0x14, payloadSize: 21)) {
            try IBeaconFrame.decode(advertisingData: payload)
        }
    }

    /// Jaalee beacons append a battery level after the 21 bytes the iBeacon's
    /// own 0x15 announces (structure length 0x1B): the iBeacon is intact, the rest ignored.
    @Test(arguments: [[UInt8(0x64)], [0x37, 0x00, 0xFF]])
    func trailingBytesAfterTheIBeaconAreIgnored(tail: [UInt8]) throws {
        let jaalee = [UInt8(0x1A + tail.count)] + Self.estimoteAD.dropFirst() + tail
        let payload = Fixtures.hex("02 01 06") + jaalee + Fixtures.hex("03 08 4A 4C")
        let frame = try #require(try IBeaconFrame.decode(advertisingData: payload))
        #expect(frame.identity == BeaconIdentity(uuid: Fixtures.estimoteUUID, major: 12345, minor: 7))
        #expect(frame.measuredPower == -59)  // the byte after minor, not the battery
        #expect(frame.advertisingData == Self.estimoteAD)
    }

    @Test(arguments: [(Int8(-59), true), (-100, true), (-20, true), (0, false), (-3, false), (5, false), (-101, false), (-19, false)])
    func measuredPowerPlausibility(power: Int8, plausible: Bool) {
        let frame = IBeaconFrame(identity: BeaconIdentity(uuid: Fixtures.estimoteUUID, major: 1, minor: 1), measuredPower: power)
        #expect(frame.hasPlausibleMeasuredPower == plausible)
    }

    @Test func wrongPayloadSizeIsMalformed() {
        // One byte too few: structure length 0x19, 20 bytes after `02 15`.
        let short = Fixtures.hex("19") + Self.estimoteAD.dropFirst().dropLast()
        #expect(throws: FrameError.malformedIBeacon(offset: 0, lengthByte: 0x15, payloadSize: 20)) {
            try IBeaconFrame.decode(advertisingData: short)
        }
    }

    @Test func appleTypeTwoWithoutALengthByteIsMalformed() throws {
        let payload = Fixtures.hex("04 FF 4C 00 02")
        let error = #expect(throws: FrameError.self) { try IBeaconFrame.decode(advertisingData: payload) }
        guard case .malformedIBeacon(let offset, _, _)? = error else {
            Issue.record("expected malformedIBeacon, got \(String(describing: error))")
            return
        }
        #expect(offset == 0)
    }

    /// `04 FF 4C 00 02`: Apple type 0x02 that ends before its length byte. The
    /// error reports an invented length byte 0x00 and a payload size of -1.
    @Test func appleTypeTwoWithoutALengthByteReportsASensiblePayloadSize() throws {
        let payload = Fixtures.hex("04 FF 4C 00 02")
        let error = #expect(throws: FrameError.self) { try IBeaconFrame.decode(advertisingData: payload) }
        if case .malformedIBeacon(_, _, let payloadSize)? = error {
            #expect(payloadSize >= 0)
        }
        #expect(!(error?.description.contains("-1") ?? true))
    }

    @Test func manufacturerDataTooShortForACompany() {
        #expect(throws: FrameError.manufacturerDataWithoutCompany(offset: 3, length: 1)) {
            try IBeaconFrame.decode(advertisingData: Fixtures.hex("02 01 06  02 FF 4C"))
        }
        #expect(throws: FrameError.manufacturerDataWithoutCompany(offset: 0, length: 0)) {
            try IBeaconFrame.decode(advertisingData: Fixtures.hex("01 FF"))
        }
    }

    @Test func truncatedStructureThrowsWithItsOffset() {
        // The iBeacon structure at offset 3 declares 26 bytes; only 5 follow its length byte.
        let payload = Fixtures.hex("02 01 06  1A FF 4C 00 02 15")
        #expect(throws: FrameError.truncatedStructure(offset: 3, declaredLength: 26, remaining: 5)) {
            try IBeaconFrame.decode(advertisingData: payload)
        }
        // Every cut inside the iBeacon structure is caught, never read past.
        let whole = Fixtures.hex("02 01 06") + Self.estimoteAD
        for cut in 4..<whole.count {
            #expect(throws: FrameError.truncatedStructure(offset: 3, declaredLength: 26, remaining: cut - 4)) {
                try IBeaconFrame.decode(advertisingData: whole[..<cut])
            }
        }
    }

    @Test func zeroLengthEndsThePayloadAndPaddingIsIgnored() throws {
        // After the 00 comes garbage that would be a truncated structure if it were read.
        let payload = Self.estimoteAD + [0x00, 0x1F, 0xFF, 0x4C]
        let frame = try #require(try IBeaconFrame.decode(advertisingData: payload))
        #expect(frame.identity.uuid == Fixtures.estimoteUUID)
        // An iBeacon that only follows the terminator is not seen.
        let hidden = Fixtures.hex("02 01 06 00") + Self.estimoteAD
        #expect(try IBeaconFrame.decode(advertisingData: hidden) == nil)
        // All-zero padding, as controllers send to fill 31 bytes.
        #expect(try IBeaconFrame.decode(advertisingData: [UInt8](repeating: 0, count: 31)) == nil)
    }

    @Test func emptyPayloadIsNotAnIBeacon() throws {
        #expect(try IBeaconFrame.decode(advertisingData: []) == nil)
        #expect(try IBeaconFrame.decode(advertisingData: Fixtures.hex("02 01 06")) == nil)
    }

    @Test func firstOfTwoIBeaconsIsReturned() throws {
        var second = Self.estimoteAD
        second[25] = 0x08  // minor 8
        let frame = try #require(try IBeaconFrame.decode(advertisingData: Self.estimoteAD + second))
        #expect(frame.identity.minor == 7)
    }

    @Test func malformedIBeaconAfterAGoodOneStillThrows() {
        // Every structure is checked, not only up to the first iBeacon.
        let broken = Fixtures.hex("06 FF 4C 00 02 15 01")
        #expect(throws: FrameError.malformedIBeacon(offset: 27, lengthByte: 0x15, payloadSize: 1)) {
            try IBeaconFrame.decode(advertisingData: Self.estimoteAD + broken)
        }
    }

    @Test func decodesFromASliceThatDoesNotStartAtZero() throws {
        let payload = Fixtures.hex("02 01 06") + Self.estimoteAD
        let frame = try #require(try IBeaconFrame.decode(advertisingData: Fixtures.offsetSlice(payload, by: 11)))
        #expect(frame.identity == BeaconIdentity(uuid: Fixtures.estimoteUUID, major: 12345, minor: 7))
        var bad = payload
        bad[8] = 0x14
        #expect(throws: FrameError.malformedIBeacon(offset: 3, lengthByte: 0x14, payloadSize: 21)) {
            try IBeaconFrame.decode(advertisingData: Fixtures.offsetSlice(bad, by: 11))
        }
    }

    @Test func advertisingDataIsTheAirFormat() {
        let frame = IBeaconFrame(
            identity: BeaconIdentity(uuid: Fixtures.estimoteUUID, major: 12345, minor: 7), measuredPower: -59)
        #expect(frame.advertisingData == Self.estimoteAD)
    }

    @Test func roundTripThroughAdvertisingData() async {
        await propertyCheck(
            count: 200, input: Gen.uint8().array(of: 16), Gen.uint16(), Gen.uint16(), Gen.int8(), Gen.bool
        ) { uuidBytes, major, minor, power, withFlags in
            let uuid = UUID(uuid: (
                uuidBytes[0], uuidBytes[1], uuidBytes[2], uuidBytes[3], uuidBytes[4], uuidBytes[5],
                uuidBytes[6], uuidBytes[7], uuidBytes[8], uuidBytes[9], uuidBytes[10], uuidBytes[11],
                uuidBytes[12], uuidBytes[13], uuidBytes[14], uuidBytes[15]))
            let frame = IBeaconFrame(identity: BeaconIdentity(uuid: uuid, major: major, minor: minor), measuredPower: power)
            let data = frame.advertisingData
            #expect(data.count == 27)
            #expect(Array(data[6..<22]) == uuidBytes)
            let payload = withFlags ? [0x02, 0x01, 0x06] + data : data
            let decoded = try IBeaconFrame.decode(advertisingData: payload)
            #expect(decoded == frame)
        }
    }

    /// Identities order by their UUID's text, then major and minor, as when
    /// the comparison made the strings (ranged beacons at equal distances list in this order).
    @Test func identitiesOrderAsTheirText() async {
        let bytes = Gen.uint8().array(of: 16)
        await propertyCheck(count: 300, input: bytes, bytes, Gen.uint16(), Gen.uint16()) { a, b, major, minor in
            let uuids = [a, b].map { byte in
                UUID(uuid: (
                    byte[0], byte[1], byte[2], byte[3], byte[4], byte[5], byte[6], byte[7], byte[8], byte[9],
                    byte[10], byte[11], byte[12], byte[13], byte[14], byte[15]))
            }
            let left = BeaconIdentity(uuid: uuids[0], major: major, minor: minor)
            for right in [
                BeaconIdentity(uuid: uuids[1], major: major, minor: minor),
                BeaconIdentity(uuid: uuids[0], major: major &+ 1, minor: minor),
                BeaconIdentity(uuid: uuids[0], major: major, minor: minor &- 1),
            ] {
                let byText = (left.uuid.uuidString, left.major, left.minor) < (right.uuid.uuidString, right.major, right.minor)
                #expect((left < right) == byText)
            }
        }
    }

    @Test func identityDescription() {
        let identity = BeaconIdentity(uuid: Fixtures.gimbalUUID, major: 0, minor: 1)
        #expect(identity.description == "DAF246CE-8363-11E4-B116-123B93F75CBA/0/1")
    }
}
