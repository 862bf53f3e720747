import BeaconCore

/// What a node has to tell the broker and what it has told it: the pure
/// heart of the publisher, driven by hand in tests.
///
/// Holds one wanted message per topic (the newest state wins, so nothing
/// grows while the broker is away), sends a topic at most once per
/// `minimumInterval` (as PropertiesChanged is coalesced), sends everything
/// retained again after a reconnect, and clears the topics of regions that
/// left `beacons.yaml` (their state and their discovery config).
public struct MQTTPublication: Sendable {
    public let topics: MQTTTopics
    public let publishBeacons: Bool
    public var minimumInterval: Duration = .seconds(1)
    /// Removals waiting for a connection are kept up to this many; more (ids
    /// churned by reloads while the broker is away) are forgotten.
    public static let pendingRemovalLimit = 512

    private let discovery: HomeAssistantDiscovery?
    private var wanted: [String: Wanted] = [:]
    /// What each topic last carried and when; a `nil` payload is to be sent
    /// again (Home Assistant restarted), still no sooner than `minimumInterval`.
    private var sent: [String: (payload: String?, at: Timestamp)] = [:]
    /// `nil` until the first state: until then no region is known to be gone.
    private var regions: Set<String>?
    /// Region configs seen on the broker before the first state, judged when it comes.
    private var seenEarly: Set<String> = []
    /// Home Assistant's birth messages are answered (everything sent again)
    /// at most once per `birthInterval`; one said meanwhile waits its turn.
    /// Anyone allowed to publish it could otherwise have every topic sent
    /// once a second (2,000 messages a second with 1,000 regions).
    public static let birthInterval = Duration.seconds(30)
    private var birthSaid = false
    private var birthAnswered: Timestamp?

    private struct Wanted {
        var message: MQTTMessage
        /// Discovery configs go first, so Home Assistant knows an entity
        /// before its state; removals of what an earlier run left go last,
        /// so however many there are the node's own state is not behind them.
        var rank: Int
        /// Sent once, then forgotten.
        var isRemoval = false
    }

    public init(topics: MQTTTopics, version: String, publishBeacons: Bool) {
        self.topics = topics
        self.publishBeacons = publishBeacons
        discovery = topics.discoveryPrefix.isEmpty ? nil : HomeAssistantDiscovery(topics: topics, version: version)
        want(MQTTMessage(topic: topics.availability, payload: "online", retain: true), rank: 1)
        if let discovery {
            want(discovery.nearestVenue, rank: 0)
            want(discovery.nearestVenueDistance, rank: 0)
            want(discovery.scanning, rank: 0)
        }
    }

    /// The will: what the broker says for this node when it vanishes.
    public var lastWill: MQTTMessage { MQTTMessage(topic: topics.availability, payload: "offline", retain: true) }

    /// Topics the shell subscribes to: the node's region states (to clear
    /// those an earlier run left behind), and with discovery its configs (to
    /// clear a region's an earlier run left, and send again one another
    /// client replaced or deleted) and Home Assistant's birth message.
    public var subscriptions: [String] {
        [topics.regionStateFilter] + (discovery == nil ? [] : [topics.discoveryFilter, topics.homeAssistantStatus])
    }

    /// Takes the engine's newest state; only what differs from it is sent later.
    public mutating func update(_ state: MQTTNodeState) {
        want(MQTTMessage(topic: topics.nearestVenue, payload: MQTTPayloads.nearestVenue(state.nearest), retain: true), rank: 2)
        want(MQTTMessage(topic: topics.scanning, payload: MQTTPayloads.scanning(state.scanning, reason: state.scanningReason), retain: true), rank: 2)
        for (id, regionState) in state.regions {
            if let discovery { want(discovery.region(id), rank: 0) }
            want(MQTTMessage(topic: topics.region(id), payload: regionState.rawValue, retain: true), rank: 2)
        }
        for id in (regions ?? seenEarly).subtracting(state.regions.keys) { remove(region: id) }
        regions = Set(state.regions.keys)
        seenEarly.removeAll()
        guard publishBeacons else { return }
        // Live readings, not retained: a late subscriber wants the next one, not an old distance.
        let current = Set(state.beacons.map { topics.beacon($0.identity) })
        for (topic, entry) in wanted where entry.rank == 3 && !current.contains(topic) {
            wanted[topic] = nil
            sent[topic] = nil
        }
        for beacon in state.beacons {
            want(MQTTMessage(topic: topics.beacon(beacon.identity), payload: MQTTPayloads.beacon(beacon), retain: false), rank: 3)
        }
    }

