import BeaconConfiguration
import BeaconCore
import Foundation
import Testing

/// The `mqtt:` section of beacons.yaml, refused with file:line like the rest.
@Suite struct MQTTSettingsTests {
    static let regions = """
        regions:
          - id: caffe-macs
            uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0

        """

    static func problems(_ yaml: String, file: String = "beacons.yaml") -> [String] {
        do {
            _ = try ConfigurationLoader.parse(regions + "\n" + yaml, file: file)
            return []
        } catch {
            return error.problems.map(\.description)
        }
    }

    @Test func brokerURLs() throws {
        #expect(try MQTTBroker(parsing: "mqtt://broker.example") == MQTTBroker(transport: .tcp, host: "broker.example", port: 1883))
        #expect(try MQTTBroker(parsing: "mqtts://broker.example:8884/") == MQTTBroker(transport: .tls, host: "broker.example", port: 8884))
        #expect(try MQTTBroker(parsing: "mqtt://[::1]:1884") == MQTTBroker(transport: .tcp, host: "::1", port: 1884))
        #expect(try MQTTBroker(parsing: "unix:///run/mosquitto/sock") == MQTTBroker(transport: .unix, host: "/run/mosquitto/sock", port: 0))
        for bad in ["broker:1883", "http://x", "mqtt://", "mqtt://x:0", "mqtt://x:99999", "mqtt://x:y", "mqtt://u:p@x", "mqtt://x/topic", "unix://relative", "unix:///", "unix:///run/mosquitto/"] {
            #expect(throws: MQTTBroker.ParseError.self, "\(bad)") { try MQTTBroker(parsing: bad) }
        }
    }

