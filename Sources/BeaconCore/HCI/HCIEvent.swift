/// Reading HCI event packets (`event code, parameter length, parameters`, no H4 byte).
public enum HCIEvent {
    public static let leMetaEventCode: UInt8 = 0x3E
    public static let legacyAdvertisingReport: UInt8 = 0x02
    public static let extendedAdvertisingReport: UInt8 = 0x0D

    /// Calls `body` for every advertising report in an HCI event packet.
    ///
    /// Handles the LE Meta event's legacy (0x02) and extended (0x0D)
    /// advertising reports, several per event; any other event is not an
    /// error and yields nothing. Every length is checked before it is used; a
    /// malformed report throws, after the complete reports before it were delivered.
    public static func forEachAdvertisingReport(
        in packet: ArraySlice<UInt8>,
        _ body: (AdvertisingReport) -> Void
    ) throws(HCIError) {
        guard packet.count >= 2 else { throw .missingHeader(available: packet.count) }
        let start = packet.startIndex
        let declared = Int(packet[start + 1])
        guard packet.count - 2 == declared else {
            throw .lengthMismatch(declared: declared, available: packet.count - 2)
        }
        guard packet[start] == leMetaEventCode else { return }
        // An LE Meta event always names its subevent.
        guard declared >= 1 else { throw .missingSubevent }
        let parameters = packet[(start + 3)...]
        switch packet[start + 2] {
        case legacyAdvertisingReport:
            try readReports(in: parameters, layout: .legacy, body)
        case extendedAdvertisingReport:
            try readReports(in: parameters, layout: .extended, body)
        default:
            return
        }
    }

    /// The shared walk over `num_reports` contiguous reports.
    private static func readReports(
        in parameters: ArraySlice<UInt8>,
        layout: ReportLayout,
        _ body: (AdvertisingReport) -> Void
    ) throws(HCIError) {
        guard let countByte = parameters.first else { throw .invalidReportCount(0) }
        let count = Int(countByte)
        guard count >= 1, count * layout.minimumSize <= parameters.count - 1 else { throw .invalidReportCount(count) }
        var index = parameters.startIndex + 1
        for reportIndex in 0..<count {
            let remaining = parameters.endIndex - index
            guard remaining >= layout.minimumSize else {
                throw .truncatedReport(index: reportIndex, needed: layout.minimumSize, available: remaining)
            }
            let dataStart = index + layout.bytesBeforeData
            let dataLength = Int(parameters[dataStart - 1])
            let size = layout.minimumSize + dataLength
            guard remaining >= size else {
                throw .truncatedReport(index: reportIndex, needed: size, available: remaining)
            }
            body(layout.report(parameters, index, parameters[dataStart..<(dataStart + dataLength)]))
            index += size
        }
        if index != parameters.endIndex { throw .trailingBytes(parameters.endIndex - index) }
    }

    /// Where a report's fields sit: a fixed part ending in the data length
    /// byte, the data, and a fixed tail (legacy reports' RSSI).
    private struct ReportLayout {
        var bytesBeforeData: Int
        var bytesAfterData: Int
        /// Builds the report from the buffer, the report's start and its data.
        var report: @Sendable (ArraySlice<UInt8>, Int, ArraySlice<UInt8>) -> AdvertisingReport

        var minimumSize: Int { bytesBeforeData + bytesAfterData }

        /// Legacy: type, address type, address(6), length, data, RSSI.
        static let legacy = ReportLayout(bytesBeforeData: 9, bytesAfterData: 1) { b, i, data in
            let kind: AdvertisingReport.Kind
            if let type = AdvertisingReport.LegacyType(rawValue: b[i]) {
                kind = .legacy(type)
            } else {
                // Not one of the five legacy PDU types: keep it, typed as extended bits
                // marked legacy, which it is (and so never a piece of a chain: `ReportChains`).
                kind = .extended(AdvertisingReport.ExtendedType(rawValue: UInt16(b[i])).union(.legacyPDU))
            }
            return AdvertisingReport(
                kind: kind, addressType: b[i + 1], address: BluetoothAddress(littleEndian: b, at: i + 2),
                rssi: decibels(b[data.endIndex]), data: data)
        }

        /// Extended: type(2), address type, address(6), primary PHY, secondary
        /// PHY, SID, TX power, RSSI, periodic interval(2), direct address type,
        /// direct address(6), length, data.
        static let extended = ReportLayout(bytesBeforeData: 24, bytesAfterData: 0) { b, i, data in
            AdvertisingReport(
                kind: .extended(AdvertisingReport.ExtendedType(rawValue: UInt16(b[i]) | UInt16(b[i + 1]) << 8)),
                addressType: b[i + 2], address: BluetoothAddress(littleEndian: b, at: i + 3),
                rssi: decibels(b[i + 13]), txPower: decibels(b[i + 12]),
                advertisingSID: b[i + 11] == 0xFF ? nil : b[i + 11], data: data)
        }
    }

    /// HCI's signed dBm byte, where 127 means "not available".
    private static func decibels(_ byte: UInt8) -> Int8? {
        byte == 127 ? nil : Int8(bitPattern: byte)
    }
}
