import BeaconTestSupport
import BeacondAPI
import Foundation
import Testing

/// beacond publishing to a real mosquitto on loopback (issue 14): the
/// simulated café's state and Home Assistant configs, reconnecting after the
/// broker restarts, a broker that is never there, a refused password, TLS
/// with a test CA, and the last will.
@Suite(.serialized) struct MQTTBrokerTests {
    typealias Service = ServiceBusTests.Service

    /// The repository's beacons.yaml with an `mqtt:` section, in a directory of its own.
    static func configuration(_ mqtt: String, in directory: URL) throws -> String {
        let shipped = try String(contentsOfFile: TestSupport.repository("beacons.yaml"), encoding: .utf8)
        let path = directory.appendingPathComponent("beacons.yaml").path
        try Data((shipped + "\nmqtt:\n" + mqtt).utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    static let cafe = "simulate:" + TestSupport.repository("scenarios/cafe.yaml")

    static func start(_ mqtt: String) async throws -> Service {
        let directory = try TestSupport.temporaryDirectory()
        return try await Service(configuration: try configuration(mqtt, in: directory), source: cafe)
    }

    /// A broker scripted in Python where Mosquitto will not do what a test
    /// needs: `script` serves `server`, a socket listening on a free port,
    /// which is returned once the script has said it.
    static func scriptedBroker(importing module: String, _ script: String) async throws -> (process: Process, port: Int) {
        let broker = Process()
        let output = Pipe()
        broker.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        broker.arguments = ["-c", """
            import socket, \(module)
            server = socket.socket()
            server.bind(("127.0.0.1", 0))
            server.listen(4)
            print(server.getsockname()[1], flush=True)

            """ + script]
        broker.standardOutput = output
        try broker.run()
        guard let port = await output.fileHandleForReading.line(deadline: .now() + 60).flatMap({ Int($0) }) else {
            broker.killAndWait()
            throw TestSupport.Failure("the scripted broker said no port")
        }
        return (broker, port)
    }

    static func mqttProperty(_ service: Service) throws -> String {
        let output = try service.busctl(["get-property", Beacond.busName, Beacond.root, Beacond.Manager1.name, "Mqtt"])
        try #require(output.status == 0, "\(output.stderr)")
        return output.stdout
    }

    static func waitForLog(_ service: Service, timeout: Int = 30, _ condition: (String) -> Bool) async throws {
        let seen = await MosquittoBroker.waitFor(service.log, timeout: timeout, condition)
        try #require(seen, "not in the log:\n\(service.logText)")
    }

    /// The backoff the log shows: each MQTT "retrying in N s", in order.
    static func retryDelays(_ log: String) -> [Double] {
        log.split(separator: "\n").filter { $0.contains("MQTT:") && $0.contains("retrying in ") }
            .compactMap { Double($0.components(separatedBy: "retrying in ").last?.split(separator: " ").first ?? "") }
    }

    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "not JSON: \(text)")
    }

