import BeaconCore
import BeaconFiles
import BeaconThreads
import CMosquitto
import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
import Logging
import Synchronization

/// The libmosquitto shell around `MQTTPublication`: one thread of its own
/// connects, publishes and reconnects, so the service never waits for the
/// broker. The engine's owner hands it the newest state (`update`); the
/// D-Bus `Mqtt` property reads `status`.
///
/// libmosquitto's callbacks run on that thread (inside `mosquitto_loop`,
/// never `loop_start`), so the session they touch has a single owner.
public final class MQTTPublisher: Sendable {
    public let nodeID: String
    private let settings: MQTTSettings
    private let version: String
    private let logger: Logger
    private let shared: Mutex<Shared>
    /// Signalled by `stop`, to cut a backoff wait short.
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    private struct Shared {
        var state: MQTTNodeState?
        var generation = 0
        var stopping = false
        var status: String
    }

    /// Calls no library function: `start` does.
    public init(settings: MQTTSettings, version: String, logger: Logger) {
        self.settings = settings
        self.version = version
        self.logger = logger
        nodeID = Self.nodeID(settings)
        shared = Mutex(Shared(status: "connecting: \(settings.broker)"))
    }

    /// "connecting: …", "connected: …" or "disconnected: <why>; retrying in …", for the log and D-Bus.
    public var status: String { shared.withLock { $0.status } }

    public func start() {
        DetachedThread.start(name: "beacond-mqtt") { [self] in
            run()
            finished.signal()
        }
    }

    /// The newest state wins; older ones not yet sent are dropped.
    public func update(_ state: MQTTNodeState) {
        shared.withLock {
            $0.state = state
            $0.generation &+= 1
        }
    }

    /// Says `offline` and disconnects cleanly if connected; waits at most `timeout`.
    public func stop(timeout: Duration = .seconds(3)) {
        shared.withLock { $0.stopping = true }
        wake.signal()
        _ = finished.wait(timeout: .now() + .milliseconds(Int(timeout.seconds * 1000)))
    }

    private var stopping: Bool { shared.withLock { $0.stopping } }

    private func setStatus(_ status: String) {
        shared.withLock { $0.status = status }
    }

    // MARK: The connection's thread

    private static let library: Void = { mosquitto_lib_init() }()

    private func run() {
        Self.library
        let topics = MQTTTopics(
            base: settings.baseTopic, nodeID: nodeID, discoveryPrefix: settings.discoveryPrefix, homeAssistantStatus: settings.statusTopic)
        let session = Session(
            publication: MQTTPublication(topics: topics, version: version, publishBeacons: settings.publishBeacons),
            clientID: Self.clientID(nodeID))
        // libmosquitto's callbacks reach the session through an unretained pointer: it lives as long as the client.
        withExtendedLifetime(session) { connectAgainAndAgain(session, topics) }
    }

