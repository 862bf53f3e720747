/// What each capture format's reader does, so `RecordingReader` holds any of
/// them without a switch per question.
public protocol RecordedEventReader: Sendable {
    /// The format read, for messages (`beacond scan` names it).
    var format: RecordingReader.Format { get }
    /// The next HCI event, or `nil` at the end or at the first unreadable record.
    mutating func next() -> RecordedEvent?
    /// Why reading stopped before the end, if it did.
    var failure: RecordingError? { get }
    /// Packets that were unreadable and skipped: damaged lines of a text log,
    /// damaged or foreign packets of a pcap or pcapng capture. A damaged
    /// block or record header stops the reading instead.
    var skippedRecords: Int { get }
    /// Why the last skipped packet was skipped, where the format says.
    var lastSkipReason: String? { get }
}
