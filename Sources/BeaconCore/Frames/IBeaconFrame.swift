#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A decoded iBeacon advertisement: Apple's manufacturer data, type 0x02.
///
/// On the air (big-endian, as Apple specifies): `FF 4C 00 02 15`, 16 bytes of
/// proximity UUID, major, minor, then the measured power at 1 m as a signed byte.
public struct IBeaconFrame: Hashable, Sendable {
    public var identity: BeaconIdentity
    /// Calibrated RSSI at 1 m, in dBm, as the beacon sends it (even when implausible).
    public var measuredPower: Int8

    /// What a real 1 m calibration can be. Beacons transmit at about −30…+4 dBm
    /// and lose ~41 dB over the first metre, so −100…−20 covers every real
    /// one; 0, −3 or positive values are trackers putting something else
    /// (a battery level, a TX setting) in the byte, and ranging must not trust them.
    public static let plausibleMeasuredPower: ClosedRange<Int8> = -100 ... -20

    /// False when the measured power is no 1 m calibration (see `plausibleMeasuredPower`).
    public var hasPlausibleMeasuredPower: Bool { Self.plausibleMeasuredPower.contains(measuredPower) }

    /// The P1m ranging uses for a beacon that advertises `advertised`: the
    /// venue's calibration, else the advertised value if it can be one, else
    /// `fallback` (`RangingSettings.defaultMeasuredPower`). The engine and
    /// `evaluate`'s baselines both range with it, so they compare like with like.
    public static func rangingPower(advertised: Int8, calibrated: Int8?, fallback: Int8) -> Int8 {
        calibrated ?? (plausibleMeasuredPower.contains(advertised) ? advertised : fallback)
    }

    public init(identity: BeaconIdentity, measuredPower: Int8) {
        self.identity = identity
        self.measuredPower = measuredPower
    }

    static let appleCompanyIdentifier: UInt16 = 0x004C
    static let iBeaconType: UInt8 = 0x02
    static let iBeaconLength: UInt8 = 0x15

    /// Decodes the first iBeacon in an advertising payload.
    ///
    /// Bytes after the 21 that the iBeacon's own 0x15 announces are ignored:
    /// Jaalee beacons append a battery level there, and the iBeacon before it
    /// is intact. Every AD structure is walked (and so checked), not only the first one.
    /// Returns `nil` for a well-formed payload with no iBeacon in it (a scan
    /// response with a name, another company's data, Apple's other types).
    /// Throws for a malformed payload, which the caller counts and drops.
    public static func decode(advertisingData payload: ArraySlice<UInt8>) throws(FrameError) -> IBeaconFrame? {
        var found: IBeaconFrame?
        try ADStructure.forEach(in: payload) { (structure) throws(FrameError) in
            guard structure.type == ADStructure.manufacturerSpecificData else { return }
            let data = structure.data
            guard data.count >= 2 else {
                throw .manufacturerDataWithoutCompany(offset: structure.offset, length: data.count)
            }
            let base = data.startIndex
            let company = UInt16(data[base]) | UInt16(data[base + 1]) << 8
            guard company == appleCompanyIdentifier, data.count >= 3, data[base + 2] == iBeaconType else { return }
            let lengthByte = data.count >= 4 ? data[base + 3] : 0
            guard lengthByte == iBeaconLength, data.count >= 4 + Int(iBeaconLength) else {
                throw .malformedIBeacon(offset: structure.offset, lengthByte: lengthByte, payloadSize: max(0, data.count - 4))
            }
            if found == nil {
                found = frame(fromIBeaconPayloadAt: base + 4, in: data)
            }
        }
        return found
    }

    public static func decode(advertisingData payload: [UInt8]) throws(FrameError) -> IBeaconFrame? {
        try decode(advertisingData: payload[...])
    }

    /// Reads UUID, major, minor and power from the 21 bytes after `02 15`.
    private static func frame(fromIBeaconPayloadAt p: Int, in d: ArraySlice<UInt8>) -> IBeaconFrame {
        let uuid = UUID(uuid: (
            d[p], d[p + 1], d[p + 2], d[p + 3], d[p + 4], d[p + 5], d[p + 6], d[p + 7],
            d[p + 8], d[p + 9], d[p + 10], d[p + 11], d[p + 12], d[p + 13], d[p + 14], d[p + 15]
        ))
        let major = UInt16(d[p + 16]) << 8 | UInt16(d[p + 17])
        let minor = UInt16(d[p + 18]) << 8 | UInt16(d[p + 19])
        let power = Int8(bitPattern: d[p + 20])
        return IBeaconFrame(identity: BeaconIdentity(uuid: uuid, major: major, minor: minor), measuredPower: power)
    }

    /// The AD structure that carries this frame (27 bytes, `1A FF 4C 00 02 15 …`),
    /// as a beacon sends it. The simulator and the tests build advertisements with it.
    public var advertisingData: [UInt8] {
        let u = identity.uuid.uuid
        return [
            0x1A, ADStructure.manufacturerSpecificData, 0x4C, 0x00, Self.iBeaconType, Self.iBeaconLength,
            u.0, u.1, u.2, u.3, u.4, u.5, u.6, u.7, u.8, u.9, u.10, u.11, u.12, u.13, u.14, u.15,
            UInt8(identity.major >> 8), UInt8(identity.major & 0xFF),
            UInt8(identity.minor >> 8), UInt8(identity.minor & 0xFF),
            UInt8(bitPattern: measuredPower),
        ]
    }
}
