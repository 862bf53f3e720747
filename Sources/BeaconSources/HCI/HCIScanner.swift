import BeaconCore

/// The `hci` source's conversation with a controller: set up a passive LE
/// scan without duplicate filtering, hand over the advertising reports, and
/// leave the controller and the socket as they were.
///
/// The sequence (PLATFORM-NOTES): save the socket filter and let events
/// through; read the supported-commands bitmap and pick legacy or extended
/// scanning from it (never from the HCI version: a Raspberry Pi 4 says 5.0 and
/// refuses the extended commands); set the parameters; enable (a scan already
/// running is someone else's and is never stopped: `rearm`).
/// When the kernel's own scan is in the way (Command Disallowed), send nothing
/// more and read the reports that scan produces.
public struct HCIScanner<Channel: HCIChannel> {
    public enum Mode: Sendable, Equatable, CustomStringConvertible {
        /// Scanning with commands of this family; `because` says why legacy when the controller lists extended.
        case scanning(ScanCommands, because: String? = nil)
        /// Not scanning ourselves: reading the reports of a scan someone else runs.
        case listening(because: String)

        public var description: String {
            switch self {
            case .scanning(.legacy, let because): "scanning with legacy LE commands (\(because ?? "the controller lists no extended scanning"))"
            case .scanning(.extended, _): "scanning with extended LE commands"
            case .listening(let reason): reason
            }
        }
    }

    public let channel: Channel
    public private(set) var mode: Mode?
    /// Scan commands another program had the controller carry out (answered
    /// Success) while we read, in any mode: each may have started or stopped
    /// the scan we hear.
    public private(set) var othersScanCommands = 0
    private var family = ScanCommands.legacy
    /// Why legacy, when the controller listed extended scanning and refused it.
    private var fallback: String?
    private var savedFilter: HCISocketFilter?
    /// Advertising reports that arrived while a command's answer was awaited.
    private var held: [[UInt8]] = []

    /// How long the controller has to answer a command.
    public static var commandTimeout: Duration { .seconds(2) }
    /// Interval and window of 10 ms (units of 0.625 ms): listen all the time.
    static var scanTiming: UInt16 { 0x0010 }

    public init(channel: Channel) {
        self.channel = channel
    }

    /// Sets the scan up; says how it scans.
    public mutating func start() throws(SourceError) -> Mode {
        savedFilter = try channel.filter()
        try channel.setFilter(.scanning)
        family = try chooseCommands()
        return try rearm()
    }

    /// Issues the scan (parameters, enable) with the family chosen at start;
    /// again after a radio went deaf (then our own scan is stopped first), or
    /// to scan ourselves once the scan we were listening to has ended. Never
    /// stops a scan that is not ours — at start a running scan is someone
    /// else's (the kernel's discovery, a tool, a program that crashed) — and
    /// Command Disallowed means listening to it.
    public mutating func rearm() throws(SourceError) -> Mode {
        // Stopping a scan that is not running may be refused; either way ours is off now.
        if case .scanning = mode { _ = try execute(family.scanEnable(false)) }
        for command in [family.scanParameters(interval: Self.scanTiming, window: Self.scanTiming), family.scanEnable(true)] {
            let outcome = try execute(command)
            if outcome.status == .commandDisallowed {
                let listening = Mode.listening(
                    because: "\(channel.name) refused \(command) with \(outcome.status): another LE scan is running "
                        + "(the kernel's own — bluetoothd discovery or a background scan — or another program's). "
                        + "Listening to the reports it produces instead, at its rate and with its duplicate filtering; stop the other scan for "
                        + "every advertisement, or use --source bluez to share the radio with bluetoothd")
                mode = listening
                return listening
            }
            guard outcome.status == .success else {
                // Some controllers list extended scanning and do not implement it (the kernel's
                // HCI_QUIRK_BROKEN_EXT_SCAN: Actions ATS2851 dongles, BCM4377): legacy then, for good.
                if family == .extended, command.opcode == ScanCommands.extended.parametersOpcode, outcome.status == .unknownCommand {
                    family = .legacy
                    fallback = "\(channel.name) lists extended scanning but answered \(command) with \(outcome.status)"
                    return try rearm()
                }
                throw .unavailable("\(channel.name) refused \(command): \(outcome.status)")
            }
        }
        mode = .scanning(family, because: fallback)
        return .scanning(family, because: fallback)
    }

