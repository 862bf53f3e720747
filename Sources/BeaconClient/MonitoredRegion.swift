import BeaconCore

/// A region a client asks beacond to monitor for it, like a `CLMonitor` condition.
public struct MonitoredRegion: Sendable, Hashable {
    /// The client's own id for it (the rule of beacons.yaml's ids: letters, digits, `-`, `_`).
    public var id: String
    public var constraint: BeaconConstraint
    public var notifyOnEntry: Bool
    public var notifyOnExit: Bool

    public init(_ id: String, constraint: BeaconConstraint, notifyOnEntry: Bool = true, notifyOnExit: Bool = true) {
        self.id = id
        self.constraint = constraint
        self.notifyOnEntry = notifyOnEntry
        self.notifyOnExit = notifyOnExit
    }
}