    @Test func theCafeAppearsInHomeAssistantsTermsAndSaysOfflineOnSIGTERM() async throws {
        let broker = try await MosquittoBroker()
        let subscriber = try await MQTTSubscriber(port: broker.port)
        let service = try await Self.start("  url: mqtt://127.0.0.1:\(broker.port)\n  node_id: cafe-pi\n")
        let node = "beacond/cafe-pi"
        // A live subscriber sees the retain flag only on what was held before it came (checked in the restart test).
        try await subscriber.wait("online") { $0.topic == "\(node)/availability" && $0.payload == "online" }
        try await subscriber.wait("caffe-macs inside") { $0.topic == "\(node)/region/caffe-macs" && $0.payload == "inside" }
        let venue = try await subscriber.wait("a ranged nearest venue") {
            $0.topic == "\(node)/nearest_venue" && $0.payload.contains("\"source\":\"ranging\"")
        }
        let fields = try Self.json(venue.payload)
        #expect(["counter-1", "counter-2", "coffee-bar"].contains(fields["id"] as? String ?? ""))
        for key in ["id", "name", "proximity", "distance", "accuracy", "runner_up", "margin", "stationary", "source"] {
            #expect(fields[key] != nil, "nearest_venue lacks \(key)")
        }
        let scanning = try Self.json(try #require(subscriber.latest("\(node)/scanning")))
        #expect(scanning["available"] as? Bool == true)
        // Home Assistant: one device, a sensor for the venue and scanning, an occupancy binary_sensor per region.
        let prefix = "homeassistant"
        let configs = [
            "\(prefix)/sensor/beacond_cafe-pi/nearest_venue/config", "\(prefix)/sensor/beacond_cafe-pi/scanning/config",
            "\(prefix)/binary_sensor/beacond_cafe-pi/region_caffe-macs/config",
            "\(prefix)/binary_sensor/beacond_cafe-pi/region_kaffeehaus/config",
            "\(prefix)/binary_sensor/beacond_cafe-pi/region_espresso-bar/config",
        ]
        for topic in configs {
            let config = try await Self.json(try subscriber.wait(topic) { $0.topic == topic && !$0.payload.isEmpty }.payload)
            for key in ["name", "unique_id", "state_topic", "availability_topic", "device"] {
                #expect(config[key] != nil, "\(topic) lacks \(key)")
            }
            #expect(config["availability_topic"] as? String == "\(node)/availability")
            #expect((config["device"] as? [String: Any])?["identifiers"] as? [String] == ["beacond_cafe-pi"])
            if topic.contains("binary_sensor") {
                #expect(config["device_class"] as? String == "occupancy")
                #expect(config["payload_on"] as? String == "inside" && config["payload_off"] as? String == "outside")
            }
        }
        #expect(try Self.mqttProperty(service).contains("connected: mqtt://127.0.0.1:\(broker.port) as node cafe-pi"))
        // Home Assistant restarting (its birth message) gets the configs again.
        let birth = try await TestSupport.run(
            TestSupport.tool("mosquitto_pub") ?? "/usr/bin/mosquitto_pub",
            ["-h", "127.0.0.1", "-p", "\(broker.port)", "-t", "homeassistant/status", "-m", "online"])
        #expect(birth.status == 0, "\(birth.stderr)")
        let before = subscriber.messages.count
        try await subscriber.wait("the configs again") {
            $0.topic == configs[0] && subscriber.messages.count > before
        }
        let beaconctl = try await TestSupport.run(TestSupport.product("beaconctl"), ["mqtt", "--bus", service.bus.address, "--json"])
        #expect(beaconctl.status == 0, "\(beaconctl)")
        #expect(try Self.json(beaconctl.stdout)["state"] as? String == "connected")
        service.stop(signal: SIGTERM)
        try await subscriber.wait("offline") { $0.topic == "\(node)/availability" && $0.payload == "offline" }
        #expect(service.logText.contains("MQTT: said offline and disconnected"))
    }

    /// A broker that has stopped acknowledging (paused, with a Receive
    /// Maximum of 1, so one unacknowledged message holds every later one back
    /// in libmosquitto) still ends up saying `offline` when beacond stops:
    /// beacond asks for its will. Until 2026-11-27 it sent a clean DISCONNECT
    /// ahead of the held-back `offline`, the broker dropped the will, and
    /// `availability` stayed `online` for good.
    @Test func aBrokerThatStoppedAcknowledgingStillSaysOfflineOnSIGTERM() async throws {
        let broker = try await MosquittoBroker(listener: "allow_anonymous true\nmax_inflight_messages 1")
        let service = try await Self.start("  url: mqtt://127.0.0.1:\(broker.port)\n  node_id: stalled\n")
        try await Self.waitForLog(service) { $0.contains("MQTT: connected") }
        let watching = try await MQTTSubscriber(port: broker.port)
        try await watching.wait("online") { $0.topic == "beacond/stalled/availability" && $0.payload == "online" }
        broker.pause()
        // The café's distances change every second: the next publication goes out and is never acknowledged.
        // (More than a PUBACK's or a PINGREQ's few bytes, which beacond also sends: a PUBLISH.)
        #expect(await eventually(seconds: 30) { broker.unreadBytes > 10 }, "no PUBLISH sent to the paused broker")
        service.stop(signal: SIGTERM)
        broker.resume()
        let after = try await MQTTSubscriber(port: broker.port)
        try await after.wait("retained offline") { $0.topic == "beacond/stalled/availability" && $0.payload == "offline" && $0.retained }
        #expect(service.logText.contains("did not acknowledge offline within 1.5 s; disconnected asking it to publish the last will"), "\(service.logText)")
    }

    /// What a lost connection left unacknowledged is not sent again after the
    /// reconnect (the publication sends what is current): libmosquitto resent
    /// it, stale values past the pace, as duplicates.
    @Test func aReconnectSendsNothingStale() async throws {
        let broker = try await MosquittoBroker(listener: "allow_anonymous true\nmax_inflight_messages 1\nlog_type all")
        let service = try await Self.start("  url: mqtt://127.0.0.1:\(broker.port)\n  node_id: stale\n")
        try await Self.waitForLog(service) { $0.contains("MQTT: connected") }
        broker.pause()
        #expect(await eventually(seconds: 30) { broker.unreadBytes > 10 }, "no PUBLISH sent to the paused broker")
        broker.kill()
        try await broker.start()
        try await Self.waitForLog(service) { $0.components(separatedBy: "MQTT: connected").count >= 3 }
        let subscriber = try await MQTTSubscriber(port: broker.port)
        // A while of publishing on the new connection (a nearest venue sent after the subscriber came), then:
        // no PUBLISH marked as sent before (d1).
        try await subscriber.wait("online") { $0.topic == "beacond/stale/availability" && $0.payload == "online" }
        try await subscriber.wait("a fresh nearest venue") { $0.topic == "beacond/stale/nearest_venue" && !$0.retained }
        let received = broker.logText.split(separator: "\n").filter { $0.contains("Received PUBLISH from beacond-stale") }
        #expect(!received.isEmpty, "\(broker.logText)")
        #expect(!received.contains { $0.contains("(d1,") }, "\(received)")
    }

    @Test func aRestartedBrokerGetsEverythingAgainAfterBackoff() async throws {
        let broker = try await MosquittoBroker()
        let service = try await Self.start("  url: mqtt://127.0.0.1:\(broker.port)\n  node_id: restart\n")
        try await Self.waitForLog(service) { $0.contains("MQTT: connected") }
        broker.kill()
        // Two failed attempts after the loss, with growing delays.
        try await Self.waitForLog(service) { $0.components(separatedBy: "still cannot connect").count >= 3 }
        let delays = Self.retryDelays(service.logText)
        #expect(delays.count >= 3 && delays[2] > delays[0], "\(delays)")
        #expect(try Self.mqttProperty(service).contains("disconnected: "))
        // A fresh broker (no persistence) holds nothing: what it holds after the reconnect was republished.
        try await broker.start()
        try await Self.waitForLog(service) { $0.components(separatedBy: "MQTT: connected").count >= 3 }
        let subscriber = try await MQTTSubscriber(port: broker.port)
        try await subscriber.wait("retained online") { $0.topic == "beacond/restart/availability" && $0.payload == "online" && $0.retained }
        try await subscriber.wait("retained region") { $0.topic == "beacond/restart/region/caffe-macs" && $0.retained }
        try await subscriber.wait("retained config") { $0.topic.hasSuffix("beacond_restart/nearest_venue/config") && $0.retained }
    }

    @Test func aRegionLeavingTheFileLeavesHomeAssistantOnReloadAndOnRestart() async throws {
        let broker = try await MosquittoBroker()
        let subscriber = try await MQTTSubscriber(port: broker.port)
        let directory = try TestSupport.temporaryDirectory()
        let mqtt = "  url: mqtt://127.0.0.1:\(broker.port)\n  node_id: edit\n"
        let path = try Self.configuration(mqtt, in: directory)
        let service = try await Service(configuration: path, source: Self.cafe)
        let config = "homeassistant/binary_sensor/beacond_edit/region_"
        try await subscriber.wait("espresso-bar's config") { $0.topic == config + "espresso-bar/config" && !$0.payload.isEmpty }
        // Reload without espresso-bar: its entity and state are cleared.
        let full = try String(contentsOfFile: path, encoding: .utf8)
        let withoutEspressoBar = full.replacingOccurrences(
            of: "  - id: espresso-bar\n    uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0\n    major: 2\n", with: "")
        try #require(withoutEspressoBar != full)
        try Data(withoutEspressoBar.utf8).write(to: URL(fileURLWithPath: path))
        #expect(try service.call("Reload").status == 0)
        try await subscriber.wait("espresso-bar's config cleared") { $0.topic == config + "espresso-bar/config" && $0.payload.isEmpty }
        try await subscriber.wait("espresso-bar's state cleared") { $0.topic == "beacond/edit/region/espresso-bar" && $0.payload.isEmpty }
        // A region dropped while beacond was stopped: the retained config it left is found and cleared.
        service.stop()
        let withoutKaffeehaus = withoutEspressoBar.replacingOccurrences(
            of: "  - id: kaffeehaus\n    uuid: F7826DA6-4FA2-4E98-8024-BC5B71E0893E\n    notify_on_exit: false\n", with: "")
            .replacingOccurrences(of: "  - id: kaffeehaus-theke\n", with: "  - id: kaffeehaus-theke-gone\n")
        let venues = withoutKaffeehaus.components(separatedBy: "  - id: kaffeehaus-theke-gone\n")
        try #require(venues.count == 2)
        // The venue with the Kaffeehaus UUID goes too (no region would cover it).
        let rest = venues[1].split(separator: "\n", omittingEmptySubsequences: false).drop { $0.hasPrefix("    ") }
        try Data((venues[0] + rest.joined(separator: "\n")).utf8).write(to: URL(fileURLWithPath: path))
        try await service.start()
        try await subscriber.wait("kaffeehaus's config cleared") { $0.topic == config + "kaffeehaus/config" && $0.payload.isEmpty }
        #expect(!subscriber.messages.contains { $0.topic == config + "caffe-macs/config" && $0.payload.isEmpty })
    }

    /// A broker that ends the connection with an MQTT 5 reason: the reason
    /// reaches the log and `beaconctl mqtt`, with what it most likely means,
    /// not "the connection was lost". Debian's mosquitto 2.0.11 closes a
    /// taken-over session without sending its DISCONNECT (checked with
    /// `mosquitto_sub -V 5 -d`, twice with one id), so a scripted broker sends
    /// it: CONNACK, then DISCONNECT 0x8E (session taken over), to every connection.
    @Test func theBrokersReasonForEndingTheConnectionIsSaid() async throws {
        let (broker, port) = try await Self.scriptedBroker(importing: "time", """
            while True:
                client, _ = server.accept()
                client.settimeout(5)
                try:
                    client.recv(65536)                                  # CONNECT
                    client.sendall(bytes([0x20, 0x03, 0x00, 0x00, 0x00]))  # CONNACK: success, no properties
                    time.sleep(0.3)
                    client.sendall(bytes([0xE0, 0x02, 0x8E, 0x00]))        # DISCONNECT: session taken over
                    time.sleep(0.3)
                except OSError:
                    pass
                client.close()
            """)
        defer { broker.killAndWait() }
        let service = try await Self.start("  url: mqtt://127.0.0.1:\(port)\n  node_id: twin\n")
        let said = "the broker disconnected beacond: Session taken over (another client connected as beacond-twin: does a second beacond use the same mqtt.node_id?)"
        try await Self.waitForLog(service) { $0.contains("MQTT: lost the connection to mqtt://127.0.0.1:\(port): \(said); retrying in ") }
        // The Mqtt property says it too, while beacond waits out its backoff (it also shows connecting and connected between).
        let deadline = ContinuousClock.now + .seconds(30)
        var property = ""
        while !property.contains(said), ContinuousClock.now < deadline {
            property = try Self.mqttProperty(service)
            if !property.contains(said) { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(property.contains(said), "\(property)")
    }

    /// A broker whose ACL refuses beacond's subscriptions answers with MQTT
    /// 5's "Not authorized" in the SUBACK (EMQX and HiveMQ do; Mosquitto
    /// grants and delivers nothing): each refused filter is said once (the
    /// audit of 2026-11-28: nothing was said, and Home Assistant's restarts
    /// and leftover configs went unnoticed). A scripted broker that takes
    /// every PUBLISH and refuses every subscription.
    @Test func subscriptionsTheBrokerRefusesAreSaid() async throws {
        let (broker, port) = try await Self.scriptedBroker(importing: "threading", """
            def varint(data, at):
                value, shift = 0, 0
                while True:
                    byte = data[at]; at += 1
                    value |= (byte & 0x7F) << shift; shift += 7
                    if byte < 0x80: return value, at
            def serve(client):
                data = b""
                while True:
                    chunk = client.recv(65536)
                    if not chunk: return
                    data += chunk
                    while len(data) >= 2:
                        try: length, start = varint(data, 1)
                        except IndexError: break
                        if len(data) < start + length: break
                        first, body, data = data[0], data[start:start + length], data[start + length:]
                        kind = first >> 4
                        if kind == 1: client.sendall(bytes([0x20, 0x03, 0x00, 0x00, 0x00]))        # CONNACK
                        elif kind == 3 and (first >> 1) & 3 == 1:                                   # PUBLISH, QoS 1: PUBACK
                            topic = int.from_bytes(body[0:2], "big")
                            client.sendall(bytes([0x40, 0x02]) + body[2 + topic:4 + topic])
                        elif kind == 8:                                                             # SUBSCRIBE: all refused
                            properties, at = varint(body, 2)
                            at += properties
                            filters = 0
                            while at < len(body):
                                at += 2 + int.from_bytes(body[at:at + 2], "big") + 1
                                filters += 1
                            client.sendall(bytes([0x90, 3 + filters]) + body[0:2] + bytes([0x00] + [0x87] * filters))
                        elif kind == 12: client.sendall(bytes([0xD0, 0x00]))                      # PINGRESP
                        elif kind == 14: return
            while True:
                client, _ = server.accept()
                threading.Thread(target=serve, args=(client,), daemon=True).start()
            """)
        defer { broker.killAndWait() }
        let service = try await Self.start("  url: mqtt://127.0.0.1:\(port)\n  node_id: deaf\n")
        try await Self.waitForLog(service) { $0.contains("refused beacond's subscription to homeassistant/status") }
        let refusals = service.logText.split(separator: "\n").filter { $0.contains("refused beacond's subscription to") }
        #expect(refusals.count == 3, "one per filter: \(refusals)")
        #expect(refusals.allSatisfy { $0.contains("Not authorized (0x87)") }, "\(refusals)")
    }

    /// A broker's host name that does not resolve is said as such, with
    /// getaddrinfo's reason, not libmosquitto's bare "Lookup error."
    /// (`.invalid` never resolves: RFC 6761.)
    @Test func aBrokerNameThatDoesNotResolveIsSaid() async throws {
        let service = try await Self.start("  url: mqtt://no-such-host.invalid:1883\n")
        try await Self.waitForLog(service) {
            $0.contains("MQTT: cannot connect to mqtt://no-such-host.invalid:1883: cannot look up the broker's host name no-such-host.invalid: ")
        }
        #expect(!service.logText.contains("Lookup error"))
    }

    @Test func aBrokerNeverThereLeavesDBusAnswering() async throws {
        let port = try MosquittoBroker.freePort()
        let service = try await Self.start("  url: mqtt://127.0.0.1:\(port)\n")
        let check = try await TestSupport.run(TestSupport.product("beacond"), ["check-config", service.configuration])
        #expect(check.stdout.contains(" (from the host name), topics beacond/…; discovery under homeassistant/, "), "\(check)")
        #expect(check.stdout.contains("mqtt: mqtt://127.0.0.1:\(port) as node "), "\(check)")
        try await Self.waitForLog(service) { $0.contains("MQTT: cannot connect to mqtt://127.0.0.1:\(port): Connection refused") }
        let venue = try service.call("RequestNearestVenue", ["u", "20000"])
        #expect(venue.status == 0, "\(venue.stderr)")
        let property = try Self.mqttProperty(service)
        #expect(property.contains("disconnected: Connection refused") || property.contains("connecting: "), "\(property)")
        let beaconctl = try await TestSupport.run(TestSupport.product("beaconctl"), ["mqtt", "--bus", service.bus.address])
        // Between two tries it may be connecting again, as the property above.
        #expect(beaconctl.status == 3 && (beaconctl.stdout.hasPrefix("disconnected: Connection refused") || beaconctl.stdout.hasPrefix("connecting: ")), "\(beaconctl)")
    }

    @Test func aListenerThatNeverAnswersIsNotCalledABrokerThatStoppedAnswering() async throws {
        let listener = try MosquittoBroker.silentListener()
        defer { close(listener.descriptor) }
        let service = try await Self.start("  url: mqtt://127.0.0.1:\(listener.port)\n")
        // libmosquitto gives up on a CONNECT without an answer after the keepalive, 30 s.
        try await Self.waitForLog(service, timeout: 60) { $0.contains("MQTT: cannot connect to mqtt://127.0.0.1:\(listener.port): ") }
        let line = service.logText.split(separator: "\n").first { $0.contains("MQTT: cannot connect") } ?? ""
        #expect(line.contains("no answer to beacond's CONNECT") && !line.contains("ping"), "\(line)")
    }

    /// A broker whose ACL refuses some of the node's topics acknowledges
    /// each such PUBLISH with "Not authorized": said once a connection,
    /// naming the topic, and counted in the Mqtt property. Before, libmosquitto's
    /// old callback hid the reason and beacond said "connected" while Home
    /// Assistant got no configs (the audit of 2026-11-27).
    @Test func publishesTheBrokerRefusesAreSaid() async throws {
        let directory = try TestSupport.temporaryDirectory()
        let acl = directory.appendingPathComponent("acl").path
        // Anonymous clients may write the node's own topics, not the discovery prefix.
        try Data("topic readwrite beacond/#\ntopic read homeassistant/#\n".utf8).write(to: URL(fileURLWithPath: acl))
        let broker = try await MosquittoBroker(listener: "allow_anonymous true\nacl_file \(acl)")
        let subscriber = try await MQTTSubscriber(port: broker.port)
        let service = try await Service(
            configuration: try Self.configuration("  url: mqtt://127.0.0.1:\(broker.port)\n  node_id: acl\n", in: directory), source: Self.cafe)
        try await subscriber.wait("the node's own state") { $0.topic == "beacond/acl/nearest_venue" }
        try await Self.waitForLog(service) { $0.contains("refused to take homeassistant/") }
        let refusals = service.logText.split(separator: "\n").filter { $0.contains("refused to take") }
        #expect(refusals.count == 1, "\(refusals)")
        #expect(refusals.first?.contains("Not authorized (0x87)") == true, "\(refusals)")
        #expect(refusals.first?.contains("/config") == true, "\(refusals)")
        // The property follows the node's status at the service's next publication.
        let said = await eventually(seconds: 30) {
            (try? Self.mqttProperty(service))?.contains("refused by the broker (last: homeassistant/") == true
        }
        let property = try Self.mqttProperty(service)
        #expect(said && property.contains("connected: "), "\(property)")
    }

    /// A broker whose max_packet_size is smaller than the discovery configs
    /// says so in its CONNACK, and libmosquitto refuses those publishes
    /// itself: said once a connection as the broker's refusal, with what to
    /// change, and counted (the audit of 2026-11-28: logged at debug level,
    /// while beacond said "connected" and Home Assistant got nothing).
    @Test func messagesOverTheBrokersMaximumPacketSizeAreSaid() async throws {
        let broker = try await MosquittoBroker(listener: "allow_anonymous true\nmax_packet_size 300")
        let subscriber = try await MQTTSubscriber(port: broker.port)
        let service = try await Self.start("  url: mqtt://127.0.0.1:\(broker.port)\n  node_id: small\n")
        try await subscriber.wait("a small state") { $0.topic == "beacond/small/availability" && $0.payload == "online" }
        try await Self.waitForLog(service) { $0.contains("refused to take homeassistant/") }
        let refusals = service.logText.split(separator: "\n").filter { $0.contains("refused to take") }
        #expect(refusals.count == 1, "\(refusals)")
        #expect(refusals.first?.contains("(0x95)") == true && refusals.first?.contains("raise the broker's max_packet_size") == true, "\(refusals)")
        let said = await eventually(seconds: 30) { (try? Self.mqttProperty(service))?.contains("refused by the broker") == true }
        let property = try Self.mqttProperty(service)
        #expect(said, "\(property)")
    }

    @Test func aWrongPasswordIsSaidOnceRetriedWithBackoffAndAFixedFileIsUsed() async throws {
        let directory = try TestSupport.temporaryDirectory()
        let passwords = directory.appendingPathComponent("passwords").path
        let made = try await TestSupport.run("/usr/bin/mosquitto_passwd", ["-c", "-b", passwords, "kiosk", "right"])
        try #require(made.status == 0, "\(made.stderr)")
        let broker = try await MosquittoBroker(listener: "allow_anonymous false\npassword_file \(passwords)")
        try Data("wrong\n".utf8).write(to: directory.appendingPathComponent("mqtt.secret"))
        let configuration = try Self.configuration(
            "  url: mqtt://127.0.0.1:\(broker.port)\n  username: kiosk\n  password_file: mqtt.secret\n", in: directory)
        let service = try await Service(configuration: configuration, source: Self.cafe)
        try await Self.waitForLog(service) { $0.components(separatedBy: "same reason").count >= 3 }
        let log = service.logText
        let lines = log.split(separator: "\n").filter { $0.contains("MQTT:") }
        let refused = lines.filter { $0.contains("refused beacond") }
        #expect(refused.count == 1, "\(lines)")
        #expect(refused.first?.contains("check mqtt.username and the password") == true, "\(lines)")
        // MQTT 5 reason codes (mosquitto says 135) have names of their own.
        #expect(refused.first.map { $0.contains("Not authorized") || $0.contains("Bad user name or password") } == true, "\(lines)")
        #expect(refused.first?.contains("error") == true)
        // Each line is one attempt, and the attempts slow down: no flood.
        let delays = Self.retryDelays(log)
        #expect(delays.count == lines.count && delays.count >= 3 && delays[2] > delays[0], "\(lines)")
        #expect(try Self.mqttProperty(service).contains("disconnected: "))
        // The file is read on every attempt: fixing it needs no restart.
        try Data("right\n".utf8).write(to: directory.appendingPathComponent("mqtt.secret"))
        try await Self.waitForLog(service) { $0.contains("MQTT: connected to mqtt://127.0.0.1:\(broker.port)") }
    }

    @Test func tlsWithATestCAIsVerified() async throws {
        let directory = try TestSupport.temporaryDirectory()
        func file(_ name: String) -> String { directory.appendingPathComponent(name).path }
        func openssl(_ arguments: [String]) async throws {
            let result = try await TestSupport.run("/usr/bin/openssl", arguments)
            try #require(result.status == 0, "openssl \(arguments): \(result.stderr)")
        }
        try await openssl(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=beacond test CA",
                     "-keyout", file("ca.key"), "-out", file("ca.pem")])
        try await openssl(["req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-keyout", file("server.key"), "-out", file("server.csr")])
        try Data("subjectAltName=DNS:localhost,IP:127.0.0.1\n".utf8).write(to: URL(fileURLWithPath: file("san.ext")))
        try await openssl(["x509", "-req", "-in", file("server.csr"), "-CA", file("ca.pem"), "-CAkey", file("ca.key"), "-CAcreateserial",
                     "-days", "2", "-extfile", file("san.ext"), "-out", file("server.pem")])
        // mosquitto started as root reads its files as the mosquitto user: a throwaway key may be world-readable.
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file("server.key"))
        let broker = try await MosquittoBroker(
            listener: "allow_anonymous true\ncafile \(file("ca.pem"))\ncertfile \(file("server.pem"))\nkeyfile \(file("server.key"))")
        let subscriber = try await MQTTSubscriber(port: broker.port, host: "localhost", options: ["--cafile", file("ca.pem")])
        let trusted = try await Service(
            configuration: try Self.configuration(
                "  url: mqtts://localhost:\(broker.port)\n  ca_file: ca.pem\n  node_id: tls\n", in: directory),
            source: Self.cafe)
        try await subscriber.wait("state over TLS") { $0.topic == "beacond/tls/region/caffe-macs" && $0.payload == "inside" }
        trusted.stop()
        // Without the test CA, the system's CAs do not vouch for the broker: refused, and said why.
        let other = try TestSupport.temporaryDirectory()
        let untrusted = try await Service(
            configuration: try Self.configuration("  url: mqtts://localhost:\(broker.port)\n  node_id: untrusted\n", in: other),
            source: Self.cafe)
        try await Self.waitForLog(untrusted) { $0.contains("MQTT: cannot connect to mqtts://localhost:\(broker.port): TLS") }
        #expect(untrusted.logText.contains("check mqtt.ca_file"))
        #expect(!subscriber.messages.contains { $0.topic.hasPrefix("beacond/untrusted/") })
    }

    /// A CA file gone after start (renewed, moved) is named at the next
    /// attempt; libmosquitto says only "Invalid function arguments" (until
    /// 2026-11-27 so did beacond). Nothing needs to listen: the file is read
    /// before the connection is tried.
    @Test func aCAFileGoneAfterStartIsNamed() async throws {
        let directory = try TestSupport.temporaryDirectory()
        let ca = directory.appendingPathComponent("ca.pem")
        try Data("not a certificate, but a readable file\n".utf8).write(to: ca)
        let port = try MosquittoBroker.freePort()
        let service = try await Service(
            configuration: try Self.configuration("  url: mqtts://127.0.0.1:\(port)\n  ca_file: ca.pem\n", in: directory),
            source: Self.cafe)
        try await Self.waitForLog(service) { $0.contains("MQTT: cannot connect to mqtts://127.0.0.1:\(port): ") }
        try FileManager.default.removeItem(at: ca)
        try await Self.waitForLog(service) {
            $0.contains("MQTT: cannot connect to mqtts://127.0.0.1:\(port): cannot read mqtt.ca_file \(ca.path): no such file")
        }
        #expect(!service.logText.contains("Invalid function arguments"), "\(service.logText)")
    }

    @Test func aUnixSocketBrokerWithPerBeaconReadings() async throws {
        // mosquitto started as root makes its socket as the mosquitto user.
        let sockets = try TestSupport.temporaryDirectory()
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: sockets.path)
        let socket = sockets.appendingPathComponent("mqtt.sock").path
        let broker = try await MosquittoBroker(listener: "allow_anonymous true\nlistener 0 \(socket)")
        let subscriber = try await MQTTSubscriber(port: broker.port)
        let service = try await Self.start("  url: unix://\(socket)\n  node_id: local\n  publish_beacons: true\n")
        try await subscriber.wait("state over the socket") { $0.topic == "beacond/local/region/caffe-macs" && $0.payload == "inside" }
        // Asked for, per-beacon readings come too.
        let beacon = try await subscriber.wait("a beacon") { $0.topic.hasPrefix("beacond/local/beacon/E2C56DB5-DFFB-48D2-B060-D0F5A71096E0-") }
        #expect(try Self.json(beacon.payload)["distance"] is Double)
        #expect(try Self.mqttProperty(service).contains("connected: unix://\(socket)"))
    }