    /// Connects, publishes while connected, and after a loss waits out the backoff, until stopped.
    private func connectAgainAndAgain(_ session: Session, _ topics: MQTTTopics) {
        let clientID = session.clientID
        let context = Unmanaged.passUnretained(session).toOpaque()
        guard let mosq = mosquitto_new(clientID, true, context) else {
            setStatus("disconnected: libmosquitto could not make a client (out of memory)")
            logger.error("MQTT: libmosquitto could not make a client (out of memory); not publishing")
            return
        }
        defer { mosquitto_destroy(mosq) }
        var backoff = ReconnectBackoff()
        var generation = -1
        var lastFailure: String?
        var lastLoss: String?
        var connectedAt = Self.now()
        /// Connections in a row that ended before the backoff's maximum.
        var droppedSoon = 0
        while !stopping {
            setStatus("connecting: \(settings.broker)")
            session.reset()
            // A fresh client every attempt: libmosquitto would otherwise send
            // again, after the next CONNACK, every message the last connection
            // left unacknowledged (stale values, past the pace and the bound of
            // unacknowledged messages); the publication sends what is current.
            var reason: String
            let rc: Int32
            if mosquitto_reinitialise(mosq, clientID, true, context) == MOSQ_ERR_SUCCESS.rawValue {
                configure(mosq, session)
                rc = connect(mosq, session)
            } else {
                rc = MOSQ_ERR_NOMEM.rawValue
            }
            if rc == MOSQ_ERR_SUCCESS.rawValue {
                reason = "the connection closed"
                // Said once a connection: a flood of leftover configs must not become a flood of log lines.
                let removalsDroppedBefore = session.publication.removalsDropped
                var refusedOnConnection = 0
                let clearable = ([topics.regionStateFilter] + (settings.discoveryPrefix.isEmpty ? [] : [topics.regionDiscoveryFilter]))
                    .map { "-t '\($0)'" }.joined(separator: " ")
                var saidRemovalsDropped = false
                while true {
                    let loop = mosquitto_loop(mosq, 100, 1)
                    if session.justConnected {
                        session.justConnected = false
                        connectedAt = Self.now()
                        lastFailure = nil
                        for filter in session.publication.subscriptions {
                            var mid: Int32 = 0
                            if mosquitto_subscribe(mosq, &mid, filter, 1) == MOSQ_ERR_SUCCESS.rawValue { session.subscribing[mid] = filter }
                        }
                        logger.notice("MQTT: connected to \(settings.broker) as node \(nodeID); publishing under \(topics.node)")
                        setStatus("connected: \(settings.broker) as node \(nodeID)")
                    }
                    if stopping {
                        if session.connected { say(offline: mosq, session) }
                        return
                    }
                    if session.connected {
                        let (state, current) = shared.withLock { ($0.state, $0.generation) }
                        if current != generation, let state {
                            session.publication.update(state)
                            generation = current
                        }
                        for seen in session.seen { session.publication.received(topic: seen.topic, payload: seen.payload, retained: seen.retained) }
                        session.seen.removeAll()
                        if let last = session.refused.last {
                            // A refusal is the broker's configuration (its ACL): not retried on this
                            // connection, said once a connection, and counted where `beaconctl mqtt` shows it.
                            if refusedOnConnection == 0 {
                                let advice = last.reason == Int32(MQTT_RC_PACKET_TOO_LARGE.rawValue)
                                    ? "raise the broker's max_packet_size, which it said is smaller than this message "
                                    : "check the broker's ACL for this node's topics \(topics.node)/# and \(settings.discoveryPrefix.isEmpty ? "" : "\(settings.discoveryPrefix)/# ")"
                                logger.error(
                                    "MQTT: \(settings.broker) refused to take \(last.topic): \(Self.reason(last.reason)); \(advice)(docs/mqtt.md); refusals on this connection are counted in beaconctl mqtt")
                            }
                            refusedOnConnection += session.refused.count
                            session.refused.removeAll()
                            setStatus(
                                "connected: \(settings.broker) as node \(nodeID); \(refusedOnConnection) message(s) refused by the broker (last: \(last.topic): \(Self.reason(last.reason)))")
                        }
                        for (filter, reason) in session.refusedSubscriptions {
                            // Once a connection: the broker answers each SUBSCRIBE once.
                            logger.error(
                                "MQTT: \(settings.broker) refused beacond's subscription to \(filter): \(Self.reason(reason)); beacond then misses what comes there (Home Assistant's restarts, leftover and replaced configs: docs/mqtt.md); check the broker's ACL for reading it")
                        }
                        session.refusedSubscriptions.removeAll()
                        if !saidRemovalsDropped, session.publication.removalsDropped > removalsDroppedBefore {
                            saidRemovalsDropped = true
                            logger.warning(
                                "MQTT: more regions to clear than fit at once; those past the first are left on the broker (clear them by hand: mosquitto_sub \(clearable) --remove-retained -W 2)")
                        }
                        // A broker that stops acknowledging gets nothing more until it catches up:
                        // the newest values wait in the publication, not in libmosquitto's queue.
                        let room = Self.unacknowledgedLimit - session.unacknowledged
                        if room > 0 {
                            for message in session.publication.due(now: Self.now(), atMost: room) { publish(mosq, message, session) }
                        }
                    }
                    if loop != MOSQ_ERR_SUCCESS.rawValue {
                        reason = session.refusal ?? describe(loop, session)
                        break
                    }
                }
            } else {
                reason = describe(rc, session)
            }
            session.publication.connectionLost()
            generation = -1
            if session.wasConnected {
                let uptime = Self.now() - connectedAt
                backoff.connectionEnded(after: uptime)
                droppedSoon = uptime < backoff.maximum ? droppedSoon + 1 : 0
            }
            let delay = backoff.nextDelay(random: Double.random(in: 0..<1))
            let retry = "retrying in \(delay.tenthsText)"
            if session.wasConnected, droppedSoon > 1, reason == lastLoss {
                logger.notice("MQTT: lost the connection to \(settings.broker) again soon after connecting (\(droppedSoon) times in a row, same reason); \(retry)")
            } else if session.wasConnected {
                logger.warning("MQTT: lost the connection to \(settings.broker): \(reason); \(retry)")
            } else if reason == lastFailure {
                logger.notice("MQTT: still cannot connect to \(settings.broker) (attempt \(backoff.failures), same reason); \(retry)")
            } else if session.refusal != nil {
                logger.error("MQTT: \(settings.broker) refused beacond: \(reason); \(retry)")
            } else {
                logger.warning("MQTT: cannot connect to \(settings.broker): \(reason); \(retry)")
            }
            lastFailure = session.wasConnected ? nil : reason
            lastLoss = session.wasConnected ? reason : nil
            setStatus("disconnected: \(reason); \(retry)")
            _ = wake.wait(timeout: .now() + .milliseconds(Int(delay.seconds * 1000)))
        }
    }