    @Test func aFullSectionIsRead() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mqtt-settings-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data("s3cret\n".utf8).write(to: directory.appendingPathComponent("mqtt.secret"))
        let file = directory.appendingPathComponent("beacons.yaml").path
        let configuration = try ConfigurationLoader.parse(
            Self.regions + """
                mqtt:
                  url: mqtt://127.0.0.1:1884
                  username: kiosk-7
                  password_file: mqtt.secret
                  node_id: kiosk-7
                  base_topic: site/berlin
                  discovery_prefix: ""
                  status_topic: hass/status
                  publish_beacons: true
                """, file: file)
        let mqtt = try #require(configuration.mqtt)
        #expect(mqtt.broker == MQTTBroker(transport: .tcp, host: "127.0.0.1", port: 1884))
        #expect(mqtt.passwordFile == directory.appendingPathComponent("mqtt.secret").path)
        #expect(mqtt.username == "kiosk-7" && mqtt.nodeID == "kiosk-7" && mqtt.baseTopic == "site/berlin")
        #expect(mqtt.discoveryPrefix.isEmpty && mqtt.publishBeacons && mqtt.statusTopic == "hass/status")
        #expect(try ConfigurationLoader.parse(Self.regions, file: file).mqtt == nil)
        #expect(MQTTSettings(broker: mqtt.broker).statusTopic == "homeassistant/status")
    }

    /// Control characters and non-characters, which libmosquitto refuses in
    /// every topic (a node would publish nothing), are refused in the file.
    @Test(arguments: [#""site\x01""#, #""a\u0085b""#, #""x\uFDD0""#, #""x\U0001FFFF""#, #""line\nbreak""#])
    func topicPrefixesWithWhatMQTTForbidsAreRefused(value: String) {
        let problems = Self.problems("mqtt:\n  url: mqtt://broker\n  base_topic: \(value)\n")
        #expect(problems.contains { $0.hasPrefix("beacons.yaml:7: mqtt.base_topic: expected topic levels without '+', '#', control characters") }, "\(problems)")
        #expect(!problems.joined().contains("\n"))
    }

    @Test func badValuesAreRefusedWithFileAndLine() {
        let problems = Self.problems(
            """
            mqtt:
              url: http://broker
              password_file: /nonexistent/mqtt.secret
              node_id: "kiosk 7"
              base_topic: beacond/#
              discovery_prefix: /homeassistant
              publish_beacons: maybe
              password: inline
              status_topic: homeassistant/+
            """)
        #expect(problems.contains { $0.hasPrefix("beacons.yaml:6: mqtt.url: invalid broker URL 'http://broker'") })
        #expect(problems.contains { $0.hasPrefix("beacons.yaml:7: mqtt.password_file: cannot read /nonexistent/mqtt.secret: no such file") })
        #expect(problems.contains { $0.hasPrefix("beacons.yaml:8: mqtt.node_id: expected 1 to 64 letters") })
        #expect(problems.contains { $0.hasPrefix("beacons.yaml:9: mqtt.base_topic: expected topic levels") })
        #expect(problems.contains { $0.hasPrefix("beacons.yaml:10: mqtt.discovery_prefix: expected topic levels") })
        #expect(problems.contains { $0.hasPrefix("beacons.yaml:11: mqtt.publish_beacons: expected true or false") })
        #expect(problems.contains { $0.hasPrefix("beacons.yaml:12: mqtt.password: unknown key") })
        #expect(problems.contains { $0.hasPrefix("beacons.yaml:13: mqtt.status_topic: expected topic levels") })
        #expect(Self.problems("mqtt:\n  username: x\n").contains { $0.hasPrefix("beacons.yaml:6: mqtt.url: missing") })
    }

    /// What the service would fail to read is refused when the file is
    /// checked: a device or a FIFO is no password file (a FIFO would block).
    @Test func aPasswordFileThatIsNoRegularFileIsRefused() {
        for path in ["/dev/zero", "/dev/null"] {
            let problems = Self.problems("mqtt:\n  url: mqtt://broker\n  username: u\n  password_file: \(path)\n")
            #expect(problems.contains { $0.hasPrefix("beacons.yaml:8: mqtt.password_file: cannot read \(path): not a regular file") }, "\(problems)")
        }
    }

    /// The password is the file's one line; the service and check-config read it by the same rule.
    @Test func aPasswordFileHoldsOneLine() throws {
        #expect(try MQTTSettings.password(inFile: Array("s3cret\n".utf8)) == "s3cret")
        #expect(try MQTTSettings.password(inFile: Array("s3cret\r\n".utf8)) == "s3cret")
        #expect(try MQTTSettings.password(inFile: Array("s3cret".utf8)) == "s3cret")
        #expect(try MQTTSettings.password(inFile: Array(" pass word ".utf8)) == " pass word ")
        #expect(try MQTTSettings.password(inFile: Array("a\u{0B}b\u{2028}c\n".utf8)) == "a\u{0B}b\u{2028}c")  // only LF and CR break lines
        #expect(throws: MQTTSettings.PasswordFileProblem.empty) { try MQTTSettings.password(inFile: Array("\n".utf8)) }
        #expect(throws: MQTTSettings.PasswordFileProblem.empty) { try MQTTSettings.password(inFile: []) }
        #expect(throws: MQTTSettings.PasswordFileProblem.severalLines) { try MQTTSettings.password(inFile: Array("user\npass\n".utf8)) }
        #expect(throws: MQTTSettings.PasswordFileProblem.notUTF8) { try MQTTSettings.password(inFile: [0xFF, 0x0A]) }
        // libmosquitto would send "secret" (an audit of 2026-11-28).
        #expect(throws: MQTTSettings.PasswordFileProblem.nul) { try MQTTSettings.password(inFile: Array("secret\u{0}x\n".utf8)) }

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mqtt-password-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("two-lines").path
        try Data("user\npass\n".utf8).write(to: URL(fileURLWithPath: path))
        let problems = Self.problems("mqtt:\n  url: mqtt://broker\n  username: u\n  password_file: \(path)\n")
        #expect(problems.contains { $0.hasPrefix("beacons.yaml:8: mqtt.password_file: cannot use \(path): more than one line") }, "\(problems)")
    }

    @Test func nodeIDFromTheHostName() {
        #expect(MQTTSettings.nodeID(hostName: "kiosk-7.cafe.example") == "kiosk-7")
        #expect(MQTTSettings.nodeID(hostName: "pi zero+w") == "pi_zero_w")
        #expect(MQTTSettings.nodeID(hostName: "") == "beacond")
    }
}
