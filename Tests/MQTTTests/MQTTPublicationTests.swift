@testable import BeaconCore
import BeaconMQTT
import Foundation
import Testing

/// The publisher's pure part, on a hand clock: what is sent, when, and again after a reconnect.
@Suite struct MQTTPublicationTests {
    static let topics = MQTTTopics(base: "beacond", nodeID: "kiosk-7", discoveryPrefix: "homeassistant")
    static let t0 = Timestamp(microsecondsSinceEpoch: 1_700_000_000_000_000)
    static let cafe = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!

    static func beacon(minor: UInt16, distance: Double) -> RangedBeacon {
        RangedBeacon(
            identity: BeaconIdentity(uuid: cafe, major: 1, minor: minor), rssi: -60, filteredRSSI: -60.123,
            measuredPower: -59, advertisedPower: -59, distance: distance, accuracy: 0.456, proximity: .near, isStationary: true, lastSeen: t0,
            address: BluetoothAddress(0xC0, 0, 0, 0, 0, 1), venueID: "counter-\(minor)")
    }

    static func nearest(distance: Double) -> NearestVenue {
        NearestVenue(
            venueID: "counter-1", name: "Caffè Macs — Counter 1", source: .ranging, beacon: beacon(minor: 1, distance: distance),
            runnerUpID: "counter-2", margin: 0.4321, isStationary: true)
    }

