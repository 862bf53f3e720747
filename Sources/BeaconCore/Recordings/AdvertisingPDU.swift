/// A legacy advertising-channel packet as a sniffer captures it off the air
/// (Core Specification Vol 6 Part B 2.1 and 2.3): access address, PDU header,
/// AdvA and AdvData, CRC. Link-layer captures (pcap and pcapng link types 251, 256,
/// 272) carry these instead of HCI events.
///
/// Decoding turns one into the LE Advertising Report a controller would
/// have sent for it, so replays of sniffer captures go through the same
/// decoder, with the same counts, as every other source.
public enum AdvertisingPDU {
    /// The access address of every advertising-channel packet.
    public static let advertisingAccessAddress: UInt32 = 0x8E89_BED6
    /// The CRC's preset on the advertising channels (Vol 6 Part B 3.1.1).
    static let advertisingCRCInit: UInt32 = 0x55_5555
    /// Access address (4), header (2) and CRC (3) around the payload.
    static let overhead = 9
    /// AdvA (6) plus at most 31 bytes of AdvData: legacy PDUs are no longer.
    static let largestLegacyPayload = 37

    /// Why a captured packet was not turned into a report.
    public enum Rejection: Error, Equatable, Sendable {
        /// A data-channel packet, or an advertising PDU that carries no AdvData
        /// (ADV_DIRECT_IND, SCAN_REQ, CONNECT_IND, extended PDUs): not an error.
        case notAnAdvertisement
        /// Lengths that disagree, or a CRC that does not match: a damaged packet.
        case malformed(String)
    }

    /// The PDU types with AdvA then AdvData, and the HCI legacy report type that stands for each.
    static func legacyType(pduType: UInt8) -> AdvertisingReport.LegacyType? {
        switch pduType {
        case 0x0: .advInd
        case 0x2: .advNonconnInd
        case 0x4: .scanResponse
        case 0x6: .advScanInd
        default: nil
        }
    }

    static func pduType(_ legacy: AdvertisingReport.LegacyType) -> UInt8 {
        switch legacy {
        case .advInd: 0x0
        case .advDirectInd: 0x1
        case .advNonconnInd: 0x2
        case .scanResponse: 0x4
        case .advScanInd: 0x6
        }
    }

    /// The HCI LE Advertising Report event for `packet` (access address
    /// first, CRC last), or why there is none.
    ///
    /// - Parameters:
    ///   - rssi: the sniffer's reading, `nil` when it has none.
    ///   - crcChecked: the sniffer's own verdict on the CRC, if it gave one;
    ///     otherwise the CRC is computed here.
    public static func reportEvent(
        _ packet: ArraySlice<UInt8>, rssi: Int8?, crcChecked: Bool? = nil
    ) -> Result<[UInt8], Rejection> {
        let start = packet.startIndex
        guard packet.count >= 6 else { return .failure(.malformed("\(packet.count) bytes, too short for a link-layer header")) }
        let accessAddress = UInt32(packet[start]) | UInt32(packet[start + 1]) << 8
            | UInt32(packet[start + 2]) << 16 | UInt32(packet[start + 3]) << 24
        guard accessAddress == advertisingAccessAddress else { return .failure(.notAnAdvertisement) }
        let header = packet[start + 4]
        guard let type = legacyType(pduType: header & 0x0F) else { return .failure(.notAnAdvertisement) }
        let length = Int(packet[start + 5])
        guard (6...largestLegacyPayload).contains(length) else {
            return .failure(.malformed("\(type.name) with a \(length)-byte payload; legacy PDUs carry 6 to 37"))
        }
        guard packet.count >= overhead + length else {
            return .failure(.malformed("\(type.name) declares \(length) payload bytes but \(packet.count - overhead) are captured"))
        }
        let pdu = packet[(start + 4)..<(start + 6 + length)]
        let crcGood = crcChecked ?? (crc(pdu) == Array(packet[(start + 6 + length)..<(start + 9 + length)]))
        guard crcGood else { return .failure(.malformed("\(type.name) with a bad CRC")) }
        let report = AdvertisingReport(
            kind: .legacy(type), addressType: header >> 6 & 1,
            address: BluetoothAddress(littleEndian: packet, at: start + 6), rssi: rssi,
            data: packet[(start + 12)..<(start + 6 + length)])
        return .success(HCIEvent.advertisingReportEvent([report]))
    }

    /// The packet a sniffer captures for a legacy report: access address,
    /// header (TxAdd from the address type), AdvA, AdvData, CRC. Tests and
    /// benchmarks write captures with it.
    public static func packet(for report: AdvertisingReport) -> [UInt8] {
        let type: AdvertisingReport.LegacyType = if case .legacy(let legacy) = report.kind { legacy } else { .advNonconnInd }
        var pdu: [UInt8] = [pduType(type) | (report.addressType & 1) << 6, UInt8(6 + report.data.count)]
        pdu += report.address.littleEndianBytes
        pdu += report.data
        let a = advertisingAccessAddress
        return [UInt8(a & 0xFF), UInt8(a >> 8 & 0xFF), UInt8(a >> 16 & 0xFF), UInt8(a >> 24)] + pdu + crc(pdu[...])
    }

    /// The 24-bit CRC of a PDU, in the order its bytes are captured.
    ///
    /// Vol 6 Part B 3.1.1: an LFSR with polynomial x²⁴+x¹⁰+x⁹+x⁶+x⁴+x³+x+1,
    /// preset to 0x555555, fed each byte least significant bit first, and
    /// sent from position 23 down; a capture packs air bits into bytes
    /// least significant bit first, so each CRC byte comes out bit-reversed.
    static func crc(_ pdu: ArraySlice<UInt8>) -> [UInt8] {
        var register = advertisingCRCInit
        for byte in pdu {
            for bit in 0..<8 {
                let feedback = (register >> 23 ^ UInt32(byte >> bit)) & 1
                register = register << 1 & 0xFF_FFFF
                if feedback == 1 { register ^= 0x00_065B }
            }
        }
        return [UInt8(register >> 16 & 0xFF), UInt8(register >> 8 & 0xFF), UInt8(register & 0xFF)].map(reversedBits)
    }

    private static func reversedBits(_ byte: UInt8) -> UInt8 {
        (0..<8).reduce(0) { value, bit in value | (byte >> bit & 1) << (7 - bit) }
    }
}
