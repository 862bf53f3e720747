import BeaconCore
import BeaconFiles

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Walks a composed YAML tree, collecting every problem instead of stopping
/// at the first, so a person fixes a file in one pass.
struct NodeReader {
    let file: String
    private(set) var problems: [ConfigurationProblem] = []
    /// Problems past `ConfigurationError.mostProblems`, only counted.
    private(set) var unlisted = 0

    init(file: String) {
        self.file = file
    }

    // MARK: The file's sections

    mutating func configuration(_ root: YAMLNode) -> Configuration? {
        guard let fields = mapping(root, "", keys: ["source", "ranging", "regions", "venues", "mqtt"]) else { return nil }
        var configuration = Configuration()
        if let node = fields["source"], let text = string(node, "source") {
            do {
                // A recording or scenario path named in the file is found beside
                // it, as its other files are: under systemd the working directory is /.
                // (A scenario's bare name is looked up in scenarios/ beside it anyway.)
                configuration.source = switch try SourceSpec(parsing: text) {
                case .replay(let path, let speed): .replay(path: besideFile(path), speed: speed)
                case .simulate(let scenario?) where ConfigurationLoader.isScenarioPath(scenario): .simulate(scenario: besideFile(scenario))
                case let other: other
                }
            } catch {
                report(node, "source", error.description)
            }
        }
        if let node = fields["ranging"] { configuration.ranging = ranging(node) }
        let ranging = configuration.ranging
        configuration.regions = list(fields["regions"], "regions", most: Configuration.mostRegions) { $0.region($1, $2, ranging: ranging) }
        // A region refused for its own problem is most likely the one a venue
        // meant: "matches no region" would then be a second, false problem.
        let regions: [RegionDefinition]? = switch fields["regions"] {
        case nil: []
        case let node?: node.sequence?.count == configuration.regions.count ? configuration.regions : nil
        }
        configuration.venues = list(fields["venues"], "venues", most: Configuration.mostVenues) { $0.venue($1, $2, regions: regions) }
        if let node = fields["mqtt"] { configuration.mqtt = mqtt(node) }
        checkIdentifiers(configuration, fields)
        checkShadowedVenues(configuration, fields)
        return configuration
    }

    private mutating func mqtt(_ node: YAMLNode) -> MQTTSettings? {
        let keys = ["url", "username", "password_file", "node_id", "base_topic", "discovery_prefix", "status_topic", "publish_beacons", "ca_file"]
        guard let fields = mapping(node, "mqtt", keys: keys) else { return nil }
        guard let urlNode = fields["url"] else {
            report(node, "mqtt.url", "missing; expected mqtt://HOST[:PORT], mqtts://HOST[:PORT] or unix:///PATH")
            return nil
        }
        var broker: MQTTBroker?
        if let text = string(urlNode, "mqtt.url") {
            do {
                broker = try MQTTBroker(parsing: text)
            } catch {
                report(urlNode, "mqtt.url", error.description)
            }
        }
        var settings = MQTTSettings(broker: broker ?? MQTTBroker(transport: .tcp, host: "", port: 0))
        if let n = fields["username"], let text = string(n, "mqtt.username") {
            if text.isEmpty || text.utf8.count > 256 || text.unicodeScalars.contains(where: \.isControlCharacter) {
                report(n, "mqtt.username", "expected 1 to 256 bytes without control characters")
            }
            settings.username = text
        }
        settings.passwordFile = fields["password_file"].flatMap {
            readableFile($0, "mqtt.password_file", limit: MQTTSettings.largestPasswordFile) { bytes in
                do throws(MQTTSettings.PasswordFileProblem) {
                    _ = try MQTTSettings.password(inFile: bytes)
                    return nil
                } catch {
                    return error.description
                }
            }
        }
        if settings.passwordFile != nil, settings.username == nil, let n = fields["password_file"] {
            report(n, "mqtt.password_file", "a password needs a username")
        }
        settings.caFile = fields["ca_file"].flatMap { readableFile($0, "mqtt.ca_file", limit: MQTTSettings.largestCAFile) }
        if let n = fields["ca_file"], let broker, broker.transport != .tls {
            report(n, "mqtt.ca_file", "only used with mqtts://; the url is \(broker)")
        }
        if let n = fields["node_id"] { settings.nodeID = identifier(n, node, "mqtt.node_id") }
        for (key, keyPath) in [
            ("base_topic", \MQTTSettings.baseTopic), ("discovery_prefix", \MQTTSettings.discoveryPrefix), ("status_topic", \MQTTSettings.statusTopic),
        ] {
            guard let n = fields[key], let text = string(n, "mqtt.\(key)") else { continue }
            if (key == "discovery_prefix" && text.isEmpty) || MQTTSettings.isValidTopicPrefix(text) {
                settings[keyPath: keyPath] = text
            } else {
                report(
                    n, "mqtt.\(key)",
                    "expected topic levels without '+', '#', control characters or empty levels (no leading or trailing '/'), got '\(text.quotedForMessage)'")
            }
        }
        if let n = fields["publish_beacons"], let value = bool(n, "mqtt.publish_beacons") { settings.publishBeacons = value }
        return broker == nil ? nil : settings
    }

