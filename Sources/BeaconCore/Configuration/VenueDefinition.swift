/// A place people ask about ("Caffè Macs — Counter 1"), marked by the beacons
/// that match its constraint.
public struct VenueDefinition: Hashable, Sendable {
    public var id: String
    public var name: String
    public var constraint: BeaconConstraint
    /// RSSI at 1 m measured on site; overrides the frame's measured power.
    public var measuredPower: Int8?
    /// Beyond this distance (metres) the venue is not a candidate for nearest.
    public var maxDistance: Double?

    public init(
        id: String, name: String, constraint: BeaconConstraint,
        measuredPower: Int8? = nil, maxDistance: Double? = nil
    ) {
        self.id = id
        self.name = name
        self.constraint = constraint
        self.measuredPower = measuredPower
        self.maxDistance = maxDistance
    }
}
