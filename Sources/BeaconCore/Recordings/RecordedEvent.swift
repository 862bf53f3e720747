/// An HCI event read from a recording, with the time it was captured.
public struct RecordedEvent: Sendable {
    /// When the event was captured; `nil` for logs that carry no time (plain `hcidump --raw`).
    public var timestamp: Timestamp?
    /// The event packet without an H4 byte: `event code, length, parameters`.
    public var packet: ArraySlice<UInt8>

    public init(timestamp: Timestamp?, packet: ArraySlice<UInt8>) {
        self.timestamp = timestamp
        self.packet = packet
    }
}
