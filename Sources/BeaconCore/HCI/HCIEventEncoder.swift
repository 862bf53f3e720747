extension HCIEvent {
    /// Builds an LE Meta event carrying `reports` (legacy 0x02 when every
    /// report is legacy, extended 0x0D otherwise), as a controller sends it.
    ///
    /// The inverse of `forEachAdvertisingReport`; tests, benchmarks and the
    /// simulator's captures are made with it.
    public static func advertisingReportEvent(_ reports: [AdvertisingReport]) -> [UInt8] {
        let allLegacy = reports.allSatisfy { if case .legacy = $0.kind { true } else { false } }
        var parameters: [UInt8] = [allLegacy ? legacyAdvertisingReport : extendedAdvertisingReport, UInt8(reports.count)]
        for report in reports {
            let rssi = UInt8(bitPattern: report.rssi ?? 127)
            switch (report.kind, allLegacy) {
            case (.legacy(let type), true):
                parameters.append(type.rawValue)
                parameters.append(report.addressType)
                parameters.append(contentsOf: report.address.littleEndianBytes)
                parameters.append(UInt8(report.data.count))
                parameters.append(contentsOf: report.data)
                parameters.append(rssi)
            default:
                let type = extendedType(report.kind).rawValue
                parameters.append(contentsOf: [UInt8(type & 0xFF), UInt8(type >> 8), report.addressType])
                parameters.append(contentsOf: report.address.littleEndianBytes)
                parameters.append(contentsOf: [0x01, 0x00, report.advertisingSID ?? 0xFF, UInt8(bitPattern: report.txPower ?? 127), rssi])
                parameters.append(contentsOf: [0x00, 0x00, 0x00])
                parameters.append(contentsOf: [0, 0, 0, 0, 0, 0])
                parameters.append(UInt8(report.data.count))
                parameters.append(contentsOf: report.data)
            }
        }
        return [leMetaEventCode, UInt8(parameters.count)] + parameters
    }

    /// A legacy PDU type as the extended event-type bits that stand for it.
    private static func extendedType(_ kind: AdvertisingReport.Kind) -> AdvertisingReport.ExtendedType {
        switch kind {
        case .extended(let type): return type
        case .legacy(let type):
            let bits: AdvertisingReport.ExtendedType = switch type {
            case .advInd: [.connectable, .scannable]
            case .advDirectInd: [.connectable, .directed]
            case .advScanInd: [.scannable]
            case .advNonconnInd: []
            case .scanResponse: [.scannable, .scanResponse]
            }
            return bits.union(.legacyPDU)
        }
    }
}
