import BeaconCore

/// Home Assistant's MQTT discovery configs for one node: a device with a
/// `sensor` for the nearest venue (the fields of its JSON that change
/// seldom as attributes), one for its distance (off until enabled), a
/// `binary_sensor` (occupancy) per region and a `sensor` for scanning. Unique
/// ids are made of the node id and region id only, so they survive restarts.
public struct HomeAssistantDiscovery: Sendable {
    public var topics: MQTTTopics
    public var version: String

    public init(topics: MQTTTopics, version: String) {
        self.topics = topics
        self.version = version
    }

    /// Attributes are the fields that change when the answer does, not the
    /// distance, accuracy and margin that change every second: Home
    /// Assistant records a state row for every change of an attribute.
    public var nearestVenue: MQTTMessage {
        config("sensor", "nearest_venue", [
            "name": "Nearest venue",
            "state_topic": .string(topics.nearestVenue),
            // Home Assistant refuses a state over 255 characters (code points)
            // as unknown; a name of 200 characters may have more.
            "value_template": "{{ value_json.name[:255] if value_json.id else 'none' }}",
            "json_attributes_topic": .string(topics.nearestVenue),
            "json_attributes_template": .string(
                "{{ {" + Self.slowFields.map { "'\($0)': value_json.\($0)" }.joined(separator: ", ") + "} | tojson }}"),
            "icon": "mdi:map-marker-radius",
        ])
    }

    /// The `nearest_venue` fields that are the nearest venue sensor's attributes.
    static let slowFields = ["id", "proximity", "runner_up", "stationary", "source"]

    /// The nearest venue's distance in metres, unknown without one; disabled
    /// until a user enables it (a number that changes every second fills
    /// Home Assistant's recorder).
    public var nearestVenueDistance: MQTTMessage {
        config("sensor", "nearest_venue_distance", [
            "name": "Nearest venue distance",
            "state_topic": .string(topics.nearestVenue),
            "value_template": "{{ value_json.distance if value_json.distance is not none else 'None' }}",
            "device_class": "distance",
            "unit_of_measurement": "m",
            "state_class": "measurement",
            "suggested_display_precision": 1,
            "enabled_by_default": false,
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
        // Who sent the config, which Home Assistant logs (and asks of device-based discovery).
        fields["origin"] = ["name": "beacond", "sw_version": .string(version)]
        return MQTTMessage(topic: topics.discovery(component, object), payload: MQTTPayloads.json(fields), retain: true)
    }
}
