/// A monitored region: a constraint with an id and what to announce.
public struct RegionDefinition: Hashable, Sendable {
    public var id: String
    public var constraint: BeaconConstraint
    public var notifyOnEntry: Bool
    public var notifyOnExit: Bool
    /// Owner: `nil` for regions from `beacons.yaml`, a bus name for a client's.
    public var owner: String?
    /// Overrides of the `ranging` defaults for this region.
    public var enterRSSI: Double?
    public var exitRSSI: Double?
    public var exitAfter: Duration?

    public init(
        id: String, constraint: BeaconConstraint, notifyOnEntry: Bool = true, notifyOnExit: Bool = true,
        owner: String? = nil, enterRSSI: Double? = nil, exitRSSI: Double? = nil, exitAfter: Duration? = nil
    ) {
        self.id = id
        self.constraint = constraint
        self.notifyOnEntry = notifyOnEntry
        self.notifyOnExit = notifyOnExit
        self.owner = owner
        self.enterRSSI = enterRSSI
        self.exitRSSI = exitRSSI
        self.exitAfter = exitAfter
    }
}