    static func state(regions: [String: RegionState] = ["caffe-macs": .inside, "kaffeehaus": .outside], distance: Double = 1.234) -> MQTTNodeState {
        MQTTNodeState(
            nearest: nearest(distance: distance), regions: regions, scanning: true, scanningReason: "scanning with simulate",
            beacons: [beacon(minor: 1, distance: distance)])
    }

    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test func firstSendHasDiscoveryFirstThenAvailabilityAndState() throws {
        var publication = MQTTPublication(topics: Self.topics, version: "1.0", publishBeacons: false)
        publication.update(Self.state())
        let sent = publication.due(now: Self.t0)
        let topics = sent.map(\.topic)
        #expect(Set(topics) == [
            "homeassistant/sensor/beacond_kiosk-7/nearest_venue/config", "homeassistant/sensor/beacond_kiosk-7/nearest_venue_distance/config",
            "homeassistant/sensor/beacond_kiosk-7/scanning/config", "homeassistant/binary_sensor/beacond_kiosk-7/region_caffe-macs/config",
            "homeassistant/binary_sensor/beacond_kiosk-7/region_kaffeehaus/config",
            "beacond/kiosk-7/availability", "beacond/kiosk-7/nearest_venue", "beacond/kiosk-7/scanning",
            "beacond/kiosk-7/region/caffe-macs", "beacond/kiosk-7/region/kaffeehaus",
        ])
        let lastConfig = try #require(topics.lastIndex { $0.hasSuffix("/config") })
        let availability = try #require(topics.firstIndex(of: "beacond/kiosk-7/availability"))
        #expect(lastConfig < availability && availability == 5)
        #expect(sent.allSatisfy { $0.retain })
        #expect(sent.first { $0.topic == "beacond/kiosk-7/region/caffe-macs" }?.payload == "inside")
        let venue = try Self.json(try #require(sent.first { $0.topic == "beacond/kiosk-7/nearest_venue" }).payload)
        #expect(venue["id"] as? String == "counter-1")
        #expect(venue["distance"] as? Double == 1.23)
        #expect(venue["accuracy"] as? Double == 0.46)
        #expect(venue["margin"] as? Double == 0.43)
        #expect(venue["runner_up"] as? String == "counter-2")
        #expect(venue["source"] as? String == "ranging")
        #expect(venue["stationary"] as? Bool == true)
        #expect(venue["proximity"] as? String == "near")
        #expect(publication.lastWill == MQTTMessage(topic: "beacond/kiosk-7/availability", payload: "offline", retain: true))
    }

    @Test func unchangedStateIsNotSentAgainAndChangesWaitForTheInterval() {
        var publication = MQTTPublication(topics: Self.topics, version: "1.0", publishBeacons: false)
        publication.update(Self.state())
        _ = publication.due(now: Self.t0)
        publication.update(Self.state())
        #expect(publication.due(now: Self.t0 + .seconds(5)).isEmpty)
        // A new distance 200 ms after the first send waits; the newest of two waiting values goes out.
        publication.update(Self.state(distance: 2.0))
        #expect(publication.due(now: Self.t0 + .milliseconds(200)).isEmpty)
        publication.update(Self.state(distance: 3.0))
        #expect(publication.due(now: Self.t0 + .milliseconds(900)).isEmpty)
        let later = publication.due(now: Self.t0 + .milliseconds(1000))
        #expect(later.map(\.topic) == ["beacond/kiosk-7/nearest_venue"])
        #expect(later.first?.payload.contains("\"distance\":3") == true)
    }

    @Test func aReconnectRepublishesEverythingRetained() {
        var publication = MQTTPublication(topics: Self.topics, version: "1.0", publishBeacons: false)
        publication.update(Self.state())
        let first = publication.due(now: Self.t0)
        publication.connectionLost()
        // While away, regions change several times: only the newest is sent.
        publication.update(Self.state(regions: ["caffe-macs": .outside, "kaffeehaus": .outside]))
        publication.update(Self.state(regions: ["caffe-macs": .inside, "kaffeehaus": .inside]))
        let again = publication.due(now: Self.t0 + .milliseconds(10))
        #expect(Set(again.map(\.topic)) == Set(first.map(\.topic)))
        #expect(again.first { $0.topic == "beacond/kiosk-7/region/kaffeehaus" }?.payload == "inside")
        #expect(publication.heldTopics == first.count)
    }

    @Test func aRegionThatLeavesTheFileIsClearedWithItsEntity() {
        var publication = MQTTPublication(topics: Self.topics, version: "1.0", publishBeacons: false)
        publication.update(Self.state())
        _ = publication.due(now: Self.t0)
        publication.update(Self.state(regions: ["caffe-macs": .inside]))
        let sent = publication.due(now: Self.t0 + .seconds(2))
        #expect(Set(sent.filter { $0.payload.isEmpty }.map(\.topic)) == [
            "homeassistant/binary_sensor/beacond_kiosk-7/region_kaffeehaus/config", "beacond/kiosk-7/region/kaffeehaus",
        ])
        #expect(sent.allSatisfy { $0.retain })
        // Sent once, then forgotten: not again after a reconnect.
        publication.connectionLost()
        #expect(!publication.due(now: Self.t0 + .seconds(4)).contains { $0.topic.contains("kaffeehaus") })
    }

    @Test func aConfigLeftByAnEarlierRunIsClearedButNotACurrentOne() {
        var publication = MQTTPublication(topics: Self.topics, version: "1.0", publishBeacons: false)
        publication.update(Self.state())
        _ = publication.due(now: Self.t0)
        publication.received(topic: "homeassistant/binary_sensor/beacond_kiosk-7/region_gone/config", payload: ReceivedPayload("{}"))
        publication.received(topic: "homeassistant/binary_sensor/beacond_kiosk-7/region_caffe-macs/config", payload: ReceivedPayload("{}"))
        publication.received(topic: "homeassistant/binary_sensor/beacond_other/region_x/config", payload: ReceivedPayload("{}"))
        publication.received(topic: "homeassistant/binary_sensor/beacond_kiosk-7/region_old/config", payload: ReceivedPayload(""))
        let sent = publication.due(now: Self.t0 + .seconds(2))
        #expect(Set(sent.filter { $0.payload.isEmpty }.map(\.topic)) == [
            "homeassistant/binary_sensor/beacond_kiosk-7/region_gone/config", "beacond/kiosk-7/region/gone",
        ])
        // The current one, "{}" on the broker, is this node's again, not cleared.
        #expect(sent.filter { !$0.payload.isEmpty }.map(\.topic) == ["homeassistant/binary_sensor/beacond_kiosk-7/region_caffe-macs/config"])
        #expect(publication.subscriptions == ["beacond/kiosk-7/region/+", "homeassistant/+/beacond_kiosk-7/+/config", "homeassistant/status"])
    }

    @Test func configsSeenBeforeTheFirstStateWaitForIt() {
        var publication = MQTTPublication(topics: Self.topics, version: "1.0", publishBeacons: false)
        // The broker's retained configs can arrive before the engine's first state.
        publication.received(topic: "homeassistant/binary_sensor/beacond_kiosk-7/region_caffe-macs/config", payload: ReceivedPayload("{}"))
        publication.received(topic: "homeassistant/binary_sensor/beacond_kiosk-7/region_gone/config", payload: ReceivedPayload("{}"))
        #expect(!publication.due(now: Self.t0).contains { $0.payload.isEmpty })
        publication.update(Self.state())
        let sent = publication.due(now: Self.t0 + .seconds(1))
        #expect(Set(sent.filter { $0.payload.isEmpty }.map(\.topic)) == [
            "homeassistant/binary_sensor/beacond_kiosk-7/region_gone/config", "beacond/kiosk-7/region/gone",
        ])
        #expect(sent.first { $0.topic == "beacond/kiosk-7/region/caffe-macs" }?.payload == "inside")
    }

    @Test func homeAssistantComingOnlineGetsEverythingAgain() {
        var publication = MQTTPublication(topics: Self.topics, version: "1.0", publishBeacons: false)
        publication.update(Self.state())
        let first = publication.due(now: Self.t0)
        publication.received(topic: "homeassistant/status", payload: ReceivedPayload("offline"))
        #expect(publication.due(now: Self.t0 + .seconds(2)).isEmpty)
        // A retained `online`, handed to beacond's new subscription, is an old birth: nothing again.
        publication.received(topic: "homeassistant/status", payload: ReceivedPayload("online"), retained: true)
        #expect(publication.due(now: Self.t0 + .seconds(2)).isEmpty)
        publication.received(topic: "homeassistant/status", payload: ReceivedPayload("online"))
        #expect(Set(publication.due(now: Self.t0 + .seconds(2)).map(\.topic)) == Set(first.map(\.topic)))
    }

    /// Home Assistant's birth message said 10,000 times a second (anyone
    /// may publish it) made 2,000 republishes of every topic in 10 s in the
    /// audit of 2026-11-26; paced per topic, still every topic once a second
    /// (the audit of 2026-11-27). Now births are answered once per
    /// `birthInterval`, and one said meanwhile is answered when it is over.
    @Test func aFloodOfBirthMessagesIsAnsweredOncePerInterval() {
        var publication = MQTTPublication(topics: Self.topics, version: "1.0", publishBeacons: false)
        publication.update(Self.state())
        let first = publication.due(now: Self.t0)
        var sent = 0
        for tenth in 1...300 {
            for _ in 0..<100 { publication.received(topic: "homeassistant/status", payload: ReceivedPayload("online")) }
            sent += publication.due(now: Self.t0 + .milliseconds(100 * tenth)).count
        }
        // 30 s: everything once, at 1 s (a topic is sent at most once a second), then nothing.
        #expect(sent == first.count)
        // The births said since are answered once the interval is over.
        let after = Self.t0 + .milliseconds(100) + MQTTPublication.birthInterval
        #expect(publication.due(now: after).count == first.count)
        #expect(publication.due(now: after + .seconds(5)).isEmpty)
    }

    /// Removals of what earlier runs left go after the node's own state, and
    /// those past the limit are counted (the shell says so) rather than lost silently.
    @Test func removalsComeAfterTheStateAndThoseThatDoNotFitAreCounted() {
        var publication = MQTTPublication(topics: Self.topics, version: "1.0", publishBeacons: false)
        for index in 0..<(MQTTPublication.pendingRemovalLimit + 100) {
            publication.received(topic: "homeassistant/binary_sensor/beacond_kiosk-7/region_junk\(index)/config", payload: ReceivedPayload("{}"))
        }
        publication.update(Self.state())
        let sent = publication.due(now: Self.t0)
        let firstRemoval = sent.firstIndex { $0.payload.isEmpty } ?? -1
        let lastState = sent.lastIndex { !$0.payload.isEmpty } ?? .max
        #expect(lastState < firstRemoval)
        #expect(sent.last { !$0.payload.isEmpty }?.topic.hasPrefix("beacond/kiosk-7/") == true)
        #expect(publication.removalsDropped > 0)
        #expect(publication.heldTopics <= MQTTPublication.pendingRemovalLimit + 20)
    }

    /// A region of the node's own whose removal does not fit (a flood of
    /// leftovers fills the queue) is left on the broker, but never sent again:
    /// not after the next update, not after a reconnect.
    @Test func aRegionWhoseRemovalDoesNotFitIsNotRepublished() {
        var publication = MQTTPublication(topics: Self.topics, version: "1.0", publishBeacons: false)
        for index in 0..<(MQTTPublication.pendingRemovalLimit + 100) {
            publication.received(topic: "homeassistant/binary_sensor/beacond_kiosk-7/region_junk\(index)/config", payload: ReceivedPayload("{}"))
        }
        publication.update(Self.state())
        let dropped = publication.removalsDropped
        publication.update(Self.state(regions: ["caffe-macs": .inside]))
        #expect(publication.removalsDropped == dropped + 1)
        let gone = ["beacond/kiosk-7/region/kaffeehaus", "homeassistant/binary_sensor/beacond_kiosk-7/region_kaffeehaus/config"]
        #expect(!publication.due(now: Self.t0).contains { gone.contains($0.topic) && !$0.payload.isEmpty })
        publication.connectionLost()
        #expect(!publication.due(now: Self.t0 + .seconds(2)).contains { gone.contains($0.topic) })
    }

    /// Another client replacing or deleting this node's config (an entity
    /// gone from Home Assistant) has it sent again, still at most once a
    /// second; the node's own echo changes nothing.
    @Test func aConfigOfThisNodeReplacedOrDeletedIsSentAgain() throws {
        var publication = MQTTPublication(topics: Self.topics, version: "1.0", publishBeacons: false)
        publication.update(Self.state())
        let topic = "homeassistant/binary_sensor/beacond_kiosk-7/region_caffe-macs/config"
        let mine = try #require(publication.due(now: Self.t0).first { $0.topic == topic }).payload
        publication.received(topic: topic, payload: ReceivedPayload(mine))
        #expect(publication.due(now: Self.t0 + .seconds(2)).isEmpty)
        // The same length and first 16 bytes (all the shell kept before 2026-11-27) but one byte changed further on is another config too.
        let kept = 16
        let index = mine.utf8.index(mine.utf8.startIndex, offsetBy: kept + 4)
        var altered = Array(mine.utf8)
        altered[mine.utf8.distance(from: mine.utf8.startIndex, to: index)] ^= 0x01
        let other = String(decoding: altered, as: UTF8.self)
        #expect(other.utf8.count == mine.utf8.count && other.utf8.prefix(kept).elementsEqual(mine.utf8.prefix(kept)))
        publication.received(topic: topic, payload: ReceivedPayload(other))
        #expect(publication.due(now: Self.t0 + .milliseconds(2_500)).map(\.topic) == [topic])
        publication.received(topic: topic, payload: ReceivedPayload(""))
        #expect(publication.due(now: Self.t0 + .seconds(3)).isEmpty)
        #expect(publication.due(now: Self.t0 + .milliseconds(3_500)).map { [$0.topic, $0.payload] } == [[topic, mine]])
    }

    @Test func noDiscoveryWithAnEmptyPrefix() {
        var publication = MQTTPublication(
            topics: MQTTTopics(base: "site/a", nodeID: "pi", discoveryPrefix: ""), version: "1.0", publishBeacons: false)
        publication.update(Self.state())
        let sent = publication.due(now: Self.t0)
        #expect(!sent.contains { $0.topic.hasSuffix("/config") })
        #expect(sent.contains { $0.topic == "site/a/pi/region/caffe-macs" })
        // Its own region states only: to clear those an earlier run left.
        #expect(publication.subscriptions == ["site/a/pi/region/+"])
    }

    /// Without discovery, a region state an earlier run left (the region
    /// since removed from the file) is cleared; a current one is not, and one
    /// another client overwrote is sent again.
    @Test func withoutDiscoveryARegionStateLeftBehindIsCleared() {
        var publication = MQTTPublication(
            topics: MQTTTopics(base: "site/a", nodeID: "pi", discoveryPrefix: ""), version: "1.0", publishBeacons: false)
        // Seen before the first state, judged when it comes.
        publication.received(topic: "site/a/pi/region/gone", payload: ReceivedPayload("inside"))
        publication.update(Self.state())
        #expect(publication.due(now: Self.t0).filter { $0.payload.isEmpty }.map(\.topic) == ["site/a/pi/region/gone"])
        publication.received(topic: "site/a/pi/region/caffe-macs", payload: ReceivedPayload("inside"))
        publication.received(topic: "site/a/pi/region/kaffeehaus", payload: ReceivedPayload("inside"))
        publication.received(topic: "site/a/pi/region/also-gone", payload: ReceivedPayload("outside"))
        publication.received(topic: "site/a/pi/region/not an id", payload: ReceivedPayload("outside"))
        let sent = publication.due(now: Self.t0 + .seconds(1))
        #expect(sent.filter { $0.payload.isEmpty }.map(\.topic) == ["site/a/pi/region/also-gone"])
        #expect(sent.filter { !$0.payload.isEmpty }.map { [$0.topic, $0.payload] } == [["site/a/pi/region/kaffeehaus", "outside"]])
        #expect(!sent.contains { $0.topic.hasSuffix("/config") })
    }

    /// A device deleted in Home Assistant (every config cleared) comes back
    /// whole while beacond runs, the sensors' configs too, not only the regions'.
    @Test func everyOwnConfigDeletedIsSentAgain() {
        var publication = MQTTPublication(topics: Self.topics, version: "1.0", publishBeacons: false)
        publication.update(Self.state())
        let configs = publication.due(now: Self.t0).filter { $0.topic.hasSuffix("/config") }.map(\.topic)
        #expect(configs.count == 5)
        for topic in configs { publication.received(topic: topic, payload: ReceivedPayload("")) }
        #expect(Set(publication.due(now: Self.t0 + .seconds(1)).map(\.topic)) == Set(configs))
    }

    /// Home Assistant's birth topic is its own setting, not the discovery prefix's.
    @Test func theBirthMessageIsHeardOnItsOwnTopic() {
        let topics = MQTTTopics(base: "beacond", nodeID: "kiosk-7", discoveryPrefix: "ha", homeAssistantStatus: "hass/status")
        var publication = MQTTPublication(topics: topics, version: "1.0", publishBeacons: false)
        publication.update(Self.state())
        let first = publication.due(now: Self.t0)
        #expect(publication.subscriptions.last == "hass/status")
        publication.received(topic: "ha/status", payload: ReceivedPayload("online"))
        #expect(publication.due(now: Self.t0 + .seconds(1)).isEmpty)
        publication.received(topic: "hass/status", payload: ReceivedPayload("online"))
        #expect(publication.due(now: Self.t0 + .seconds(1)).count == first.count)
        #expect(MQTTTopics(base: "b", nodeID: "n", discoveryPrefix: "ha").homeAssistantStatus == "homeassistant/status")
    }

    /// A broker slower than the topics change (room for one message a pass,
    /// three topics changing every second): each still goes within three
    /// passes, in turn, not the first in order every time.
    @Test func aSlowBrokerDelaysEveryTopicInTurn() throws {
        var publication = MQTTPublication(topics: Self.topics, version: "1.0", publishBeacons: true)
        var state = Self.state()
        state.beacons = [1, 2, 3].map { Self.beacon(minor: $0, distance: 1) }
        publication.update(state)
        _ = publication.due(now: Self.t0)
        var lastSent: [String: Int] = [:]
        for second in 1...30 {
            state.beacons = [1, 2, 3].map { Self.beacon(minor: $0, distance: 1 + Double(second) / 10) }
            publication.update(state)
            for message in publication.due(now: Self.t0 + .seconds(Int64(second)), atMost: 1) { lastSent[message.topic] = second }
        }
        let beacons = lastSent.filter { $0.key.contains("/beacon/") }
        #expect(beacons.count == 3, "\(lastSent)")
        #expect(beacons.values.allSatisfy { $0 >= 28 }, "\(beacons)")
    }

    /// However much is due, no more than the room the broker leaves goes at
    /// once; the rest follows, in order, discovery first.
    @Test func dueGivesNoMoreThanAskedAndKeepsTheRest() {
        var publication = MQTTPublication(topics: Self.topics, version: "1.0", publishBeacons: false)
        publication.update(Self.state())
        var all = MQTTPublication(topics: Self.topics, version: "1.0", publishBeacons: false)
        all.update(Self.state())
        let everything = all.due(now: Self.t0).map(\.topic)
        var sent: [String] = []
        for step in 0..<10 { sent += publication.due(now: Self.t0 + .milliseconds(Int64(step)), atMost: 3).map(\.topic) }
        #expect(sent == everything)
        #expect(publication.due(now: Self.t0, atMost: 0).isEmpty)
    }

    @Test func beaconsOnlyWhenAskedForAndNotRetained() throws {
        var quiet = MQTTPublication(topics: Self.topics, version: "1.0", publishBeacons: false)
        quiet.update(Self.state())
        #expect(!quiet.due(now: Self.t0).contains { $0.topic.contains("/beacon/") })
        var publication = MQTTPublication(topics: Self.topics, version: "1.0", publishBeacons: true)
        publication.update(Self.state())
        let beacon = try #require(publication.due(now: Self.t0).first { $0.topic.contains("/beacon/") })
        #expect(beacon.topic == "beacond/kiosk-7/beacon/E2C56DB5-DFFB-48D2-B060-D0F5A71096E0-1-1")
        #expect(!beacon.retain)
        #expect(try Self.json(beacon.payload)["venue"] as? String == "counter-1")
        // A beacon gone is forgotten, not cleared: it was never retained.
        var gone = Self.state()
        gone.beacons = []
        publication.update(gone)
        #expect(publication.due(now: Self.t0 + .seconds(2)).isEmpty)
        #expect(publication.heldTopics == 10)
    }

    @Test func discoveryConfigsHaveTheKeysHomeAssistantNeeds() throws {
        let discovery = HomeAssistantDiscovery(topics: Self.topics, version: "1.0")
        for message in [discovery.nearestVenue, discovery.nearestVenueDistance, discovery.scanning, discovery.region("caffe-macs")] {
            let config = try Self.json(message.payload)
            for key in ["name", "unique_id", "state_topic", "availability_topic", "device"] {
                #expect(config[key] != nil, "\(message.topic) lacks \(key)")
            }
            #expect(config["availability_topic"] as? String == "beacond/kiosk-7/availability")
            let device = try #require(config["device"] as? [String: Any])
            #expect(device["identifiers"] as? [String] == ["beacond_kiosk-7"])
            #expect((config["origin"] as? [String: Any])?["name"] as? String == "beacond")
            #expect(message.retain)
        }
        let region = try Self.json(discovery.region("caffe-macs").payload)
        #expect(region["unique_id"] as? String == "beacond_kiosk-7_region_caffe-macs")
        #expect(region["device_class"] as? String == "occupancy")
        #expect(region["payload_on"] as? String == "inside" && region["payload_off"] as? String == "outside")
        let venue = try Self.json(discovery.nearestVenue.payload)
        #expect(venue["json_attributes_topic"] as? String == "beacond/kiosk-7/nearest_venue")
        // Attributes that change when the answer does, not every second (Home Assistant records each change).
        let template = try #require(venue["json_attributes_template"] as? String)
        #expect(template == "{{ {'id': value_json.id, 'proximity': value_json.proximity, 'runner_up': value_json.runner_up, "
            + "'stationary': value_json.stationary, 'source': value_json.source} | tojson }}")
        #expect(!template.contains("distance") && !template.contains("margin") && !template.contains("accuracy"))
        let distance = try Self.json(discovery.nearestVenueDistance.payload)
        #expect(distance["device_class"] as? String == "distance" && distance["unit_of_measurement"] as? String == "m")
        #expect(distance["state_class"] as? String == "measurement" && distance["enabled_by_default"] as? Bool == false)
    }

    /// A figure that is no number (never expected: a distance of a venue
    /// without a beacon) is null, as the topic's documentation says, not -1.
    @Test func aFigureThatIsNoNumberIsNull() throws {
        var venue = Self.nearest(distance: .infinity)
        venue.margin = .nan
        let fields = try Self.json(MQTTPayloads.nearestVenue(venue))
        #expect(fields["distance"] is NSNull && fields["margin"] is NSNull)
        #expect(fields["accuracy"] as? Double == 0.46)
    }

    /// An accuracy is rounded up to the centimetre: a beacon at contact
    /// range (3.5 mm one sigma) published `"accuracy":0.0`, certainty (an audit of 2026-11-28).
    @Test func anAccuracyIsNeverRoundedToNothing() throws {
        var beacon = Self.beacon(minor: 1, distance: 0.011)
        beacon.accuracy = 0.0035
        let fields = try Self.json(MQTTPayloads.beacon(beacon))
        #expect(fields["accuracy"] as? Double == 0.01 && fields["distance"] as? Double == 0.01, "\(fields)")
        var venue = Self.nearest(distance: 0.011)
        venue.beacon = beacon
        #expect(try Self.json(MQTTPayloads.nearestVenue(venue))["accuracy"] as? Double == 0.01)
    }

    @Test func noVenueIsNullsNotAbsentKeys() throws {
        let venue = try Self.json(MQTTPayloads.nearestVenue(nil))
        #expect(venue["id"] is NSNull && venue["source"] as? String == "none")
        #expect(Set(venue.keys) == ["id", "name", "proximity", "distance", "accuracy", "runner_up", "margin", "stationary", "source"])
    }

    /// A beacon with nothing measured lately has nulls, as the venue has: not
    /// -1 or 0, which a dashboard would plot as values.
    @Test func aBeaconWithNothingMeasuredIsNulls() throws {
        var unknown = Self.beacon(minor: 1, distance: 1.234)
        unknown.proximity = .unknown
        let beacon = try Self.json(MQTTPayloads.beacon(unknown))
        #expect(beacon["distance"] is NSNull && beacon["accuracy"] is NSNull && beacon["rssi"] is NSNull)
        #expect(beacon["proximity"] as? String == "unknown" && beacon["minor"] as? Int == 1)
        let known = try Self.json(MQTTPayloads.beacon(Self.beacon(minor: 1, distance: 1.234)))
        #expect(known["distance"] as? Double == 1.23 && known["accuracy"] as? Double == 0.46 && known["rssi"] as? Double == -60.12)
    }
}
