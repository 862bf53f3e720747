/// Reads any recording beacond knows, recognised from its content, not its name.
public struct RecordingReader: Sendable {
    public enum Format: Sendable, Equatable, CustomStringConvertible {
        case btsnoop(BtsnoopFormat.Datalink)
        case hcidump

        public var description: String {
            switch self {
            case .btsnoop(.monitor): "btsnoop (datalink 2001, BlueZ monitor)"
            case .btsnoop(.h4): "btsnoop (datalink 1002, H4)"
            case .btsnoop(.hci): "btsnoop (datalink 1001, HCI)"
            case .hcidump: "hcidump --raw text"
            }
        }
    }

    private enum Reader: Sendable {
        case btsnoop(BtsnoopReader)
        case hcidump(HCIDumpReader)
    }

    private var reader: Reader

    public init(bytes: [UInt8]) throws(RecordingError) {
        try self.init(bytes: bytes[...])
    }

    public init(bytes: ArraySlice<UInt8>) throws(RecordingError) {
        if bytes.starts(with: BtsnoopFormat.magic.prefix(min(bytes.count, BtsnoopFormat.magic.count))), !bytes.isEmpty {
            reader = .btsnoop(try BtsnoopReader(bytes: bytes))
        } else {
            reader = .hcidump(try HCIDumpReader(bytes: bytes))
        }
    }

    public var format: Format {
        switch reader {
        case .btsnoop(let r): .btsnoop(r.datalink)
        case .hcidump: .hcidump
        }
    }

    /// The next HCI event, or `nil` at the end or at the first unreadable record.
    public mutating func next() -> RecordedEvent? {
        switch reader {
        case .btsnoop(var r):
            let event = r.next()
            reader = .btsnoop(r)
            return event
        case .hcidump(var r):
            let event = r.next()
            reader = .hcidump(r)
            return event
        }
    }

    /// Why reading stopped before the end, if it did.
    public var failure: RecordingError? {
        switch reader {
        case .btsnoop(let r): r.failure
        case .hcidump(let r): r.failure
        }
    }

    /// Records or packets that were unreadable and skipped (text logs only;
    /// a binary capture stops at its first bad record instead).
    public var skippedRecords: Int {
        switch reader {
        case .btsnoop: 0
        case .hcidump(let r): r.malformedPackets
        }
    }
}
