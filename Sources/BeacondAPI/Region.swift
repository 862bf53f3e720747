import BeaconCore

extension Beacond {
    /// A monitored region as the API gives it (Region1's properties).
    public struct Region: Sendable, Hashable {
        public var id: String
        public var constraint: BeaconConstraint
        public var state: RegionState
        public var notifyOnEntry: Bool
        public var notifyOnExit: Bool
        /// `nil` for beacons.yaml's, else the owning client's bus name.
        public var owner: String?

        public init(id: String, constraint: BeaconConstraint, state: RegionState, notifyOnEntry: Bool, notifyOnExit: Bool, owner: String?) {
            self.id = id
            self.constraint = constraint
            self.state = state
            self.notifyOnEntry = notifyOnEntry
            self.notifyOnExit = notifyOnExit
            self.owner = owner
        }
    }

    /// One element of `monitor(…)`, like a `CLMonitor` event.
    public struct RegionEvent: Sendable, Hashable {
        public enum Kind: Sendable, Hashable {
            case entered, exited
        }

        /// The caller's id for the region.
        public var id: String
        public var kind: Kind
        /// Its Region1 object path: a region of beacons.yaml's under
        /// `/org/beacond/region`, a client's under `/org/beacond/client`, so
        /// that one id in both is told apart.
        public var region: String

        public init(id: String, kind: Kind, region: String) {
            self.id = id
            self.kind = kind
            self.region = region
        }
    }

    /// One element of `availabilityUpdates()`.
    public struct Availability: Sendable, Hashable {
        public var available: Bool
        public var reason: String

        public init(available: Bool, reason: String) {
            self.available = available
            self.reason = reason
        }
    }
}
