/// The `mqtt:` section of `beacons.yaml`: where to publish and under which
/// names. Absent, nothing MQTT runs. The password itself is never here: it
/// is read from `passwordFile` or `$BEACOND_MQTT_PASSWORD` when connecting.
public struct MQTTSettings: Hashable, Sendable {
    public var broker: MQTTBroker
    public var username: String?
    public var passwordFile: String?
    /// The most of a password file beacond reads: a password is a line.
    public static let largestPasswordFile = 64 << 10
    /// The most of a CA bundle `check-config` reads to see that it can (libmosquitto reads it
    /// itself); Debian's whole bundle is about 200 KB.
    public static let largestCAFile = 64 << 20
    /// `nil`: the host name, sanitised (`MQTTSettings.nodeID(hostName:)`).
    public var nodeID: String?
    public var baseTopic: String
    /// Empty turns Home Assistant discovery off.
    public var discoveryPrefix: String
    /// Home Assistant's birth message topic (its MQTT options), where it says
    /// `online` when it starts; not derived from the discovery prefix, as in
    /// Home Assistant.
    public var statusTopic: String
    public static let defaultStatusTopic = "homeassistant/status"
    /// Per-beacon distances are location data: published only when asked for.
    public var publishBeacons: Bool
    /// The CA certificate(s) a `mqtts://` broker is verified against; `nil` uses the system's.
    public var caFile: String?

    public init(
        broker: MQTTBroker, username: String? = nil, passwordFile: String? = nil, nodeID: String? = nil,
        baseTopic: String = "beacond", discoveryPrefix: String = "homeassistant", statusTopic: String = MQTTSettings.defaultStatusTopic,
        publishBeacons: Bool = false, caFile: String? = nil
    ) {
        self.broker = broker
        self.username = username
        self.passwordFile = passwordFile
        self.nodeID = nodeID
        self.baseTopic = baseTopic
        self.discoveryPrefix = discoveryPrefix
        self.statusTopic = statusTopic
        self.publishBeacons = publishBeacons
        self.caFile = caFile
    }

    /// The password a password file holds: its one line, a trailing line
    /// break (LF, CRLF or CR) ignored; any other byte but NUL is the password's. Checked by `check-config` and again at every
    /// connection attempt, so both refuse the same files.
    public static func password(inFile bytes: [UInt8]) throws(PasswordFileProblem) -> String {
        var line = bytes[...]
        if line.last == 0x0A { line = line.dropLast() }
        if line.last == 0x0D { line = line.dropLast() }
        guard let text = String(validating: line, as: UTF8.self) else { throw .notUTF8 }
        guard !text.isEmpty else { throw .empty }
        guard !line.contains(0x0A), !line.contains(0x0D) else { throw .severalLines }
        // libmosquitto takes a C string: the broker would get the password cut at its first NUL.
        guard !line.contains(0) else { throw .nul }
        return text
    }

    public enum PasswordFileProblem: Error, Sendable, CustomStringConvertible {
        case notUTF8, empty, severalLines, nul

        public var description: String {
            switch self {
            case .notUTF8: "not UTF-8 text"
            case .empty: "empty; it should hold the password on one line"
            case .severalLines: "more than one line; it should hold the password on one line"
            case .nul: "it holds a NUL byte, which no MQTT password can carry through libmosquitto"
            }
        }
    }

    /// A host name as a node id: the first label, anything but letters,
    /// digits, '-' and '_' replaced by '_', at most 64 characters.
    public static func nodeID(hostName: String) -> String {
        let label = hostName.split(separator: ".").first.map(String.init) ?? ""
        let cleaned = String(label.unicodeScalars.prefix(64).map { Identifier.isValid(String($0)) ? Character($0) : "_" })
        return cleaned.isEmpty ? "beacond" : cleaned
    }

    /// A topic prefix people may choose: non-empty levels, no wildcards, no
    /// leading or trailing '/', nothing MQTT forbids in a topic, at most 128 characters.
    public static func isValidTopicPrefix(_ text: String) -> Bool {
        (1...128).contains(text.utf8.count) && !text.contains("+") && !text.contains("#")
            && !text.unicodeScalars.contains(where: isForbiddenInTopics)
            && !text.split(separator: "/", omittingEmptySubsequences: false).contains { $0.isEmpty }
    }

    /// The code points MQTT 5 (1.5.4) excludes from its strings, control
    /// characters and non-characters, as libmosquitto's
    /// `mosquitto_validate_utf8` refuses them: a topic with one is refused at
    /// every publish, and a node that took it would publish nothing, last will included.
    static func isForbiddenInTopics(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        return scalar.isControlCharacter || (0xFDD0...0xFDEF).contains(value) || value & 0xFFFE == 0xFFFE
    }
}
