/// Everything `beacons.yaml` says, validated: regions, venues and figures.
public struct Configuration: Hashable, Sendable {
    /// The source named in the file; the command line's `--source` wins over it.
    public var source: SourceSpec?
    public var ranging: RangingSettings
    public var regions: [RegionDefinition]
    public var venues: [VenueDefinition]
    /// `nil`: no `mqtt:` section, nothing is published.
    public var mqtt: MQTTSettings?

    /// How far `venue` may be and become the nearest: its own `max_distance`, or the ranging section's.
    public func maxDistance(of venue: VenueDefinition) -> Double? { venue.maxDistance ?? ranging.maxDistance }

    /// The most regions a file may list: every sighting is matched against
    /// each, and a site has a few.
    public static let mostRegions = 1_000
    /// The most venues: each is a beacon, and the engine tracks at most this many.
    public static let mostVenues = EngineLimits().trackedBeacons

    public init(
        source: SourceSpec? = nil, ranging: RangingSettings = RangingSettings(),
        regions: [RegionDefinition] = [], venues: [VenueDefinition] = [],
        mqtt: MQTTSettings? = nil
    ) {
        self.source = source
        self.ranging = ranging
        self.regions = regions
        self.venues = venues
        self.mqtt = mqtt
    }
}
