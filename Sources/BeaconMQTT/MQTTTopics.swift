import BeaconCore

/// The topic names of one node: `<base>/<node>/…` for state and
/// `<discovery>/<component>/beacond_<node>/<object>/config` for Home Assistant.
public struct MQTTTopics: Hashable, Sendable {
    public var base: String
    public var nodeID: String
    /// Empty: no discovery.
    public var discoveryPrefix: String
    /// Where Home Assistant says `online` when it starts (its birth message):
    /// its own setting, `homeassistant/status` unless changed there, whatever
    /// the discovery prefix.
    public var homeAssistantStatus: String

    public init(base: String, nodeID: String, discoveryPrefix: String, homeAssistantStatus: String = MQTTSettings.defaultStatusTopic) {
        self.base = base
        self.nodeID = nodeID
        self.discoveryPrefix = discoveryPrefix
        self.homeAssistantStatus = homeAssistantStatus
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

    /// Every config this node may have left on the broker, from this run or an earlier one.
    public var discoveryFilter: String { discovery("+", "+") }

    /// Every region config this node may have left on the broker.
    public var regionDiscoveryFilter: String { discovery("binary_sensor", "+") }

    /// Every region state this node may have left on the broker.
    public var regionStateFilter: String { region("+") }

    /// The region id of a region's state topic, or `nil` for any other topic.
    public func regionID(stateTopic topic: String) -> String? {
        let prefix = region("")
        guard topic.hasPrefix(prefix) else { return nil }
        let id = String(topic.dropFirst(prefix.count))
        return Identifier.isValid(id) ? id : nil
    }

    /// The region id of a region's discovery topic, or `nil` for any other topic.
    public func regionID(discoveryTopic topic: String) -> String? {
        let prefix = "\(discoveryPrefix)/binary_sensor/\(discoveryNode)/region_"
        guard topic.hasPrefix(prefix), topic.hasSuffix("/config") else { return nil }
        let id = String(topic.dropFirst(prefix.count).dropLast("/config".count))
        return Identifier.isValid(id) ? id : nil
    }
}
