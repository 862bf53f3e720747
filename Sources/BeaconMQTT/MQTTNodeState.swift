import BeaconCore

/// What one beacond node tells the broker, taken from the engine's last step.
public struct MQTTNodeState: Sendable, Equatable {
    public var nearest: NearestVenue?
    /// `beacons.yaml`'s regions by id (clients' D-Bus regions are theirs, not the site's).
    public var regions: [String: RegionState]
    public var scanning: Bool
    public var scanningReason: String
    /// Published only with `publish_beacons`.
    public var beacons: [RangedBeacon]

    public init(
        nearest: NearestVenue?, regions: [String: RegionState], scanning: Bool, scanningReason: String,
        beacons: [RangedBeacon] = []
    ) {
        self.nearest = nearest
        self.regions = regions
        self.scanning = scanning
        self.scanningReason = scanningReason
        self.beacons = beacons
    }
}
