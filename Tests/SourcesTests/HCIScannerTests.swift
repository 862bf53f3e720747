import BeaconCore
import BeaconSources
import Testing

/// The `hci` source's command sequence, byte for byte, against a scripted controller.
@Suite struct HCIScannerTests {
    static let readCommands: [UInt8] = [0x01, 0x02, 0x10, 0x00]
    static let legacyDisable: [UInt8] = [0x01, 0x0C, 0x20, 0x02, 0x00, 0x00]
    /// Passive, interval 10 ms, window 10 ms, public address, accept all.
    static let legacyParameters: [UInt8] = [0x01, 0x0B, 0x20, 0x07, 0x00, 0x10, 0x00, 0x10, 0x00, 0x00, 0x00]
    /// Enable, duplicates NOT filtered.
    static let legacyEnable: [UInt8] = [0x01, 0x0C, 0x20, 0x02, 0x01, 0x00]
    static let extendedDisable: [UInt8] = [0x01, 0x42, 0x20, 0x06, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]
    /// Public address, accept all, 1M PHY: passive, 10 ms, 10 ms.
    static let extendedParameters: [UInt8] = [0x01, 0x41, 0x20, 0x08, 0x00, 0x00, 0x01, 0x00, 0x10, 0x00, 0x10, 0x00]
    static let extendedEnable: [UInt8] = [0x01, 0x42, 0x20, 0x06, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00]

    @Test func legacyControllerGetsThePassiveScanSequenceAndReportsFlow() throws {
        let controller = ScriptedController { $0.reports = [ScriptedController.iBeaconReport(minor: 7)] }
        var scanner = HCIScanner(channel: controller)
        let mode = try scanner.start()
        #expect(mode == .scanning(.legacy))
        #expect(controller.sent == [Self.readCommands, Self.legacyParameters, Self.legacyEnable])
        #expect(controller.state.withLock { $0.filter } == .scanning)

        let event = try #require(try scanner.next(timeout: .milliseconds(10)))
        var decoder = AdvertisementDecoder()
        var minors: [UInt16] = []
        decoder.decode(event: event[...], at: Timestamp(microsecondsSinceEpoch: 0)) { minors.append($0.identity.minor) }
        #expect(minors == [7])
        #expect(try scanner.next(timeout: .milliseconds(10)) == nil)

        scanner.stop()
        #expect(controller.sent.last == Self.legacyDisable)
        #expect(controller.state.withLock { $0.filter } == ScriptedController.originalFilter)
    }

    @Test func extendedScanningIsChosenFromTheBitmapAndNeverMixed() throws {
        let controller = ScriptedController {
            $0.octet37 = 0b0110_0000
            $0.reports = [ScriptedController.iBeaconReport(minor: 3, extended: true)]
        }
        var scanner = HCIScanner(channel: controller)
        #expect(try scanner.start() == .scanning(.extended))
        #expect(controller.sent == [Self.readCommands, Self.extendedParameters, Self.extendedEnable])
        let event = try #require(try scanner.next(timeout: .milliseconds(10)))
        #expect(event[2] == HCIEvent.extendedAdvertisingReport)
        scanner.stop()
        #expect(controller.sent.last == Self.extendedDisable)
        let legacyOpcodes: Set<UInt16> = [ScanCommands.legacy.parametersOpcode, ScanCommands.legacy.enableOpcode]
        #expect(controller.sentOpcodes.allSatisfy { !legacyOpcodes.contains($0) })
    }

    /// A Raspberry Pi 4 says HCI 5.0 but lists only one of the two extended
    /// scan commands: the bitmap, not the version, decides.
    @Test(arguments: [UInt8(0b0010_0000), 0b0100_0000, 0b1001_1111])
    func halfListedExtendedScanningMeansLegacy(octet37: UInt8) throws {
        let controller = ScriptedController { $0.octet37 = octet37 }
        var scanner = HCIScanner(channel: controller)
        #expect(try scanner.start() == .scanning(.legacy))
        let extendedOpcodes: Set<UInt16> = [ScanCommands.extended.parametersOpcode, ScanCommands.extended.enableOpcode]
        #expect(controller.sentOpcodes.allSatisfy { !extendedOpcodes.contains($0) })
    }

    /// A controller that lists extended scanning and answers its first
    /// command Unknown HCI Command (the kernel's HCI_QUIRK_BROKEN_EXT_SCAN:
    /// Actions ATS2851, BCM4377) is scanned with the legacy commands, and
    /// says why (an audit of 2026-11-28: beacond stopped, exit 69, for good).
    @Test func extendedScanningRefusedAsUnknownFallsBackToLegacy() throws {
        let controller = ScriptedController {
            $0.octet37 = 0b0110_0000
            $0.statuses[ScanCommands.extended.parametersOpcode] = .unknownCommand
        }
        var scanner = HCIScanner(channel: controller)
        let mode = try scanner.start()
        #expect(mode == .scanning(.legacy, because: "hci0 lists extended scanning but answered LE Set Extended Scan Parameters (0x2041) with Unknown HCI Command (0x1)"), "\(mode)")
        #expect(controller.sent.suffix(2) == [Self.legacyParameters, Self.legacyEnable])
        scanner.stop()
        #expect(controller.sent.last == Self.legacyDisable)
    }