    /// A file named in the configuration, relative to it, that beacond can
    /// read now, as the service will: reading it is the check a FIFO, a device
    /// or a file too large for its purpose does not pass; `content` is what
    /// the service will check of what it reads.
    private mutating func readableFile(
        _ node: YAMLNode, _ field: String, limit: Int, content: ([UInt8]) -> String? = { _ in nil }
    ) -> String? {
        guard let text = string(node, field), !text.isEmpty else { return nil }
        let path = besideFile(text)
        do {
            if let problem = content(try RegularFile.read(path, limit: limit)) {
                report(node, field, "cannot use \(path): \(problem)")
                return nil
            }
        } catch .permissionDenied {
            report(node, field, "cannot read \(path): permission denied (beacond runs as its own user; make the file readable to it)")
            return nil
        } catch {
            report(node, field, "cannot read \(path): \(error)")
            return nil
        }
        return path
    }

    /// A path the file names, relative to the file's directory unless absolute.
    private func besideFile(_ path: String) -> String {
        path.hasPrefix("/") ? path : URL(fileURLWithPath: file).deletingLastPathComponent().appendingPathComponent(path).path
    }

    private mutating func ranging(_ node: YAMLNode) -> RangingSettings {
        var settings = RangingSettings()
        let keys = [
            "path_loss_exponent", "proximity", "exit_after", "switch_margin", "switch_dwell",
            "max_distance", "enter_rssi", "exit_rssi", "default_measured_power", "enter_window", "stale_after",
        ]
        guard let fields = mapping(node, "ranging", keys: keys) else { return settings }
        if let n = fields["path_loss_exponent"], let value = number(n, "ranging.path_loss_exponent", in: 1...6) {
            settings.pathLossExponent = value
        }
        if let p = fields["proximity"], let bands = mapping(p, "ranging.proximity", keys: ["immediate", "near", "hysteresis"]) {
            if let n = bands["hysteresis"], let value = number(n, "ranging.proximity.hysteresis", in: 0...0.5) {
                settings.proximityHysteresis = value
            }
            var bothRead = true  // else the comparison would be with a default, not with what was written
            if let n = bands["immediate"] {
                if let value = number(n, "ranging.proximity.immediate", in: 0.01...100) { settings.immediateDistance = value } else { bothRead = false }
            }
            if let n = bands["near"] {
                if let value = number(n, "ranging.proximity.near", in: 0.01...100) { settings.nearDistance = value } else { bothRead = false }
            }
            if bothRead, settings.immediateDistance >= settings.nearDistance {
                report(p, "ranging.proximity", "immediate (\(settings.immediateDistance) m) must be less than near (\(settings.nearDistance) m)")
            }
        }
        if let n = fields["exit_after"], let value = duration(n, "ranging.exit_after", positive: true) {
            settings.exitAfter = value
        }
        if let n = fields["enter_window"], let value = duration(n, "ranging.enter_window", positive: true) {
            settings.enterWindow = value
        }
        if let n = fields["stale_after"], let value = duration(n, "ranging.stale_after", positive: true) {
            settings.staleAfter = value
        }
        if let n = fields["switch_margin"], let value = number(n, "ranging.switch_margin", in: 0...0.9) {
            settings.switchMargin = value
        }
        if let n = fields["switch_dwell"], let value = duration(n, "ranging.switch_dwell", positive: false) {
            settings.switchDwell = value
        }
        if let n = fields["max_distance"] { settings.maxDistance = number(n, "ranging.max_distance", in: 0.1...1000) }
        if let n = fields["enter_rssi"] { settings.enterRSSI = number(n, "ranging.enter_rssi", in: -127...20) }
        if let n = fields["exit_rssi"] { settings.exitRSSI = number(n, "ranging.exit_rssi", in: -127...20) }
        // Client regions, and regions without their own, take this pair.
        if fields["enter_rssi"] == nil || settings.enterRSSI != nil, let n = fields["exit_rssi"], let exit = settings.exitRSSI,
            let problem = Self.hysteresisProblem(enter: settings.enterRSSI, exit: exit, enterNamed: "enter_rssi")
        {
            report(n, "ranging.exit_rssi", problem)
        }
        if let n = fields["default_measured_power"], let value = measuredPower(n, "ranging.default_measured_power") {
            settings.defaultMeasuredPower = value
        }
        return settings
    }

