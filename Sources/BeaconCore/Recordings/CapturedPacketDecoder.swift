/// Turns one captured packet into the HCI event it carries, whatever the
/// capture file (pcap or pcapng): the HCI link types carry the event itself,
/// the LE link-layer types an advertising PDU off the air, which becomes the
/// LE Advertising Report a controller would have sent (`AdvertisingPDU`).
/// Damaged packets are counted and skipped, not fatal: a sniffer hears
/// packets with bad CRCs all the time.
struct CapturedPacketDecoder: Sendable {
    private(set) var skippedPackets = 0
    /// Why the last skipped packet was skipped.
    private(set) var lastSkipReason: String?

    /// The HCI event a packet of link type `type` carries or stands for, or
    /// `nil` (skipped, and counted if it was damaged).
    mutating func event(_ data: ArraySlice<UInt8>, type: LinkType, at time: Timestamp?) -> RecordedEvent? {
        switch type {
        case .bluetoothHCIH4:
            return BtsnoopReader.eventPacket(data, datalink: .h4, flags: 0).map { RecordedEvent(timestamp: time, packet: $0) }
        case .bluetoothHCIH4WithPHDR:
            guard data.count >= LinkType.directionHeaderSize else { return skip("H4 packet shorter than its direction header") }
            return BtsnoopReader.eventPacket(data.dropFirst(LinkType.directionHeaderSize), datalink: .h4, flags: 0)
                .map { RecordedEvent(timestamp: time, packet: $0) }
        case .bluetoothLinuxMonitor:
            guard data.count >= LinkType.monitorHeaderSize else { return skip("monitor packet shorter than its header") }
            let opcode = UInt32(data.uint16(at: data.startIndex + 2, bigEndian: true))
            return BtsnoopReader.eventPacket(data.dropFirst(LinkType.monitorHeaderSize), datalink: .monitor, flags: opcode)
                .map { RecordedEvent(timestamp: time, packet: $0) }
        case .bluetoothLELL:
            return advertisement(AdvertisingPDU.reportEvent(data, rssi: nil), at: time)
        case .bluetoothLELLWithPHDR:
            guard data.count >= LinkType.radioHeaderSize else { return skip("LE packet shorter than its 10-byte radio header") }
            let flags = data.uint16(at: data.startIndex + 8, bigEndian: false)
            guard Self.carriesLegacyAdvertising(phy: (flags & LinkType.RadioHeaderFlag.phy) >> 14) else { return nil }
            let rssi = flags & LinkType.RadioHeaderFlag.signalPowerValid != 0 ? Int8(bitPattern: data[data.startIndex + 1]) : nil
            let crc = flags & LinkType.RadioHeaderFlag.crcChecked != 0 ? flags & LinkType.RadioHeaderFlag.crcValid != 0 : nil
            return advertisement(
                AdvertisingPDU.reportEvent(data.dropFirst(LinkType.radioHeaderSize), rssi: rssi, crcChecked: crc), at: time)
        case .nordicBLE:
            return nordicPacket(data, at: time)
        }
    }

    /// nRF Sniffer protocol versions 1 to 3 (Wireshark's packet-nordic_ble.c):
    /// board id, lengths, version, counter, packet id; then the packet
    /// header (its length first, flags with CRC OK in bit 0, channel, RSSI
    /// as a positive number of −dBm, event counter, time), then the link-layer packet.
    private mutating func nordicPacket(_ data: ArraySlice<UInt8>, at time: Timestamp?) -> RecordedEvent? {
        let s = data.startIndex
        guard data.count >= LinkType.nordicHeaderSize + 4 else { return skip("nRF Sniffer packet of \(data.count) bytes") }
        let version = data[s + 3]
        guard (1...3).contains(version), !(data[s] == 0xBE && data[s + 1] == 0xEF) else {
            return skip("nRF Sniffer protocol version \(version) (1 to 3 are read)")
        }
        let payloadLength = version == 1 ? Int(data[s + 2]) : Int(data.uint16(at: s + 1, bigEndian: false))
        guard LinkType.nordicHeaderSize + payloadLength == data.count else {
            return skip("nRF Sniffer packet of \(data.count) bytes says its payload is \(payloadLength)")
        }
        let id = data[s + 6]
        guard id == LinkType.nordicAdvertisingPacket || id == LinkType.nordicAnyPacket else { return nil }
        let headerLength = Int(data[s + 7])
        guard headerLength >= 4, LinkType.nordicHeaderSize + headerLength <= data.count else {
            return skip("nRF Sniffer packet header of \(headerLength) bytes")
        }
        guard Self.carriesLegacyAdvertising(phy: UInt16(data[s + 8] & LinkType.nordicPHY) >> 4) else { return nil }
        let crcOK = data[s + 8] & 1 == 1
        let rssi = Int8(clamping: -Int(data[s + 10]))
        return advertisement(
            AdvertisingPDU.reportEvent(data.dropFirst(LinkType.nordicHeaderSize + headerLength), rssi: rssi, crcChecked: crcOK),
            at: time)
    }

    /// Whether a packet the sniffer heard on PHY `phy` (0 LE 1M, 1 LE 2M,
    /// 2 LE Coded) can be a legacy advertisement. Legacy advertising PDUs,
    /// every iBeacon among them, are sent on LE 1M only (Core Specification
    /// Vol 6 Part B 2.3): anything else is extended advertising, passed over
    /// as ADV_EXT_IND is; and on LE Coded a Coding Indicator sits before the
    /// PDU header, which reading on would take for the header, making up an advertiser.
    static func carriesLegacyAdvertising(phy: UInt16) -> Bool { phy == 0 }

    private mutating func advertisement(_ result: Result<[UInt8], AdvertisingPDU.Rejection>, at time: Timestamp?) -> RecordedEvent? {
        switch result {
        case .success(let event): return RecordedEvent(timestamp: time, packet: event[...])
        case .failure(.notAnAdvertisement): return nil
        case .failure(.malformed(let reason)): return skip(reason)
        }
    }

    /// Counts a packet that cannot be read, and why.
    mutating func skip(_ reason: String) -> RecordedEvent? {
        skippedPackets += 1
        lastSkipReason = reason
        return nil
    }
}
