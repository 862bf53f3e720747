import BeaconCore

/// What the engine looked like after its last step, published for readers on
/// other threads (the D-Bus handlers), so they never wait for the engine.
public struct ServiceSnapshot: Sendable {
    /// The engine's now: the source's clock (`SourceTime`), which a replay at @max runs ahead of or behind the wall.
    public var time: Timestamp
    /// The service clock when it was taken: what bus deadlines and rate limits
    /// count in, since callers and the bus live in real time whatever a replay does.
    public var serviceTime: Timestamp
    /// Service time less the engine's, for the wall times the API shows
    /// (`SourceTime.shown`: held through live advertisements' waits).
    public var shownOffset: Duration
    public var configuration: Configuration
    public var regions: [RegionDefinition]
    public var regionsByKey: [String: RegionDefinition]
    public var regionStates: [String: RegionState]
    /// Nearest first, unknown last.
    public var ranged: [RangedBeacon]
    public var rangedByIdentity: [BeaconIdentity: RangedBeacon]
    public var nearest: NearestVenue?
    public var preferredVenue: String?
    public var available: Bool
    public var availabilityReason: String
    /// The source scanning, as `--source` would name it: once it has opened,
    /// what `auto` chose and the adapter a bare `hci` or `bluez` found.
    public var source: SourceSpec
    /// Advertisements dropped because the engine could not keep up, since start.
    public var droppedAdvertisements: UInt64
    /// The MQTT link: "off", or the publisher's status ("connected: …", "disconnected: why; …").
    public var mqtt: String

    public init(
        time: Timestamp, serviceTime: Timestamp? = nil, shownOffset: Duration? = nil, engine: BeaconEngine, available: Bool,
        availabilityReason: String,
        source: SourceSpec, droppedAdvertisements: UInt64 = 0, mqtt: String = "off"
    ) {
        self.time = time
        self.serviceTime = serviceTime ?? time
        self.shownOffset = shownOffset ?? (self.serviceTime - time)
        configuration = engine.configuration
        regions = engine.monitor.definitions
        regionsByKey = Dictionary(regions.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
        regionStates = engine.monitor.states
        ranged = engine.rangedBeacons()
        rangedByIdentity = Dictionary(ranged.map { ($0.identity, $0) }, uniquingKeysWith: { first, _ in first })
        nearest = engine.nearestVenue
        preferredVenue = engine.preferredVenueID
        self.available = available
        self.availabilityReason = availabilityReason
        self.source = source
        self.droppedAdvertisements = droppedAdvertisements
        self.mqtt = mqtt
    }
}