    /// `ranging` is the file's, whose `enter_rssi` and `exit_rssi` the region takes where it gives none.
    private mutating func region(_ node: YAMLNode, _ field: String, ranging: RangingSettings) -> RegionDefinition? {
        let keys = ["id", "uuid", "major", "minor", "notify_on_entry", "notify_on_exit", "enter_rssi", "exit_rssi", "exit_after"]
        guard let fields = mapping(node, field, keys: keys) else { return nil }
        let id = identifier(fields["id"], node, "\(field).id")
        let constraint = constraint(fields, node, field)
        var region = RegionDefinition(id: id ?? "", constraint: constraint ?? BeaconConstraint(uuid: UUID()))
        if let n = fields["notify_on_entry"], let value = bool(n, "\(field).notify_on_entry") { region.notifyOnEntry = value }
        if let n = fields["notify_on_exit"], let value = bool(n, "\(field).notify_on_exit") { region.notifyOnExit = value }
        if let n = fields["enter_rssi"] { region.enterRSSI = number(n, "\(field).enter_rssi", in: -127...20) }
        if let n = fields["exit_rssi"] { region.exitRSSI = number(n, "\(field).exit_rssi", in: -127...20) }
        if let n = fields["exit_after"] { region.exitAfter = duration(n, "\(field).exit_after", positive: true) }
        // The pair the region runs with: its own values, else the file's. A value
        // written but refused has been reported; nothing more is said of it.
        let written = { (key: String, value: Double?) in fields[key] == nil || value != nil }
        if written("enter_rssi", region.enterRSSI), written("exit_rssi", region.exitRSSI) {
            if let n = fields["exit_rssi"], let exit = region.exitRSSI,
                let problem = Self.hysteresisProblem(
                    enter: region.enterRSSI ?? ranging.enterRSSI, exit: exit,
                    enterNamed: region.enterRSSI != nil ? "enter_rssi" : "ranging.enter_rssi, which this region takes,")
            {
                report(n, "\(field).exit_rssi", problem)
            } else if fields["exit_rssi"] == nil, let n = fields["enter_rssi"], let enter = region.enterRSSI, let exit = ranging.exitRSSI, exit >= enter {
                report(n, "\(field).enter_rssi", "must be higher than ranging.exit_rssi, which this region takes, (\(exit)) so the region does not flap")
            }
        }
        guard id != nil, constraint != nil else { return nil }
        return region
    }