    /// Home Assistant's birth message: it (re)started.
    static let birth = ReceivedPayload("online")

    /// A message on one of the `subscriptions`.
    /// Home Assistant saying `online` (it restarted) gets everything retained
    /// again, at most once per `birthInterval` however often it is said (it
    /// takes longer than that to restart, and reads the retained configs when
    /// it subscribes); this node's own config or region state, replaced or
    /// deleted by another client, is sent again (a device deleted in Home
    /// Assistant comes back whole while beacond runs, as Home Assistant
    /// documents for a device that still announces itself); a retained
    /// config or state of a region this node no longer has is cleared. A
    /// retained `online` is not a restart: the broker hands it to every new
    /// subscription (Home Assistant can be set to retain its birth), and the
    /// connection that subscribed has just sent everything.
    public mutating func received(topic: String, payload: ReceivedPayload, retained: Bool = false) {
        if topic == topics.homeAssistantStatus {
            if payload == Self.birth, !retained { birthSaid = true }
            return
        }
        if let mine = wanted[topic], !mine.isRemoval {
            if payload != ReceivedPayload(mine.message.payload) { sent[topic]?.payload = nil }
            return
        }
        guard let id = topics.regionID(discoveryTopic: topic) ?? topics.regionID(stateTopic: topic) else { return }
        guard !payload.isEmpty else { return }
        guard let regions else {
            if seenEarly.count < Self.pendingRemovalLimit { seenEarly.insert(id) } else { removalsDropped += 1 }
            return
        }
        guard !regions.contains(id) else { return }
        remove(region: id)
    }

    /// What to send now, at most `limit` messages: changed topics whose last
    /// send is `minimumInterval` old, discovery configs first, and within a
    /// rank those waiting longest (never sent first), so a slow broker
    /// delays every topic in turn and starves none. They count as sent; those
    /// past the limit wait for the next call.
    public mutating func due(now: Timestamp, atMost limit: Int = .max) -> [MQTTMessage] {
        if birthSaid, birthAnswered.map({ now - $0 >= Self.birthInterval }) ?? true {
            birthSaid = false
            birthAnswered = now
            for key in sent.keys { sent[key]?.payload = nil }
        }
        var ready: [(String, Wanted)] = []
        for (topic, entry) in wanted {
            if let last = sent[topic] {
                guard last.payload != entry.message.payload, now - last.at >= minimumInterval else { continue }
            }
            ready.append((topic, entry))
        }
        ready.sort { ($0.1.rank, sent[$0.0]?.at ?? .distantPast, $0.0) < ($1.1.rank, sent[$1.0]?.at ?? .distantPast, $1.0) }
        ready = Array(ready.prefix(max(0, limit)))
        for (topic, entry) in ready {
            if entry.isRemoval {
                wanted[topic] = nil
                sent[topic] = nil
            } else {
                sent[topic] = (entry.message.payload, now)
            }
        }
        return ready.map(\.1.message)
    }

    /// The broker forgot nothing retained, but a reconnect may follow its
    /// restart without persistence: everything is sent again.
    public mutating func connectionLost() {
        sent.removeAll()
        for (topic, entry) in wanted where entry.rank == 3 { wanted[topic] = nil }
    }

    /// How many topics are held: bounded by the regions, ranged beacons and `pendingRemovalLimit`.
    public var heldTopics: Int { wanted.count }

    /// Regions whose topics were to be cleared but did not fit in `pendingRemovalLimit`: left on the broker.
    public private(set) var removalsDropped = 0

    private mutating func want(_ message: MQTTMessage, rank: Int) {
        wanted[message.topic] = Wanted(message: message, rank: rank)
    }

    private mutating func remove(region id: String) {
        var topics = [self.topics.region(id)]
        if let discovery { topics.append(discovery.removal(ofRegion: id).topic) }
        guard wanted.values.count(where: \.isRemoval) < Self.pendingRemovalLimit - 1 else {
            // Left on the broker, and no longer this node's to send: never republished.
            for topic in topics {
                wanted[topic] = nil
                sent[topic] = nil
            }
            removalsDropped += 1
            return
        }
        for topic in topics {
            wanted[topic] = Wanted(message: MQTTMessage(topic: topic, payload: "", retain: true), rank: 4, isRemoval: true)
        }
    }
}
