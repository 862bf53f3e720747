import BeacondAPI

/// One element of `BeaconClient.events()`: whatever beacond signalled, as it happened.
public enum BeaconEvent: Sendable, Hashable {
    /// A region that asks to be told was entered or exited (by id, as `regionEvents()` gives it).
    case region(Beacond.RegionEvent)
    /// The nearest venue changed, or the listener settled or moved on (`isStationary`).
    case nearestVenue(Beacond.VenueUpdate)
    /// The source started or stopped delivering, and why.
    case availability(Beacond.Availability)
}
