import BeaconCore

/// A simulated room: beacons at positions, a radio channel, and a listener
/// walking a path with pauses. Everything the simulator draws comes from
/// `seed`, so a scenario always plays out the same way.
public struct Scenario: Hashable, Sendable {
    public struct Beacon: Hashable, Sendable {
        public var identity: BeaconIdentity
        public var position: Position
        /// What the frame says (the beacon's configured calibration).
        public var measuredPower: Int8
        /// The real RSSI at 1 m; differs from `measuredPower` for a miscalibrated beacon.
        public var truePower: Double
        public var advertisingInterval: Duration

        public init(
            identity: BeaconIdentity, position: Position, measuredPower: Int8 = -59, truePower: Double? = nil,
            advertisingInterval: Duration = .milliseconds(100)
        ) {
            self.identity = identity
            self.position = position
            self.measuredPower = measuredPower
            self.truePower = truePower ?? Double(measuredPower)
            self.advertisingInterval = advertisingInterval
        }
    }

    /// The radio channel between each beacon and the listener.
    public struct Radio: Hashable, Sendable {
        /// The room's true path-loss exponent.
        public var pathLossExponent = 2.2
        /// Log-normal shadowing, dB (people, furniture): correlated in space and time.
        public var shadowingSigma = 4.0
        /// Metres the listener moves before shadowing decorrelates (Gudmundson's model).
        public var shadowingDistance = 1.5
        /// Seconds over which shadowing changes for a listener standing still (people moving around).
        public var shadowingTime: Duration = .seconds(5)
        /// Rician K factor of fast fading per packet (0 = Rayleigh, no line of sight).
        public var fadingK = 4.0
        /// Share of advertisements lost to collisions and scanning gaps.
        public var packetLoss = 0.1
        /// Weaker packets are not received at all, dBm.
        public var sensitivity = -95.0

        public init() {}
    }

    /// One leg of the walk: go to `destination`, then stand still for `pause`.
    public struct Stop: Hashable, Sendable {
        public var destination: Position
        public var pause: Duration

        public init(destination: Position, pause: Duration) {
            self.destination = destination
            self.pause = pause
        }
    }

    public var name: String
    public var seed: UInt64
    public var beacons: [Beacon]
    public var radio: Radio
    public var start: Position
    /// Walking speed, m/s.
    public var speed: Double
    public var stops: [Stop]

    public init(
        name: String, seed: UInt64, beacons: [Beacon], radio: Radio = Radio(), start: Position, speed: Double = 1.0,
        stops: [Stop]
    ) {
        self.name = name
        self.seed = seed
        self.beacons = beacons
        self.radio = radio
        self.start = start
        self.speed = speed
        self.stops = stops
    }

    public var trajectory: Trajectory { Trajectory(start: start, speed: speed, stops: stops) }
}
