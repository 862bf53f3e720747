import BeaconCore

/// The engine's now: where the source's clock stood at its last
/// advertisement (of any kind: a phone's tells the time as well as a
/// beacon's, and the silence rule counts from it), plus the time elapsed on
/// the service clock since that advertisement was taken in. A live source or a paced replay stamps sightings with the service
/// clock, so this is that clock, less the few milliseconds a sighting waits
/// to be taken in; a replay at `@max` runs on the recording's time, whether it
/// runs ahead of the service clock or, when reading cannot keep up, behind it.
/// Timeouts (exits, staleness) then never compare a recording's time with the
/// wall's: with `max(wall, last sighting)` a replay that fell behind made
/// regions exit and enter again while its packets were still coming. (Bus
/// deadlines and rate limits count in the service clock: `ServiceSnapshot.serviceTime`.)
///
/// What a source time is on the service clock, for the wall times the API
/// shows (`LastSeen`), is `shown`: the anchor's offset, held through the few
/// milliseconds each live advertisement waits to be taken in, so a beacon no
/// longer heard keeps its `LastSeen` (until 2026-11-27 it moved at anyone's
/// next advertisement). It follows the source's clock ahead at once, behind
/// once past `tolerance`. The engine's now never holds: a replay at `@max`
/// that falls behind must not see its timeouts run ahead of it.
struct SourceTime {
    /// Far above an advertisement's wait to be taken in, far below any timeout.
    static let tolerance: Duration = .milliseconds(50)
    private var anchor: (source: Timestamp, service: Timestamp)?
    /// Service time less source time, as shown.
    private(set) var shown: Duration = .zero

    /// After advertisements were taken in: `lastHeard` is the latest one's source time.
    mutating func taken(lastHeard: Timestamp?, at service: Timestamp) {
        guard let lastHeard, anchor?.source != lastHeard else { return }
        let offset = service - lastHeard
        if anchor == nil || offset < shown || offset > shown + Self.tolerance { shown = offset }
        anchor = (lastHeard, service)
    }

    func now(_ service: Timestamp) -> Timestamp {
        anchor.map { $0.source + (service - $0.service) } ?? service
    }
}