    /// Why an exit threshold and the entry floor above it (SPEC section 4)
    /// make no hysteresis, or `nil` when they do: without a floor, or with
    /// one not above the exit, a beacon at the edge enters and exits by turns.
    private static func hysteresisProblem(enter: Double?, exit: Double, enterNamed: String) -> String? {
        guard let enter else { return "needs an enter_rssi above it, or a beacon at the edge enters and exits by turns" }
        return exit < enter ? nil : "must be lower than \(enterNamed) (\(enter)) so regions do not flap"
    }

    /// `regions` are every region of the file, or `nil` when one was refused.
    private mutating func venue(_ node: YAMLNode, _ field: String, regions: [RegionDefinition]?) -> VenueDefinition? {
        guard let fields = mapping(node, field, keys: ["id", "name", "beacon", "measured_power", "max_distance"]) else {
            return nil
        }
        let id = identifier(fields["id"], node, "\(field).id")
        var name: String?
        if let n = fields["name"] {
            name = string(n, "\(field).name")
            if let text = name,
                text.trimming(while: \.isWhitespace).isEmpty || text.count > 200 || text.unicodeScalars.contains(where: \.isControlCharacter)
            {
                report(n, "\(field).name", "expected a name of 1 to 200 characters without control characters, got '\(text.quotedForMessage)'")
                name = nil
            }
        } else {
            report(node, "\(field).name", "missing; every venue needs a name people can read")
        }
        var constraint: BeaconConstraint?
        if let b = fields["beacon"] {
            if let beacon = mapping(b, "\(field).beacon", keys: ["uuid", "major", "minor"]) {
                constraint = self.constraint(beacon, b, "\(field).beacon")
            }
            // Ranging runs only inside monitored regions (SPEC section 5), so a venue
            // no region covers could never be nearest: almost surely a typo.
            if let constraint, let regions, !regions.contains(where: { $0.constraint.overlaps(constraint) }) {
                report(b, "\(field).beacon", "\(constraint) matches no region; add a region whose uuid (and major/minor) covers it")
            }
        } else {
            report(node, "\(field).beacon", "missing; expected { uuid: …, major: …, minor: … }")
        }
        var venue = VenueDefinition(id: id ?? "", name: name ?? "", constraint: constraint ?? BeaconConstraint(uuid: UUID()))
        if let n = fields["measured_power"] { venue.measuredPower = measuredPower(n, "\(field).measured_power") }
        if let n = fields["max_distance"] { venue.maxDistance = number(n, "\(field).max_distance", in: 0.1...1000) }
        guard id != nil, name != nil, constraint != nil else { return nil }
        return venue
    }

    // MARK: Checks across entries

    private mutating func checkIdentifiers(_ configuration: Configuration, _ fields: [String: YAMLNode]) {
        for (section, ids) in [("regions", Set(configuration.regions.map(\.id))), ("venues", Set(configuration.venues.map(\.id)))] {
            guard let items = fields[section]?.sequence else { continue }
            var seen: [String: Int] = [:]
            for (index, item) in items.enumerated() {
                guard let id = item.mapping?.first(where: { $0.key.scalar == "id" })?.value.scalar, ids.contains(id) else { continue }
                if let first = seen[id] {
                    report(item, "\(section)[\(index)].id", "duplicate id '\(id)', first used by \(section)[\(first)]")
                } else {
                    seen[id] = index
                }
            }
        }
    }