    private func configure(_ mosq: OpaquePointer, _ session: Session) {
        mosquitto_int_option(mosq, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V5)
        let will = session.publication.lastWill
        mosquitto_will_set(mosq, will.topic, Int32(will.payload.utf8.count), will.payload, 1, will.retain)
        mosquitto_connect_callback_set(mosq) { _, context, rc in
            guard let context else { return }
            let session = Unmanaged<Session>.fromOpaque(context).takeUnretainedValue()
            if rc == 0 {
                session.connected = true
                session.justConnected = true
                session.wasConnected = true
            } else {
                session.refusal = MQTTPublisher.refusal(rc)
            }
        }
        mosquitto_disconnect_callback_set(mosq) { _, context, rc in
            guard let context else { return }
            let session = Unmanaged<Session>.fromOpaque(context).takeUnretainedValue()
            session.connected = false
            // An MQTT 5 DISCONNECT from the broker carries its reason (128 and up);
            // the next loop step only says the client is not connected.
            if rc >= 128 { session.refusal = MQTTPublisher.disconnection(rc, clientID: session.clientID) }
        }
        // The v5 callback, for the PUBACK's reason: a broker refuses a
        // PUBLISH (its ACL: 0x87) by acknowledging it with a reason of 128 or more.
        mosquitto_publish_v5_callback_set(mosq) { _, context, mid, reason, _ in
            guard let context else { return }
            let session = Unmanaged<Session>.fromOpaque(context).takeUnretainedValue()
            session.unacknowledged = max(0, session.unacknowledged - 1)
            let topic = session.inFlight.removeValue(forKey: mid)
            if mid == session.lastWord { session.lastWordAnswer = reason }
            if reason >= 128, let topic { session.refused.append((topic, reason)) }
        }
        // A broker refuses a subscription (its ACL, with MQTT 5: 0x87) in the SUBACK's
        // reason codes; Mosquitto grants it and delivers nothing instead (docs/mqtt.md).
        mosquitto_subscribe_callback_set(mosq) { _, context, mid, count, granted in
            guard let context, let granted, count > 0 else { return }
            let session = Unmanaged<Session>.fromOpaque(context).takeUnretainedValue()
            if let filter = session.subscribing.removeValue(forKey: mid), granted[0] >= 128 {
                session.refusedSubscriptions.append((filter, granted[0]))
            }
        }
        mosquitto_message_callback_set(mosq) { _, context, message in
            guard let context, let message, let topic = message.pointee.topic else { return }
            let session = Unmanaged<Session>.fromOpaque(context).takeUnretainedValue()
            // Bounded: the pump drains it after every loop step, and keeps a payload's length and digest.
            let length = message.pointee.payload == nil ? 0 : Int(max(message.pointee.payloadlen, 0))
            let payload = ReceivedPayload(UnsafeRawBufferPointer(start: message.pointee.payload, count: length))
            if session.seen.count < 1024 { session.seen.append((String(cString: topic), payload, message.pointee.retain)) }
        }
        mosquitto_log_callback_set(mosq) { _, context, level, text in
            guard let context, let text, level & (MOSQ_LOG_ERR | MOSQ_LOG_WARNING) != 0 else { return }
            Unmanaged<Session>.fromOpaque(context).takeUnretainedValue().lastLibraryError = String(cString: text)
        }
    }

