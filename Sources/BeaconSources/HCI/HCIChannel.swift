import BeaconCore

/// What the `hci` source needs of a raw HCI socket: the seam where tests put
/// a scripted controller and the service puts `HCISocket`.
public protocol HCIChannel {
    /// The adapter's name, `hciN`, for messages.
    var name: String { get }
    /// Whether the adapter is still up; asked when it has been quiet for a while.
    var isAdapterUp: Bool { get }
    /// The socket's current filter, saved to be restored when scanning stops.
    func filter() throws(SourceError) -> HCISocketFilter
    func setFilter(_ filter: HCISocketFilter) throws(SourceError)
    /// Writes one H4 packet (`01 opcode length parameters`).
    func send(_ packet: [UInt8]) throws(SourceError)
    /// The next packet read (H4 type byte first), or `nil` when none arrived within `timeout`.
    func receive(timeout: Duration) throws(SourceError) -> [UInt8]?
}

/// A raw HCI socket's filter (`struct hci_filter`): which packet types and
/// events reach the reader. The kernel keeps one per socket.
public struct HCISocketFilter: Sendable, Equatable {
    /// Bit n set: packets of H4 type n pass.
    public var typeMask: UInt32
    /// Bit n set: events with code n pass.
    public var eventMask: UInt64
    /// Only Command Complete/Status for this opcode pass; 0 for all.
    public var opcode: UInt16

    public init(typeMask: UInt32, eventMask: UInt64, opcode: UInt16 = 0) {
        self.typeMask = typeMask
        self.eventMask = eventMask
        self.opcode = opcode
    }

    public static let eventPacketType: UInt8 = 0x04

    /// Events only: command answers while setting up, then advertising reports.
    public static let scanning = HCISocketFilter(
        typeMask: 1 << UInt32(eventPacketType),
        eventMask: 1 << UInt64(HCICommandOutcome.commandCompleteCode) | 1 << UInt64(HCICommandOutcome.commandStatusCode)
            | 1 << UInt64(HCIEvent.leMetaEventCode))
}
