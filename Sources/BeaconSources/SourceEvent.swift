import BeaconCore

/// What a source delivers to the pipeline.
///
/// Sources hand each event to a plain closure, `(SourceEvent) -> Void`, not
/// an `async` one: no receiver waits (the service posts to its mailbox, scan
/// prints into a buffer), and a replay at @max delivers millions a second, for
/// which an async call per event was a tenth of `beacond scan`'s time.
///
/// Sources that see HCI (replay, hci) hand over raw event packets so that
/// parsing and its error counts live in one place (`AdvertisementDecoder`);
/// sources that see decoded advertisements (bluez, simulate) hand those over.
public enum SourceEvent: Sendable {
    case hciEvent(ArraySlice<UInt8>, time: Timestamp)
    case advertisement(Advertisement)
    /// Scanning stopped or resumed, and why.
    case availability(available: Bool, reason: String)
    /// The source and adapter scanning now, as `--source` would name them:
    /// what `auto` chose, the adapter a bare `hci` or `bluez` found. Sent
    /// before scanning starts, and again if another adapter is taken.
    case opened(SourceSpec)
    /// What the source tried on its own and what came of it (re-arming a
    /// scan gone quiet): worth a log line, changes nothing.
    case note(String)
}