    /// Sets the credentials and TLS again on every attempt: the password file may have been fixed meanwhile.
    private func connect(_ mosq: OpaquePointer, _ session: Session) -> Int32 {
        if let username = settings.username {
            let password: String?
            if let file = settings.passwordFile {
                do {
                    password = try MQTTSettings.password(inFile: RegularFile.read(file, limit: MQTTSettings.largestPasswordFile))
                } catch {
                    session.lastLibraryError = "cannot read the password file \(file): \(error)"
                    return MOSQ_ERR_AUTH.rawValue
                }
            } else {
                password = ProcessInfo.processInfo.environment["BEACOND_MQTT_PASSWORD"]
            }
            mosquitto_username_pw_set(mosq, username, password)
        }
        if settings.broker.transport == .tls {
            let rc = mosquitto_tls_set(mosq, settings.caFile, settings.caFile == nil ? "/etc/ssl/certs" : nil, nil, nil, nil)
            guard rc == MOSQ_ERR_SUCCESS.rawValue else {
                // libmosquitto opens the CA file here and says only "Invalid function arguments".
                if let file = settings.caFile, rc == MOSQ_ERR_INVAL.rawValue {
                    do {
                        _ = try RegularFile.read(file, limit: MQTTSettings.largestCAFile)
                    } catch {
                        session.lastLibraryError = "cannot read mqtt.ca_file \(file): \(error)"
                    }
                }
                return rc
            }
            // Verify the chain and the host name: never opt out silently.
            mosquitto_tls_opts_set(mosq, 1, nil, nil)
            mosquitto_tls_insecure_set(mosq, false)
        }
        var properties: OpaquePointer?
        defer { mosquitto_property_free_all(&properties) }
        mosquitto_property_add_int32(&properties, Int32(MQTT_PROP_MAXIMUM_PACKET_SIZE.rawValue), UInt32(Self.largestPacketReceived))
        return mosquitto_connect_bind_v5(mosq, settings.broker.host, Int32(settings.broker.port), Self.keepalive, nil, properties)
    }

    /// The most a broker may send beacond in one packet (MQTT 5's Maximum
    /// Packet Size, which the broker must honour by not sending what is
    /// larger). What beacond reads is Home Assistant's birth message and its
    /// own configs and region states, well under a kilobyte each; without a bound,
    /// libmosquitto reads a message whole however large, and anyone who may
    /// publish on those topics could make beacond hold hundreds of megabytes
    /// (a retained one at every connect).
    static let largestPacketReceived = 16_384

    /// Seconds between pings when nothing else is sent; libmosquitto gives
    /// up on a broker that has not answered one within another keepalive.
    static let keepalive: Int32 = 30

    /// QoS 1 messages sent and not yet acknowledged, beyond which nothing more is handed to libmosquitto.
    static let unacknowledgedLimit = 64

    /// Hands a message to libmosquitto; its message id, or `nil` if it was not taken.
    @discardableResult
    private func publish(_ mosq: OpaquePointer, _ message: MQTTMessage, _ session: Session) -> Int32? {
        var mid: Int32 = 0
        let rc = mosquitto_publish(mosq, &mid, message.topic, Int32(message.payload.utf8.count), message.payload, 1, message.retain)
        guard rc == MOSQ_ERR_SUCCESS.rawValue else {
            if rc == MOSQ_ERR_OVERSIZE_PACKET.rawValue {
                // Larger than the broker's Maximum Packet Size (its CONNACK): the broker's
                // refusal in advance, said and counted as one (it was dropped at debug level).
                session.refused.append((message.topic, Int32(MQTT_RC_PACKET_TOO_LARGE.rawValue)))
            } else {
                logger.debug("MQTT: could not publish \(message.topic): \(String(cString: mosquitto_strerror(rc)))")
            }
            return nil
        }
        session.unacknowledged += 1
        session.inFlight[mid] = message.topic
        return mid
    }