    /// The next LE Meta event (no H4 byte), or `nil` when none came within `timeout`.
    /// Throws when the controller was reset under us (the kernel resets it
    /// when the adapter comes up again): its scan is gone, and a down and up
    /// quicker than any check of the adapter's flags is seen this way.
    public mutating func next(timeout: Duration) throws(SourceError) -> [UInt8]? {
        if !held.isEmpty { return held.removeFirst() }
        let deadline = ContinuousClock.now + timeout
        while true {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero, let packet = try channel.receive(timeout: remaining) else { return nil }
            if let event = Self.leMetaEvent(packet) { return event }
            guard packet.first == HCISocketFilter.eventPacketType, let outcome = HCICommandOutcome(event: packet[1...]) else {
                continue
            }
            if outcome.opcode == Self.resetOpcode {
                throw .unavailable("\(channel.name) was reset (brought down and up, or `hciconfig \(channel.name) reset`), which cleared its scan")
            }
            // We send nothing while reading: an answer to a scan command is
            // someone else's (the kernel starting its own scan, a tool). The
            // scan is theirs now; we listen, and never stop it. One the
            // controller refused (`hcitool lescan` while ours runs: Command
            // Disallowed) changed nothing, and ours is still ours.
            guard outcome.status == .success, Self.scanOpcodes.contains(outcome.opcode) else { continue }
            othersScanCommands += 1
            if case .scanning = mode {
                mode = .listening(
                    because: "another program sent \(HCICommand(opcode: outcome.opcode)) to \(channel.name) (the kernel's own "
                        + "LE scan, or a tool): listening to the scan it leaves, re-issuing ours only when reports stop")
            }
        }
    }

    /// The scan commands of both families, whoever sends them.
    static var scanOpcodes: [UInt16] {
        [ScanCommands.legacy, .extended].flatMap { [$0.parametersOpcode, $0.enableOpcode] }
    }

    /// HCI_Reset (OGF 0x03, OCF 0x0003): the first command of the kernel's initialisation of a controller.
    static var resetOpcode: UInt16 { 0x0C03 }

    /// Stops our scan (not the kernel's) and restores the socket filter.
    /// Best effort: the adapter may already be gone.
    public mutating func stop() {
        if case .scanning(let family, _) = mode { _ = try? execute(family.scanEnable(false)) }
        if let savedFilter { try? channel.setFilter(savedFilter) }
        mode = nil
        savedFilter = nil
    }

    private mutating func chooseCommands() throws(SourceError) -> ScanCommands {
        let outcome = try execute(.readLocalSupportedCommands)
        return outcome.status == .success ? ScanCommands(supportedCommands: outcome.returnParameters) : .legacy
    }

    /// Sends a command and waits for its Command Complete or Command Status.
    private mutating func execute(_ command: HCICommand) throws(SourceError) -> HCICommandOutcome {
        try channel.send(command.packet)
        let deadline = ContinuousClock.now + Self.commandTimeout
        while true {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero, let packet = try channel.receive(timeout: remaining) else {
                throw .unavailable(
                    "\(channel.name) did not answer \(command) within \(Self.commandTimeout); "
                        + "try `sudo hciconfig \(channel.name) down; sudo hciconfig \(channel.name) up` (a bare `reset` leaves "
                        + "its event masks cleared: no LE event reaches anyone), or unplug and replug the adapter")
            }
            guard packet.first == HCISocketFilter.eventPacketType else { continue }
            let event = packet[1...]
            if let outcome = HCICommandOutcome(event: event), outcome.opcode == command.opcode { return outcome }
            if let report = Self.leMetaEvent(packet), held.count < 4096 { held.append(report) }
        }
    }

    private static func leMetaEvent(_ packet: [UInt8]) -> [UInt8]? {
        guard packet.count >= 2, packet[0] == HCISocketFilter.eventPacketType, packet[1] == HCIEvent.leMetaEventCode else {
            return nil
        }
        return Array(packet[1...])
    }
}