    @Test func theLastWillSaysOfflineWhenBeacondIsKilled() async throws {
        let broker = try await MosquittoBroker()
        let subscriber = try await MQTTSubscriber(port: broker.port)
        let service = try await Self.start("  url: mqtt://127.0.0.1:\(broker.port)\n  node_id: will\n")
        try await subscriber.wait("online") { $0.topic == "beacond/will/availability" && $0.payload == "online" }
        service.stop(signal: SIGKILL)
        let offline = try await subscriber.wait("the will") { $0.topic == "beacond/will/availability" && $0.payload == "offline" }
        #expect(!service.logText.contains("said offline"))
        #expect(offline.topic == "beacond/will/availability")
    }

    /// Anyone who may publish on the topics beacond reads (its region
    /// configs, Home Assistant's birth message) could make it hold a whole
    /// message however large: 250 MB retained took it to 539 MB at every
    /// connect in the audit. beacond asks for at most
    /// `largestPacketReceived` (MQTT 5's Maximum Packet Size), and the
    /// broker keeps larger ones from it, while small ones still arrive.
    @Test func aHugeMessageOnBeacondsTopicsIsNotSentToIt() async throws {
        let broker = try await MosquittoBroker(listener: "allow_anonymous true\nlog_type all")
        let subscriber = try await MQTTSubscriber(port: broker.port)
        let config = "homeassistant/binary_sensor/beacond_big/region_"
        let huge = broker.directory.appendingPathComponent("huge.json")
        try Data(repeating: UInt8(ascii: "x"), count: 16 << 20).write(to: huge)
        for (region, file) in [("junk-huge", huge.path), ("junk-small", nil)] {
            let payload = file.map { ["-f", $0] } ?? ["-m", "{}"]
            let published = try await TestSupport.run(
                TestSupport.tool("mosquitto_pub") ?? "/usr/bin/mosquitto_pub",
                ["-p", "\(broker.port)", "-t", config + region + "/config", "-r"] + payload)
            try #require(published.status == 0, "\(published.stderr)")
        }
        let service = try await Self.start("  url: mqtt://127.0.0.1:\(broker.port)\n  node_id: big\n")
        // The small one reached beacond, which cleared it; the huge one never did.
        try await subscriber.wait("the small junk config cleared") { $0.topic == config + "junk-small/config" && $0.payload.isEmpty }
        #expect(!subscriber.messages.contains { $0.topic == config + "junk-huge/config" && $0.payload.isEmpty })
        #expect(broker.logText.contains("Dropping too large outgoing PUBLISH for beacond-big"), "\(broker.logText.suffix(2_000))")
        let status = try String(contentsOfFile: "/proc/\(try #require(service.processIdentifier))/status", encoding: .utf8)
        let peak = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") }
        // A debug build peaks at about 33 MB here; the message would have added twice its 16 MB.
        #expect(try #require(peak) < 50 << 10, "VmHWM \(peak ?? 0) kB")
    }

    @Test func withoutAnMqttSectionNothingOfItRuns() async throws {
        let service = try await Service(source: Self.cafe)
        let venue = try service.call("RequestNearestVenue", ["u", "20000"])
        #expect(venue.status == 0, "\(venue.stderr)")
        #expect(try Self.mqttProperty(service).trimmingCharacters(in: .whitespacesAndNewlines) == "s \"off\"")
        #expect(!service.logText.contains("MQTT"))
        let check = try await TestSupport.run(TestSupport.product("beacond"), ["check-config", service.configuration])
        #expect(check.stdout.contains("\nmqtt: off"), "\(check)")
    }
}