    /// The last word: `offline`, retained, and once the broker has
    /// acknowledged it a clean DISCONNECT (the broker drops the will). A broker
    /// that has stopped acknowledging holds it back (libmosquitto sends no more
    /// than the broker's Receive Maximum unacknowledged, and DISCONNECT is not
    /// held): then DISCONNECT with reason 0x04, so that the broker publishes
    /// the will, which says the same, rather than drop it.
    private func say(offline mosq: OpaquePointer, _ session: Session) {
        var offline = session.publication.lastWill
        offline.retain = true
        session.lastWord = publish(mosq, offline, session)
        session.lastWordAnswer = nil
        guard session.lastWord != nil, session.connected else {
            // Not taken, or the connection is gone: the broker publishes the will itself.
            mosquitto_disconnect_v5(mosq, Int32(MQTT_RC_DISCONNECT_WITH_WILL_MSG.rawValue), nil)
            logger.warning("MQTT: could not say offline to \(settings.broker) (the connection was going); its last will says it")
            return
        }
        let acknowledging = Self.now() + Self.lastWordWait
        while session.connected, session.lastWordAnswer == nil, Self.now() < acknowledging {
            guard mosquitto_loop(mosq, 100, 1) == MOSQ_ERR_SUCCESS.rawValue else { break }
        }
        let acknowledged = session.lastWordAnswer.map { $0 < 128 } ?? false
        mosquitto_disconnect_v5(mosq, Int32(acknowledged ? 0 : MQTT_RC_DISCONNECT_WITH_WILL_MSG.rawValue), nil)
        let disconnecting = Self.now() + .milliseconds(500)
        while session.connected, Self.now() < disconnecting {
            guard mosquitto_loop(mosq, 100, 1) == MOSQ_ERR_SUCCESS.rawValue else { break }
        }
        if acknowledged {
            logger.notice("MQTT: said offline and disconnected from \(settings.broker)")
        } else if let refusal = session.lastWordAnswer {
            logger.warning(
                "MQTT: \(settings.broker) refused to take offline: \(Self.reason(refusal)); disconnected asking it to publish the last will (offline) instead")
        } else {
            logger.warning(
                "MQTT: \(settings.broker) did not acknowledge offline within \(Self.lastWordWait.tenthsText); disconnected asking it to publish the last will (offline) instead")
        }
    }

    static let addressFamilyAdvice =
        "systemd's RestrictAddressFamilies? install /usr/share/beacond/beacond-mqtt.conf, or dist/systemd/beacond-mqtt.conf from the source, as /etc/systemd/system/beacond.service.d/mqtt.conf"

    /// Whether this process may open an internet socket at all (the unit without its MQTT drop-in may not).
    static func internetSocketsAllowed() -> Bool {
        let probe = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard probe >= 0 else { return errno != EAFNOSUPPORT && errno != EPERM }
        close(probe)
        return true
    }

    /// The MQTT client id of node `nodeID`.
    static func clientID(_ nodeID: String) -> String { "beacond-\(nodeID)" }

    /// How long the last word waits for its acknowledgement: with the
    /// DISCONNECT after it, within the 3 s `stop` gives.
    static let lastWordWait: Duration = .milliseconds(1_500)

    private func describe(_ rc: Int32, _ session: Session) -> String {
        switch rc {
        case MOSQ_ERR_ERRNO.rawValue:
            let text = String(cString: strerror(errno))
            switch errno {
            case ECONNREFUSED: return "\(text) (is the broker running and listening there?)"
            case EAFNOSUPPORT, EPERM: return "\(text) (\(Self.addressFamilyAdvice))"
            default: return text
            }
        case MOSQ_ERR_EAI.rawValue:
            // libmosquitto leaves getaddrinfo's code in errno. Under the unit's
            // RestrictAddressFamilies glibc cannot even ask DNS, and says so no
            // better than a missing name: the drop-in is then the answer.
            let text = "cannot look up the broker's host name \(settings.broker.host): \(String(cString: gai_strerror(errno)))"
            return Self.internetSocketsAllowed() ? text : "\(text) (\(Self.addressFamilyAdvice))"
        case MOSQ_ERR_TLS.rawValue, MOSQ_ERR_TLS_HANDSHAKE.rawValue:
            return "TLS: \(session.lastLibraryError ?? String(cString: mosquitto_strerror(rc))) (check mqtt.ca_file, and that the broker's certificate names \(settings.broker.host))"
        case MOSQ_ERR_AUTH.rawValue where session.lastLibraryError != nil, MOSQ_ERR_INVAL.rawValue where session.lastLibraryError != nil:
            return session.lastLibraryError ?? ""
        case MOSQ_ERR_KEEPALIVE.rawValue where !session.wasConnected:
            return "no answer to beacond's CONNECT (is an MQTT 5 broker listening there? mosquitto speaks MQTT 5 from 1.6)"
        case MOSQ_ERR_KEEPALIVE.rawValue:
            return "the broker stopped answering (no reply to a ping within \(Self.keepalive) s)"
        case MOSQ_ERR_PROTOCOL.rawValue:
            return "\(String(cString: mosquitto_strerror(rc))) (beacond speaks MQTT 5: does the broker? mosquitto does from 1.6)"
        default:
            return String(cString: mosquitto_strerror(rc))
        }
    }

