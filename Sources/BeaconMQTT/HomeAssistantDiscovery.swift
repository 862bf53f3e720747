import BeaconCore

/// Home Assistant's MQTT discovery configs for one node: a device with a
/// `sensor` for the nearest venue (its JSON as attributes), a
/// `binary_sensor` (occupancy) per region and a `sensor` for scanning. Unique
/// ids are made of the node id and region id only, so they survive restarts.
public struct HomeAssistantDiscovery: Sendable {
    public var topics: MQTTTopics
    public var version: String

    public init(topics: MQTTTopics, version: String) {
        self.topics = topics
        self.version = version
    }

    public var nearestVenue: MQTTMessage {
        config("sensor", "nearest_venue", [
            "name": "Nearest venue",
            "state_topic": .string(topics.nearestVenue),
            "value_template": "{{ value_json.name if value_json.id else 'none' }}",
            "json_attributes_topic": .string(topics.nearestVenue),
            "icon": "mdi:map-marker-radius",
        ])
    }

    public var scanning: MQTTMessage {
        config("sensor", "scanning", [
            "name": "Scanning",
            "state_topic": .string(topics.scanning),
            "value_template": "{{ 'scanning' if value_json.available else 'not scanning' }}",
            "json_attributes_topic": .string(topics.scanning),
            "icon": "mdi:bluetooth-audio",
            "entity_category": "diagnostic",
        ])
    }

    /// `inside` is on, `outside` off, `unknown` Home Assistant's unknown (a template giving `None`).
    public func region(_ id: String) -> MQTTMessage {
        config("binary_sensor", "region_\(id)", [
            "name": .string("Region \(id)"),
            "state_topic": .string(topics.region(id)),
            "device_class": "occupancy",
            "payload_on": "inside",
            "payload_off": "outside",
            "value_template": "{{ value if value in ('inside', 'outside') else 'None' }}",
        ])
    }

    /// The empty retained config that makes Home Assistant remove a region's entity.
    public func removal(ofRegion id: String) -> MQTTMessage {
        MQTTMessage(topic: topics.discovery("binary_sensor", "region_\(id)"), payload: "", retain: true)
    }

    private func config(_ component: String, _ object: String, _ fields: [String: JSONValue]) -> MQTTMessage {
        var fields = fields
        fields["unique_id"] = .string("\(topics.discoveryNode)_\(object)")
        fields["availability_topic"] = .string(topics.availability)
        fields["payload_available"] = "online"
        fields["payload_not_available"] = "offline"
        fields["qos"] = 1
        fields["device"] = [
            "identifiers": [.string(topics.discoveryNode)], "name": .string("beacond \(topics.nodeID)"),
            "manufacturer": "beacond", "model": "iBeacon presence", "sw_version": .string(version),
        ]
        return MQTTMessage(topic: topics.discovery(component, object), payload: MQTTPayloads.json(fields), retain: true)
    }
}
