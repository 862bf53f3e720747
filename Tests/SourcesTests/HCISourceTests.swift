import BeaconCore
import BeaconSources
import Synchronization
import Testing

/// The `hci` source around the scanner: its thread, losing the adapter and
/// getting it back, and stopping cleanly.
@Suite struct HCISourceTests {
    /// The quiet check of tests not about quiet: a minute was reached once,
    /// when the whole suite and a build shared two cores, and re-issued a scan.
    static let neverQuiet: Duration = .seconds(86_400)

    /// What the source delivered, in a form tests compare.
    enum Seen: Equatable {
        case report(minor: UInt16)
        case available(Bool, String)
        case note(String)
        case opened(SourceSpec)
    }

    /// Runs `source` until `done` holds for what it delivered (or 10 s pass), then cancels it.
    static func run(_ source: HCISource, until done: @escaping @Sendable ([Seen]) -> Bool) async throws -> [Seen] {
        let (stream, continuation) = AsyncStream<Seen>.makeStream()
        let task = Task {
            try await source.run { event in
                switch event {
                case .hciEvent(let packet, _):
                    var decoder = AdvertisementDecoder()
                    decoder.decode(event: packet, at: Timestamp(microsecondsSinceEpoch: 0)) {
                        continuation.yield(.report(minor: $0.identity.minor))
                    }
                case .availability(let available, let reason):
                    continuation.yield(.available(available, reason))
                case .note(let note):
                    continuation.yield(.note(note))
                case .opened(let source):
                    continuation.yield(.opened(source))
                case .advertisement:
                    break
                }
            }
        }
        let deadline = Task {
            try await Task.sleep(for: .seconds(30))  // a deadline, not a wait: each test ends at its last event
            continuation.finish()
        }
        var seen: [Seen] = []
        for await item in stream {
            seen.append(item)
            if done(seen) { break }
        }
        deadline.cancel()
        task.cancel()
        try await task.value
        return seen
    }

