import BeaconCore
import BeaconSimulation

/// The scenario file format:
///
/// ```yaml
/// seed: 7
/// radio: { path_loss_exponent: 2.2, shadowing_sigma: 4, shadowing_distance: 1.5,
///          shadowing_time: 5s, fading_k: 4, packet_loss: 0.1, sensitivity: -95 }
/// beacons:
///   - beacon: { uuid: …, major: 1, minor: 1 }
///     position: [0, 0]
///     measured_power: -59        # what the frame says
///     true_power: -62            # optional: the real RSSI at 1 m (miscalibration)
///     advertising_interval: 100ms
/// listener:
///   start: [3, -6]
///   speed: 1.0                   # m/s
///   stops:
///     - { at: [0, -0.6], pause: 30s }
/// ```
extension NodeReader {
    mutating func scenario(_ root: YAMLNode, name: String) -> Scenario? {
        guard let fields = mapping(root, "", keys: ["seed", "radio", "beacons", "listener"]) else { return nil }
        let seed = fields["seed"].flatMap { number(integer: $0, "seed", in: 0...Int.max) } ?? 1
        var radio = Scenario.Radio()
        if let node = fields["radio"] { radio = self.radio(node) }
        let beacons = list(fields["beacons"], "beacons") { $0.simulatedBeacon($1, $2) }
        if fields["beacons"] == nil {
            report(root, "beacons", "missing; expected a list of beacons with positions")
        } else if let node = fields["beacons"], node.sequence?.count == 0 {
            report(node, "beacons", "expected at least one beacon with a position")
        }
        guard let listenerNode = fields["listener"] else {
            report(root, "listener", "missing; expected start, speed and stops")
            return nil
        }
        guard let listener = mapping(listenerNode, "listener", keys: ["start", "speed", "stops"]) else { return nil }
        let start = listener["start"].flatMap { position($0, "listener.start") }
        if listener["start"] == nil { report(listenerNode, "listener.start", "missing; expected [x, y] in metres") }
        let speed = listener["speed"].flatMap { number($0, "listener.speed", in: 0.1...5) } ?? 1.0
        let stops = list(listener["stops"], "listener.stops") { $0.stop($1, $2) }
        // Stops that were written but are wrong have their own problems; this is for none at all.
        if listener["stops"] == nil || listener["stops"]?.sequence?.count == 0 {
            report(listenerNode, "listener.stops", "expected at least one stop { at: [x, y], pause: 30s }")
        }
        guard let start, !beacons.isEmpty else { return nil }
        let walk = Trajectory(start: start, speed: speed, stops: stops).duration
        if walk == .zero, !stops.isEmpty {
            // The simulate source plays the walk again and again: one of no time never waits.
            report(listenerNode, "listener.stops", "the walk takes no time (every stop where the listener starts, with no pause); give a stop a pause")
        } else if walk > Self.longestWalk {
            report(listenerNode, "listener.stops", "the walk takes \(walk.configurationText); at most \(Self.longestWalk.components.seconds / 3600) hours (evaluate keeps every tick of it)")
        }
        return Scenario(
            name: name, seed: UInt64(seed), beacons: beacons, radio: radio, start: start, speed: speed, stops: stops)
    }

    /// A day: longer than any café visit worth simulating, and a bound on
    /// what `beacond evaluate` keeps (a tick every 100 ms).
    static let longestWalk: Duration = .seconds(24 * 3600)

    private mutating func radio(_ node: YAMLNode) -> Scenario.Radio {
        var radio = Scenario.Radio()
        let keys = [
            "path_loss_exponent", "shadowing_sigma", "shadowing_distance", "shadowing_time", "fading_k",
            "packet_loss", "sensitivity",
        ]
        guard let fields = mapping(node, "radio", keys: keys) else { return radio }
        if let n = fields["path_loss_exponent"], let v = number(n, "radio.path_loss_exponent", in: 1...6) {
            radio.pathLossExponent = v
        }
        if let n = fields["shadowing_sigma"], let v = number(n, "radio.shadowing_sigma", in: 0...20) { radio.shadowingSigma = v }
        if let n = fields["shadowing_distance"], let v = number(n, "radio.shadowing_distance", in: 0.01...100) {
            radio.shadowingDistance = v
        }
        if let n = fields["shadowing_time"], let v = duration(n, "radio.shadowing_time", positive: true) { radio.shadowingTime = v }
        if let n = fields["fading_k"], let v = number(n, "radio.fading_k", in: 0...100) { radio.fadingK = v }
        if let n = fields["packet_loss"], let v = number(n, "radio.packet_loss", in: 0...0.99) { radio.packetLoss = v }
        if let n = fields["sensitivity"], let v = number(n, "radio.sensitivity", in: -127...0) { radio.sensitivity = v }
        return radio
    }

    private mutating func simulatedBeacon(_ node: YAMLNode, _ field: String) -> Scenario.Beacon? {
        let keys = ["beacon", "position", "measured_power", "true_power", "advertising_interval"]
        guard let fields = mapping(node, field, keys: keys) else { return nil }
        var identity: BeaconIdentity?
        if let b = fields["beacon"], let beacon = mapping(b, "\(field).beacon", keys: ["uuid", "major", "minor"]) {
            if let constraint = constraint(beacon, b, "\(field).beacon") {
                if let major = constraint.major, let minor = constraint.minor {
                    identity = BeaconIdentity(uuid: constraint.uuid, major: major, minor: minor)
                } else {
                    report(b, "\(field).beacon", "a simulated beacon needs uuid, major and minor")
                }
            }
        } else if fields["beacon"] == nil {
            report(node, "\(field).beacon", "missing; expected { uuid: …, major: …, minor: … }")
        }
        let position = fields["position"].flatMap { self.position($0, "\(field).position") }
        if fields["position"] == nil { report(node, "\(field).position", "missing; expected [x, y] in metres") }
        let power = fields["measured_power"].flatMap { number(integer: $0, "\(field).measured_power", in: -127...20) } ?? -59
        let truePower = fields["true_power"].flatMap { number($0, "\(field).true_power", in: -127...20) }
        let interval = fields["advertising_interval"].flatMap {
            duration($0, "\(field).advertising_interval", positive: true)
        } ?? .milliseconds(100)
        guard let identity, let position else { return nil }
        return Scenario.Beacon(
            identity: identity, position: position, measuredPower: Int8(power), truePower: truePower,
            advertisingInterval: interval)
    }

    private mutating func stop(_ node: YAMLNode, _ field: String) -> Scenario.Stop? {
        guard let fields = mapping(node, field, keys: ["at", "pause"]) else { return nil }
        let at = fields["at"].flatMap { position($0, "\(field).at") }
        if fields["at"] == nil { report(node, "\(field).at", "missing; expected [x, y] in metres") }
        let pause = fields["pause"].flatMap { duration($0, "\(field).pause", positive: false) } ?? .zero
        guard let at else { return nil }
        return Scenario.Stop(destination: at, pause: pause)
    }

    private mutating func position(_ node: YAMLNode, _ field: String) -> Position? {
        guard let items = node.sequence, items.count == 2 else {
            report(node, field, "expected [x, y] in metres")
            return nil
        }
        guard let x = number(items[0], "\(field)[0]", in: -10_000...10_000),
            let y = number(items[1], "\(field)[1]", in: -10_000...10_000)
        else { return nil }
        return Position(x: x, y: y)
    }
}
