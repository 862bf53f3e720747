import BeaconCore

/// The topic names of one node: `<base>/<node>/…` for state and
/// `<discovery>/<component>/beacond_<node>/<object>/config` for Home Assistant.
public struct MQTTTopics: Hashable, Sendable {
    public var base: String
    public var nodeID: String
    /// Empty: no discovery.
    public var discoveryPrefix: String

    public init(base: String, nodeID: String, discoveryPrefix: String) {
        self.base = base
        self.nodeID = nodeID
        self.discoveryPrefix = discoveryPrefix
    }

    public var node: String { "\(base)/\(nodeID)" }
    public var availability: String { "\(node)/availability" }
    public var nearestVenue: String { "\(node)/nearest_venue" }
    public var scanning: String { "\(node)/scanning" }
    public func region(_ id: String) -> String { "\(node)/region/\(id)" }
    public func beacon(_ identity: BeaconIdentity) -> String {
        "\(node)/beacon/\(identity.uuid.uuidString)-\(identity.major)-\(identity.minor)"
    }

    /// Home Assistant's node id for this beacond: also the device's identifier.
    public var discoveryNode: String { "beacond_\(nodeID)" }

    public func discovery(_ component: String, _ object: String) -> String {
        "\(discoveryPrefix)/\(component)/\(discoveryNode)/\(object)/config"
    }

    /// Where Home Assistant says `online` when it starts (its birth message).
    public var homeAssistantStatus: String { "\(discoveryPrefix)/status" }

    /// Every region config this node may have left on the broker, from this run or an earlier one.
    public var regionDiscoveryFilter: String { discovery("binary_sensor", "+") }

    /// The region id of a region's discovery topic, or `nil` for any other topic.
    public func regionID(discoveryTopic topic: String) -> String? {
        let prefix = "\(discoveryPrefix)/binary_sensor/\(discoveryNode)/region_"
        guard topic.hasPrefix(prefix), topic.hasSuffix("/config") else { return nil }
        let id = String(topic.dropFirst(prefix.count).dropLast("/config".count))
        return Identifier.isValid(id) ? id : nil
    }
}
