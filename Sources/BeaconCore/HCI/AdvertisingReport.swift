/// One advertising report from the controller: an advertisement or scan
/// response as received, before its payload is decoded.
///
/// `data` is a slice of the event that carried it: parsing a capture copies nothing.
public struct AdvertisingReport: Sendable, Equatable {
    /// Legacy PDU types (LE Advertising Report, subevent 0x02).
    public enum LegacyType: UInt8, Sendable {
        case advInd = 0, advDirectInd = 1, advScanInd = 2, advNonconnInd = 3, scanResponse = 4

        public var name: String {
            switch self {
            case .advInd: "ADV_IND"
            case .advDirectInd: "ADV_DIRECT_IND"
            case .advScanInd: "ADV_SCAN_IND"
            case .advNonconnInd: "ADV_NONCONN_IND"
            case .scanResponse: "SCAN_RSP"
            }
        }
    }

    /// Extended report event-type bits (Core 5.x Vol 4 Part E 7.7.65.13).
    public struct ExtendedType: OptionSet, Sendable, Hashable {
        public let rawValue: UInt16
        public init(rawValue: UInt16) { self.rawValue = rawValue }
        public static let connectable = ExtendedType(rawValue: 1 << 0)
        public static let scannable = ExtendedType(rawValue: 1 << 1)
        public static let directed = ExtendedType(rawValue: 1 << 2)
        public static let scanResponse = ExtendedType(rawValue: 1 << 3)
        public static let legacyPDU = ExtendedType(rawValue: 1 << 4)

        /// Bits 5-6: whether `data` is the whole advertisement.
        public var dataStatus: DataStatus {
            DataStatus(rawValue: UInt8((rawValue & Self.dataStatusBits) >> 5)) ?? .reserved
        }

        /// The same type with its data status cleared (complete).
        public var withoutDataStatus: ExtendedType { ExtendedType(rawValue: rawValue & ~Self.dataStatusBits) }

        private static let dataStatusBits: UInt16 = 0b11 << 5
    }

    public enum DataStatus: UInt8, Sendable {
        case complete = 0, incomplete = 1, truncated = 2, reserved = 3
    }

    public enum Kind: Sendable, Equatable {
        case legacy(LegacyType)
        case extended(ExtendedType)
    }

    public var kind: Kind
    /// 0 public, 1 random, 2/3 resolved from an identity address.
    public var addressType: UInt8
    public var address: BluetoothAddress
    /// Received signal strength in dBm; `nil` when the controller says 127 (not available).
    public var rssi: Int8?
    /// Advertised TX power (extended reports only); `nil` when not present.
    public var txPower: Int8?
    /// The advertising set (extended reports only, 0…15); `nil` when the
    /// advertisement names none (0xFF) or the report is legacy. With the
    /// address it tells one advertiser's chain of fragments from another's.
    public var advertisingSID: UInt8?
    public var data: ArraySlice<UInt8>

    public init(
        kind: Kind, addressType: UInt8, address: BluetoothAddress,
        rssi: Int8?, txPower: Int8? = nil, advertisingSID: UInt8? = nil, data: ArraySlice<UInt8>
    ) {
        self.kind = kind
        self.addressType = addressType
        self.address = address
        self.rssi = rssi
        self.txPower = txPower
        self.advertisingSID = advertisingSID
        self.data = data
    }

    /// Whether the report carries a legacy PDU — a legacy report, or an
    /// extended one that says so: whole by itself, never a piece of a chain.
    public var isLegacyPDU: Bool {
        switch kind {
        case .legacy: true
        case .extended(let type): type.contains(.legacyPDU)
        }
    }

    /// Whether `data` is the whole advertisement: a legacy PDU's always is
    /// (Core 5.4 Vol 4 Part E 7.7.65.13), whatever bits beside its type say;
    /// an extended one may be a piece of a longer one (`ReportChains`).
    public var dataStatus: DataStatus {
        guard !isLegacyPDU, case .extended(let type) = kind else { return .complete }
        return type.dataStatus
    }

    public var isScanResponse: Bool {
        switch kind {
        case .legacy(let type): type == .scanResponse
        case .extended(let type): type.contains(.scanResponse)
        }
    }

    /// A short name for logs and JSON: `ADV_IND`, `SCAN_RSP`, `EXT(0x0013)`.
    public var eventTypeName: String {
        switch kind {
        case .legacy(let type): type.name
        case .extended(let type): "EXT(0x\(hexByte(UInt8(type.rawValue >> 8)))\(hexByte(UInt8(type.rawValue & 0xFF))))"
        }
    }

    public var addressTypeName: String { Self.addressTypeName(addressType) }

    public static func addressTypeName(_ addressType: UInt8) -> String {
        switch addressType {
        case 0: "public"
        case 1: "random"
        case 2: "public-identity"
        case 3: "random-identity"
        default: "type-\(addressType)"
        }
    }
}