    /// Each beacon is the first matching venue's (`BeaconEngine`): a venue
    /// whose every beacon an earlier venue matches too can never be nearest.
    private mutating func checkShadowedVenues(_ configuration: Configuration, _ fields: [String: YAMLNode]) {
        guard let items = fields["venues"]?.sequence else { return }
        let venues = configuration.venues
        for (later, venue) in venues.enumerated() {
            guard let earlier = venues[..<later].first(where: { $0.constraint.contains(venue.constraint) }),
                let index = items.firstIndex(where: { $0.mapping?.first(where: { $0.key.scalar == "id" })?.value.scalar == venue.id })
            else { continue }
            let node = items[index].mapping?.first { $0.key.scalar == "beacon" }?.value ?? items[index]
            report(
                node, "venues[\(index)].beacon",
                "can never be nearest: venue '\(earlier.id)', listed before it, matches every beacon it does (\(earlier.constraint)); list the more specific venue first")
        }
    }

    // MARK: Field readers

    mutating func constraint(_ fields: [String: YAMLNode], _ node: YAMLNode, _ field: String) -> BeaconConstraint? {
        guard let uuidNode = fields["uuid"] else {
            report(node, "\(field).uuid", "missing; expected a UUID like E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")
            return nil
        }
        let uuid = self.uuid(uuidNode, "\(field).uuid")
        let major = fields["major"].flatMap { number(integer: $0, "\(field).major", in: 0...65535) }
        let minor = fields["minor"].flatMap { number(integer: $0, "\(field).minor", in: 0...65535) }
        if let minorNode = fields["minor"], fields["major"] == nil {
            report(minorNode, "\(field).minor", "a minor needs a major (as in Core Location)")
            return nil
        }
        guard let uuid, fields["major"] == nil || major != nil, fields["minor"] == nil || minor != nil else { return nil }
        return BeaconConstraint(uuid: uuid, major: major.map(UInt16.init), minor: minor.map(UInt16.init))
    }

    /// Ids name D-Bus objects and appear in logs: letters, digits, `-` and `_`.
    mutating func identifier(_ node: YAMLNode?, _ parent: YAMLNode, _ field: String) -> String? {
        guard let node else {
            report(parent, field, "missing; expected an id of letters, digits, '-' and '_'")
            return nil
        }
        guard let text = string(node, field) else { return nil }
        guard Identifier.isValid(text) else {
            report(node, field, "expected \(Identifier.rule), got '\(text.quotedForMessage)'")
            return nil
        }
        return text
    }

    mutating func uuid(_ node: YAMLNode, _ field: String) -> UUID? {
        guard let text = string(node, field) else { return nil }
        guard text.count == 36, let uuid = UUID(uuidString: text) else {
            report(node, field, "expected a UUID like E2C56DB5-DFFB-48D2-B060-D0F5A71096E0, got '\(text.quotedForMessage)'")
            return nil
        }
        return uuid
    }

    mutating func duration(_ node: YAMLNode, _ field: String, positive: Bool) -> Duration? {
        guard let text = string(node, field) else { return nil }
        if text.hasPrefix("-") {
            report(node, field, "negative duration '\(text.quotedForMessage)'; expected a duration like 500ms, 10s or 2m")
            return nil
        }
        guard let value = Duration(parsing: text) else {
            report(node, field, "expected a duration like 500ms, 10s or 2m, got '\(text.quotedForMessage)'")
            return nil
        }
        if positive, value <= .zero {
            report(node, field, "must be longer than zero")
            return nil
        }
        return value
    }

    mutating func bool(_ node: YAMLNode, _ field: String) -> Bool? {
        switch scalar(node, field, expected: "true or false") {
        case "true", "True", "yes": return true
        case "false", "False", "no": return false
        case nil: return nil
        case let other?:
            report(node, field, "expected true or false, got '\(other.quotedForMessage)'")
            return nil
        }
    }

    mutating func number(_ node: YAMLNode, _ field: String, in range: ClosedRange<Double>) -> Double? {
        guard let text = scalar(node, field, expected: "a number"), let value = Double(text), value.isFinite else {
            if let text = node.scalar { report(node, field, "expected a number, got '\(text.quotedForMessage)'") }
            return nil
        }
        guard range.contains(value) else {
            report(node, field, "expected a number in \(format(range.lowerBound))...\(format(range.upperBound)), got \(text.quotedForMessage)")
            return nil
        }
        return value
    }