    @Test func aProblemAtTheFirstStartIsAnError() async {
        let source = HCISource(adapter: "hci0") { _ throws(SourceError) in
            throw .unavailable("no Bluetooth adapter named hci0")
        }
        await #expect {
            try await source.run { _ in }
        } throws: { error in
            "\(error)" == "no Bluetooth adapter named hci0"
        }
    }

    @Test func losingTheAdapterIsReportedAndScanningResumesWhenItIsBack() async throws {
        let first = ScriptedController {
            $0.reports = [ScriptedController.iBeaconReport(minor: 1), ScriptedController.iBeaconReport(minor: 2)]
            $0.failure = .unavailable("hci0 stopped delivering (Broken pipe): removed, reset or powered off")
        }
        let second = ScriptedController { $0.reports = [ScriptedController.iBeaconReport(minor: 3)] }
        let attempts = Mutex(0)
        let source = HCISource(adapter: "hci0", retryInterval: .milliseconds(5), quietCheck: Self.neverQuiet) {
            _ throws(SourceError) -> any HCIChannel in
            let attempt = attempts.withLock {
                $0 += 1
                return $0
            }
            switch attempt {
            case 1: return first
            case 2, 3: throw .unavailable("no Bluetooth adapter named hci0")
            default: return second
            }
        }
        let seen = try await Self.run(source) { $0.contains(.report(minor: 3)) }
        let scanning = "hci0: scanning with legacy LE commands (the controller lists no extended scanning)"
        #expect(seen == [
            .opened(.hci(adapter: "hci0")), .available(true, scanning),
            .report(minor: 1),
            .report(minor: 2),
            .available(false, "hci0 stopped delivering (Broken pipe): removed, reset or powered off; trying again every 5ms"),
            .available(false, "no Bluetooth adapter named hci0; trying again every 5ms"),
            .opened(.hci(adapter: "hci0")), .available(true, scanning),
            .report(minor: 3),
        ])
        #expect(attempts.withLock { $0 } == 4)
        // Stopped: our scan is switched off and the socket's filter is as it was.
        #expect(second.sent.last == HCIScannerTests.legacyDisable)
        #expect(second.state.withLock { $0.filter } == ScriptedController.originalFilter)
        #expect(first.state.withLock { $0.filter } == ScriptedController.originalFilter)
    }

    /// A bare `hci` says which adapter it opened (what `hci_get_route` chose), before it says it scans.
    @Test func aBareHCISourceSaysWhichAdapterItOpened() async throws {
        let controller = ScriptedController(name: "hci1")
        let source = HCISource(adapter: nil, quietCheck: Self.neverQuiet) { _ throws(SourceError) in controller }
        let seen = try await Self.run(source) { $0.count == 2 }
        #expect(seen.first == .opened(.hci(adapter: "hci1")), "\(seen)")
        #expect(seen.last.map { if case .available(true, _) = $0 { true } else { false } } == true, "\(seen)")
    }

    @Test func anAdapterThatWentDownIsNoticedWithoutWaitingForQuiet() async throws {
        let controller = ScriptedController { $0.adapterUp = false }
        let source = HCISource(adapter: "hci0", retryInterval: .seconds(60), statusCheck: .milliseconds(1), quietCheck: Self.neverQuiet) {
            _ throws(SourceError) in controller
        }
        let seen = try await Self.run(source) { $0.count == 3 }
        #expect(seen.count == 3)
        #expect(seen.last.map { if case .available(false, let reason) = $0 { reason.contains("hci0 went down") } else { false } } == true)
    }

    /// The fault found under qemu: `hciconfig hci0 down; sleep 2; hciconfig hci0 up`
    /// left beacond deaf for good. Up again, the kernel resets the controller
    /// (its scan is gone); the Command Complete for that reset reaches our
    /// socket, and the source reports it and scans again.
    @Test func aControllerResetUnderUsIsReportedAndTheScanReissued() async throws {
        let reset: [UInt8] = [0x04, 0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00]
        let first = ScriptedController { $0.reports = [ScriptedController.iBeaconReport(minor: 1), reset] }
        let second = ScriptedController { $0.reports = [ScriptedController.iBeaconReport(minor: 2)] }
        let opened = Mutex(0)
        let source = HCISource(adapter: "hci0", retryInterval: .milliseconds(5), quietCheck: Self.neverQuiet) {
            _ throws(SourceError) -> any HCIChannel in
            opened.withLock {
                $0 += 1
                return $0
            } == 1 ? first : second
        }
        let seen = try await Self.run(source) { $0.contains(.report(minor: 2)) }
        let scanning = Seen.available(true, "hci0: scanning with legacy LE commands (the controller lists no extended scanning)")
        #expect(seen == [
            .opened(.hci(adapter: "hci0")), scanning,
            .report(minor: 1),
            .available(false, "hci0 was reset (brought down and up, or `hciconfig hci0 reset`), which cleared its scan; trying again every 5ms"),
            .opened(.hci(adapter: "hci0")), scanning,
            .report(minor: 2),
        ])
        #expect(second.sent == [
            HCIScannerTests.readCommands, HCIScannerTests.legacyParameters, HCIScannerTests.legacyEnable, HCIScannerTests.legacyDisable,
        ])
    }

    /// A second reset after scanning again is said as the first was (the
    /// audit of 2026-11-27: the same reason was taken for the outage already
    /// said, and the regions went on as if the radio had never stopped).
    @Test func theSameOutageTwiceIsSaidTwice() async throws {
        let reset: [UInt8] = [0x04, 0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00]
        let controllers = [
            ScriptedController { $0.reports = [ScriptedController.iBeaconReport(minor: 1), reset] },
            ScriptedController { $0.reports = [ScriptedController.iBeaconReport(minor: 2), reset] },
            ScriptedController { $0.reports = [ScriptedController.iBeaconReport(minor: 3)] },
        ]
        let opened = Mutex(0)
        let source = HCISource(adapter: "hci0", retryInterval: .milliseconds(5), quietCheck: Self.neverQuiet) {
            _ throws(SourceError) -> any HCIChannel in
            controllers[opened.withLock { opened in
                defer { opened += 1 }
                return min(opened, controllers.count - 1)
            }]
        }
        let seen = try await Self.run(source) { $0.contains(.report(minor: 3)) }
        let outage = Seen.available(false, "hci0 was reset (brought down and up, or `hciconfig hci0 reset`), which cleared its scan; trying again every 5ms")
        #expect(seen.filter { $0 == outage }.count == 2, "\(seen)")
    }

    /// A radio gone deaf (btvirt, like some Pi radios, reports only when the scan is enabled anew):
    /// the scan is re-issued after the quiet, and the comeback is noted.
    @Test func aQuietScanIsReissuedAndTheComebackNoted() async throws {
        let controller = ScriptedController { $0.reports = [ScriptedController.iBeaconReport(minor: 1)] }
        let source = HCISource(adapter: "hci0", quietCheck: .milliseconds(20), recoveryAttempts: 2) { _ throws(SourceError) in controller }
        let seen = try await Self.run(source) { $0.count == 6 }
        #expect(seen == [
            .opened(.hci(adapter: "hci0")), .available(true, "hci0: scanning with legacy LE commands (the controller lists no extended scanning)"),
            .report(minor: 1),
            .note("hci0: no advertising report for 20ms; re-issued the scan (try 1 of 2): scanning with legacy LE commands (the controller lists no extended scanning)"),
            .report(minor: 1),
            .note("hci0: advertisements came back after re-issuing the scan (1 try)"),
        ])
        #expect(Array(controller.sent[3...5]) == [HCIScannerTests.legacyDisable, HCIScannerTests.legacyParameters, HCIScannerTests.legacyEnable])
    }

    /// Someone else's scan command (the kernel starting its own scan, `hcitool
    /// cmd`) arrives while we read: the scan is theirs now. We listen, and when
    /// reports stop we issue ours without stopping anything first. Each change
    /// of how it scans is the availability's reason (since 2026-11-27: a note
    /// only, and Manager1 went on saying "scanning with legacy LE commands").
    @Test func aScanCommandFromSomeoneElseMeansListeningAndNeverStoppingTheirScan() async throws {
        let foreignDisable: [UInt8] = [0x04, 0x0E, 0x04, 0x01, 0x0C, 0x20, 0x00]
        let controller = ScriptedController { $0.reports = [ScriptedController.iBeaconReport(minor: 1), foreignDisable] }
        let source = HCISource(adapter: "hci0", quietCheck: .milliseconds(20)) { _ throws(SourceError) in controller }
        let seen = try await Self.run(source) { $0.count == 8 }
        let scanning = "scanning with legacy LE commands (the controller lists no extended scanning)"
        #expect(seen == [
            .opened(.hci(adapter: "hci0")), .available(true, "hci0: \(scanning)"),
            .report(minor: 1),
            .available(true, "hci0: another program sent LE Set Scan Enable (0x200C) to hci0 (the kernel's own LE scan, or a tool): "
                + "listening to the scan it leaves, re-issuing ours only when reports stop"),
            .note("hci0: no advertising report for 20ms; re-issued the scan (try 1 of 3): \(scanning)"),
            .available(true, "hci0: \(scanning)"),
            .report(minor: 1),
            .note("hci0: advertisements came back after re-issuing the scan (1 try)"),
        ])
        #expect(Array(controller.sent[3...4]) == [HCIScannerTests.legacyParameters, HCIScannerTests.legacyEnable])
    }

    /// Someone else's scan command that the controller refused (`hcitool
    /// lescan` while our scan runs: Command Disallowed) changed nothing: our
    /// scan stays ours, and stopping stops it (the audit of 2026-11-27: it
    /// was taken for theirs, and left running when beacond stopped).
    @Test func aScanCommandRefusedToSomeoneElseLeavesOurScanOurs() async throws {
        let refusedParameters: [UInt8] = [0x04, 0x0E, 0x04, 0x01, 0x0B, 0x20, 0x0C]
        let controller = ScriptedController {
            $0.reports = [ScriptedController.iBeaconReport(minor: 1), refusedParameters, ScriptedController.iBeaconReport(minor: 2)]
        }
        let source = HCISource(adapter: "hci0", quietCheck: .seconds(86_400)) { _ throws(SourceError) in controller }
        let seen = try await Self.run(source) { $0.count == 4 }
        #expect(seen == [
            .opened(.hci(adapter: "hci0")), .available(true, "hci0: scanning with legacy LE commands (the controller lists no extended scanning)"),
            .report(minor: 1), .report(minor: 2),
        ])
        #expect(controller.sent.last == HCIScannerTests.legacyDisable)
    }

    /// Silence that re-issuing does not end (an empty room) gets a bounded number of tries, then is left alone.
    @Test func reissuingIsBoundedAndThenGivenUp() async throws {
        let controller = ScriptedController()
        let source = HCISource(adapter: "hci0", quietCheck: .milliseconds(5), recoveryAttempts: 2) { _ throws(SourceError) in controller }
        let seen = try await Self.run(source) { $0.count == 5 }
        #expect(seen.dropFirst(2).map { if case .note(let note) = $0 { String(note.prefix(55)) } else { "\($0)" } } == [
            "hci0: no advertising report for 5ms; re-issued the scan",
            "hci0: no advertising report for 15ms; re-issued the sca",
            "hci0: still no advertising report after 2 re-issued sca",
        ])
        // The first scan and two tries: three enables, no more.
        #expect(controller.sent.filter { $0 == HCIScannerTests.legacyEnable }.count == 3)
    }

    /// Another program disabling the scan after the tries were spent has
    /// its silence count afresh, whether we scanned or listened to its scan
    /// then: `bluetoothctl scan on` (the kernel's scan: we listen, our
    /// re-issues refused), a night's empty café spending every try, then
    /// `scan off`. The scan is re-issued and beacons are heard again (an
    /// audit of 2026-11-28: nothing re-issued it, deaf until a restart; the
    /// first fix restarted only on a change of mode, which `scan off` while
    /// listening is not).
    @Test func aScanDisabledByAnotherProgramAfterTheTriesIsReissued() async throws {
        let controller = ScriptedController()
        let source = HCISource(adapter: "hci0", quietCheck: .milliseconds(5), recoveryAttempts: 1) { _ throws(SourceError) in controller }
        let foreignEnable: [UInt8] = [0x04, 0x0E, 0x04, 0x01, 0x0C, 0x20, 0x00]
        let foreignDisable = foreignEnable
        let seen = try await Self.run(source) { seen in
            switch seen.last {
            case .available(true, "hci0: scanning with legacy LE commands (the controller lists no extended scanning)") where seen.count == 2:
                // The kernel starts its own scan: ours is refused while it runs.
                controller.state.withLock {
                    $0.statuses[ScanCommands.legacy.parametersOpcode] = .commandDisallowed
                    $0.incoming.append(foreignEnable)
                }
            case .note(let note) where note.hasPrefix("hci0: still no advertising report") && seen.contains(where: Self.refusedForAnotherScan):
                // Every try spent while listening (ours refused); the other program stops its scan.
                controller.state.withLock {
                    $0.statuses[ScanCommands.legacy.parametersOpcode] = nil
                    $0.incoming.append(foreignDisable)
                    $0.reports = [ScriptedController.iBeaconReport(minor: 1)]
                }
            default:
                break
            }
            return seen.last == .report(minor: 1)
        }
        #expect(seen.last == .report(minor: 1), "\(seen)")
    }

    /// Our scan refused while another runs: we listen to it.
    static func refusedForAnotherScan(_ seen: Seen) -> Bool {
        if case .available(true, let reason) = seen { reason.contains("another LE scan is running") } else { false }
    }

}
