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

    /// What the engine knows the region by: its id for a region of
    /// `beacons.yaml`, `owner/id` for a client's. `/` is outside the id rule,
    /// so a client's region can never take or shadow a configured one, and two
    /// clients may both call theirs "mine".
    public var key: String { Self.key(id: id, owner: owner) }

    public static func key(id: String, owner: String?) -> String {
        owner.map { "\($0)/\(id)" } ?? id
    }

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