    /// A power at 1 m, whole dBm, as plausible as a frame's must be (0 or +5
    /// is a tracker's battery byte, not a power): a calibration or its default.
    mutating func measuredPower(_ node: YAMLNode, _ field: String) -> Int8? {
        let plausible = IBeaconFrame.plausibleMeasuredPower
        return number(integer: node, field, in: Int(plausible.lowerBound)...Int(plausible.upperBound)).map(Int8.init)
    }

    mutating func number(integer node: YAMLNode, _ field: String, in range: ClosedRange<Int>) -> Int? {
        guard let text = scalar(node, field, expected: "an integer") else { return nil }
        guard let value = Int(text), range.contains(value) else {
            report(node, field, "expected an integer \(range.lowerBound)...\(range.upperBound), got \(text.quotedForMessage)")
            return nil
        }
        return value
    }

    mutating func string(_ node: YAMLNode, _ field: String) -> String? {
        scalar(node, field, expected: "a string")
    }

    mutating func scalar(_ node: YAMLNode, _ field: String, expected: String) -> String? {
        guard let scalar = node.scalar else {
            report(node, field, "expected \(expected), got a \(kind(node))")
            return nil
        }
        return scalar
    }

    /// The mapping's entries by key, reporting keys it does not know.
    mutating func mapping(_ node: YAMLNode, _ field: String, keys: [String]) -> [String: YAMLNode]? {
        guard let mapping = node.mapping else {
            report(node, field.isEmpty ? "(top level)" : field, "expected a mapping of \(keys.joined(separator: ", ")), got a \(kind(node))")
            return nil
        }
        var fields: [String: YAMLNode] = [:]
        for (key, value) in mapping {
            let name = key.scalar ?? "?"
            guard keys.contains(name) else {
                let shown = name.quotedForMessage
                report(key, field.isEmpty ? shown : "\(field).\(shown)", "unknown key; expected one of \(keys.joined(separator: ", "))")
                continue
            }
            fields[name] = value
        }
        return fields
    }

    /// Reads every item of a sequence, keeping the good ones.
    /// - Parameter most: the most entries taken; a longer list is refused
    ///   whole, before any entry is read.
    mutating func list<T>(
        _ node: YAMLNode?, _ field: String, most: Int = .max, _ item: (inout NodeReader, YAMLNode, String) -> T?
    ) -> [T] {
        guard let node else { return [] }
        guard let sequence = node.sequence else {
            report(node, field, "expected a list (lines starting with '- '), got a \(kind(node))")
            return []
        }
        guard sequence.count <= most else {
            report(node, field, "\(sequence.count) entries; beacond takes at most \(most)")
            return []
        }
        var items: [T] = []
        for (index, element) in sequence.enumerated() {
            if let value = item(&self, element, "\(field)[\(index)]") { items.append(value) }
        }
        return items
    }

    func kind(_ node: YAMLNode) -> String {
        switch node.content {
        case .scalar: "scalar"
        case .mapping: "mapping"
        case .sequence: "list"
        }
    }

    private func format(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }

    mutating func report(_ node: YAMLNode, _ field: String, _ message: String) {
        guard problems.count < ConfigurationError.mostProblems else { return unlisted += 1 }
        problems.append(ConfigurationProblem(file: file, line: node.line, field: Self.bounded(field), message: Self.bounded(message)))
    }

    /// The most Unicode scalars of a problem's field or message (4,000 bytes
    /// at most). Values are quoted shortened (`quotedForMessage`); this bounds
    /// what else may carry the file's text (a path), so that 100 problems stay
    /// a message a journal takes: 100 aliases of a 1 MB value made a 100 MB error.
    static let longestText = 1_000

    private static func bounded(_ text: String) -> String {
        let scalars = text.unicodeScalars
        guard !scalars.dropFirst(longestText).isEmpty else { return text }
        return String(String.UnicodeScalarView(scalars.prefix(longestText))) + "…"
    }
}