    @Test func unreadableBitmapFallsBackToLegacy() throws {
        let controller = ScriptedController { $0.statuses[HCICommand.readLocalSupportedCommandsOpcode] = .unknownCommand }
        var scanner = HCIScanner(channel: controller)
        #expect(try scanner.start() == .scanning(.legacy))
    }

    /// While the kernel's own scan runs, the controller says Command Disallowed:
    /// the source sends nothing more, reads that scan's reports, says so, and
    /// on stop leaves the kernel's scan alone.
    @Test func kernelScanInTheWayMeansListeningOnly() throws {
        let report = ScriptedController.iBeaconReport(minor: 9)
        let controller = ScriptedController {
            $0.statuses[ScanCommands.legacy.parametersOpcode] = .commandDisallowed
            $0.incoming = []
            $0.reports = []
        }
        var scanner = HCIScanner(channel: controller)
        let mode = try scanner.start()
        guard case .listening(let reason) = mode else {
            Issue.record("expected listening, got \(mode)")
            return
        }
        #expect(reason.contains("Command Disallowed"))
        #expect(reason.contains("kernel"))
        #expect(reason.contains("--source bluez"))
        #expect(controller.sent == [Self.readCommands, Self.legacyParameters])
        #expect(controller.state.withLock { $0.filter } == .scanning)

        controller.state.withLock { $0.incoming.append(report) }
        #expect(try scanner.next(timeout: .milliseconds(10)) == Array(report.dropFirst()))

        let sentBeforeStop = controller.sent.count
        scanner.stop()
        #expect(controller.sent.count == sentBeforeStop)
        #expect(controller.state.withLock { $0.filter } == ScriptedController.originalFilter)
    }

    @Test func refusedEnableIsAnErrorNamingCommandAndStatus() {
        let controller = ScriptedController { $0.statuses[ScanCommands.legacy.enableOpcode] = .invalidParameters }
        var scanner = HCIScanner(channel: controller)
        #expect {
            try scanner.start()
        } throws: { error in
            "\(error)".contains("LE Set Scan Enable (0x200C)") && "\(error)".contains("Invalid HCI Command Parameters (0x12)")
        }
    }

    @Test func silentControllerTimesOutWithAdvice() {
        let controller = ScriptedController { $0.statuses[HCICommand.readLocalSupportedCommandsOpcode] = .some(nil) }
        var scanner = HCIScanner(channel: controller)
        #expect {
            try scanner.start()
        } throws: { error in
            "\(error)".contains("did not answer Read Local Supported Commands") && "\(error)".contains("sudo hciconfig hci0 down; sudo hciconfig hci0 up")
        }
    }

    /// Reports that arrive while a command's answer is awaited are kept, in order.
    @Test func reportsInterleavedWithCommandAnswersAreNotLost() throws {
        let early = ScriptedController.iBeaconReport(minor: 1)
        let controller = ScriptedController {
            $0.interleave = (ScanCommands.legacy.enableOpcode, early)
            $0.reports = [ScriptedController.iBeaconReport(minor: 2)]
        }
        var scanner = HCIScanner(channel: controller)
        _ = try scanner.start()
        let first = try #require(try scanner.next(timeout: .milliseconds(10)))
        let second = try #require(try scanner.next(timeout: .milliseconds(10)))
        #expect(first == Array(early.dropFirst()))
        #expect(second == Array(ScriptedController.iBeaconReport(minor: 2).dropFirst()))
    }

    @Test func commandAnswersAreReadFromCompleteAndStatusEvents() throws {
        let complete = try #require(HCICommandOutcome(event: [0x0E, 0x04, 0x01, 0x0C, 0x20, 0x0C][...]))
        #expect(complete.opcode == 0x200C)
        #expect(complete.status == .commandDisallowed)
        let status = try #require(HCICommandOutcome(event: [0x0F, 0x04, 0x01, 0x01, 0x41, 0x20][...]))
        #expect(status.opcode == 0x2041)
        #expect(status.status == .unknownCommand)
        #expect(HCICommandOutcome(event: [0x0E, 0x05, 0x01, 0x0C, 0x20, 0x00][...]) == nil)
        #expect(HCICommandOutcome(event: [0x3E, 0x01, 0x02][...]) == nil)
        #expect(HCICommandOutcome(event: [0x0F, 0x03, 0x00, 0x01, 0x41][...]) == nil)
    }
}
