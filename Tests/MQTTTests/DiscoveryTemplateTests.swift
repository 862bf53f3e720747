@testable import BeaconCore
import BeaconMQTT
import BeaconTestSupport
import Foundation
import Testing

/// The discovery configs' templates rendered by Jinja2, Home Assistant's
/// template engine, in its immutable sandbox as Home Assistant renders them,
/// against the payloads beacond publishes: what each entity's state becomes.
@Suite struct DiscoveryTemplateTests {
    static let discovery = HomeAssistantDiscovery(topics: MQTTPublicationTests.topics, version: "1.0")

    /// `value_template` (or another key) of a config.
    static func template(_ config: MQTTMessage, _ key: String = "value_template") throws -> String {
        let object = try MQTTPublicationTests.json(config.payload)
        return try #require(object[key] as? String, "\(config.topic) has no \(key)")
    }

    /// Each (template, payload) rendered with `value` and, when it parses, `value_json`.
    static func render(_ cases: [(template: String, payload: String)]) async throws -> [String] {
        let file = try TestSupport.temporaryDirectory().appendingPathComponent("cases.json")
        try JSONSerialization.data(withJSONObject: cases.map { ["template": $0.template, "payload": $0.payload] }).write(to: file)
        let script = """
            import json, sys
            from jinja2.sandbox import ImmutableSandboxedEnvironment
            env = ImmutableSandboxedEnvironment()
            out = []
            for case in json.load(open(sys.argv[1])):
                variables = {"value": case["payload"]}
                try:
                    variables["value_json"] = json.loads(case["payload"])
                except ValueError:
                    pass
                out.append(env.from_string(case["template"]).render(**variables))
            print(json.dumps(out))
            """
        let result = try await TestSupport.run("/usr/bin/python3", ["-c", script, file.path])
        try #require(result.status == 0, "\(result.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String])
    }

    static func venue(name: String, source: NearestVenue.Source = .ranging) -> NearestVenue {
        NearestVenue(
            venueID: "counter-1", name: name, source: source,
            beacon: source == .ranging ? MQTTPublicationTests.beacon(minor: 1, distance: 0.64) : nil,
            runnerUpID: nil, margin: source == .ranging ? 1 : 0, isStationary: false)
    }

    @Test func statesAreWhatTheEntitiesShouldShow() async throws {
        // 150 characters of e and a combining accent: 300 code points, more than Home Assistant keeps.
        let long = String(repeating: "e\u{301}", count: 150)
        let nearest = try Self.template(Self.discovery.nearestVenue)
        let distance = try Self.template(Self.discovery.nearestVenueDistance)
        let scanning = try Self.template(Self.discovery.scanning)
        let region = try Self.template(Self.discovery.region("caffe-macs"))
        let attributes = try Self.template(Self.discovery.nearestVenue, "json_attributes_template")
        let ranged = MQTTPayloads.nearestVenue(Self.venue(name: "Caffè Macs — Counter 1"))
        let rendered = try await Self.render([
            (nearest, ranged),
            (nearest, MQTTPayloads.nearestVenue(Self.venue(name: "Counter 2", source: .preference))),
            (nearest, MQTTPayloads.nearestVenue(nil)),
            (nearest, MQTTPayloads.nearestVenue(Self.venue(name: long))),
            (distance, ranged),
            (distance, MQTTPayloads.nearestVenue(nil)),
            (scanning, MQTTPayloads.scanning(true, reason: "scanning with simulate")),
            (scanning, MQTTPayloads.scanning(false, reason: "hci0 went down")),
            (region, "inside"), (region, "outside"), (region, "unknown"),
            (attributes, ranged),
        ])
        #expect(Array(rendered.prefix(4)) == ["Caffè Macs — Counter 1", "Counter 2", "none", String(long.unicodeScalars.prefix(255))])
        #expect(long.count <= 200 && long.unicodeScalars.count > 255)
        // Home Assistant takes "None" for unknown.
        #expect(Array(rendered[4...5]) == ["0.64", "None"])
        #expect(Array(rendered[6...7]) == ["scanning", "not scanning"])
        #expect(Array(rendered[8...10]) == ["inside", "outside", "None"])
        let attributeObject = try MQTTPublicationTests.json(rendered[11])
        #expect(Set(attributeObject.keys) == ["id", "proximity", "runner_up", "stationary", "source"])
        #expect(attributeObject["id"] as? String == "counter-1" && attributeObject["source"] as? String == "ranging")
    }
}