    /// What the broker's DISCONNECT says: its MQTT 5 reason, and for a session
    /// taken over (0x8E) who took it, since that is a second beacond with this
    /// `mqtt.node_id` (or another client using its id) far more often than anything else.
    static func disconnection(_ rc: Int32, clientID: String) -> String {
        let text = "the broker disconnected beacond: \(String(cString: mosquitto_reason_string(rc)))"
        return rc == Int32(MQTT_RC_SESSION_TAKEN_OVER.rawValue)
            ? "\(text) (another client connected as \(clientID): does a second beacond use the same mqtt.node_id?)" : text
    }

    /// An MQTT 5 reason code as the broker meant it: `Not authorized (0x87)`.
    static func reason(_ rc: Int32) -> String {
        "\(String(cString: mosquitto_reason_string(rc))) (0x\(String(rc, radix: 16, uppercase: true)))"
    }

    /// What a refused CONNECT says: an MQTT 5 reason code (128 and up) has its
    /// own names, which `mosquitto_connack_string` does not know.
    static func refusal(_ rc: Int32) -> String {
        let text = String(cString: rc >= 128 ? mosquitto_reason_string(rc) : mosquitto_connack_string(rc))
        // 3.1.1: 1 unacceptable protocol version, 4 bad user name or password, 5 not authorised; MQTT 5: 132, 134, 135.
        if [1, Int32(MQTT_RC_UNSUPPORTED_PROTOCOL_VERSION.rawValue)].contains(rc) {
            return "\(text) (beacond speaks MQTT 5; mosquitto does from 1.6)"
        }
        return [4, 5, 134, 135].contains(rc)
            ? "\(text) (check mqtt.username and the password in password_file or $BEACOND_MQTT_PASSWORD)" : text
    }

    /// The node id `settings` publish under: theirs, else the host name's.
    public static func nodeID(_ settings: MQTTSettings) -> String {
        settings.nodeID ?? MQTTSettings.nodeID(hostName: hostName())
    }

    /// The kernel's host name, without a DNS lookup (Foundation's `hostName`
    /// may ask a resolver, which can hang on a Pi without network).
    static func hostName() -> String {
        var buffer = [UInt8](repeating: 0, count: 256)
        let ok = buffer.withUnsafeMutableBytes { gethostname($0.baseAddress!.assumingMemoryBound(to: CChar.self), 255) == 0 }
        guard ok else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 }, as: UTF8.self)
    }

    /// A monotonic clock for rate limits: the wall clock may jump.
    static func now() -> Timestamp {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Timestamp(microsecondsSinceEpoch: Int64(time.tv_sec) * 1_000_000 + Int64(time.tv_nsec) / 1000)
    }
}

/// What libmosquitto's callbacks report, kept on the connection's thread.
private final class Session {
    var publication: MQTTPublication
    /// `beacond-<node_id>`, for what the broker's reasons mean.
    let clientID: String
    var connected = false
    var justConnected = false
    var wasConnected = false
    /// What the broker said refusing the CONNECT or ending the connection (its reason, described).
    var refusal: String?
    var lastLibraryError: String?
    /// Messages received, each payload as `ReceivedPayload` keeps it.
    var seen: [(topic: String, payload: ReceivedPayload, retained: Bool)] = []
    /// PUBLISHes without their PUBACK on this connection.
    var unacknowledged = 0
    /// Their topics, by message id (at most `unacknowledgedLimit` and the last word).
    var inFlight: [Int32: String] = [:]
    /// PUBLISHes the broker acknowledged with a refusal, since the pump last took them.
    var refused: [(topic: String, reason: Int32)] = []
    /// SUBSCRIBEs without their SUBACK on this connection: their filters, by message id.
    var subscribing: [Int32: String] = [:]
    /// Subscriptions the broker refused, since the pump last took them.
    var refusedSubscriptions: [(filter: String, reason: Int32)] = []
    /// The message id of `offline` when stopping.
    var lastWord: Int32?
    /// The PUBACK's reason for `lastWord` once it came (0: taken; 128 and up: refused).
    var lastWordAnswer: Int32?

    init(publication: MQTTPublication, clientID: String) {
        self.publication = publication
        self.clientID = clientID
    }

    func reset() {
        connected = false
        justConnected = false
        wasConnected = false
        refusal = nil
        unacknowledged = 0
        inFlight.removeAll()
        refused.removeAll()
        subscribing.removeAll()
        refusedSubscriptions.removeAll()
        lastLibraryError = nil
        seen.removeAll()
    }
}
