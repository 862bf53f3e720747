import BeaconCore
import BeaconTestSupport
import Foundation
import Testing

/// `beacond scan` and `check-config` as a person runs them.
@Suite struct ScanCommandTests {
    @Test func raspberryPiLogReplaysToItsIBeacons() async throws {
        let result = try await TestSupport.run(
            TestSupport.product("beacond"),
            ["scan", "--source", "replay:\(TestSupport.recording("rpi-hcidump-ibeacon.raw"))@max", "--json"])
        #expect(result.status == 0)
        var counts: [String: Int] = [:]
        for line in result.stdout.split(separator: "\n") {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let key = "\(object["uuid"]!)/\(object["major"]!)/\(object["minor"]!)/\(object["measured_power"]!)"
            counts[key, default: 0] += 1
        }
        #expect(counts == [
            "A495DEAD-C5B1-4B44-B512-1370F02D74DE/12345/65535/-59": 34,
            "DAF246CE-8363-11E4-B116-123B93F75CBA/0/1/-62": 79,
        ])
        #expect(result.stderr.contains("242 advertisements read"))
        #expect(result.stderr.contains("113 iBeacons decoded"))
        #expect(result.stderr.contains("0 malformed dropped"))
    }

    /// The lines are written byte by byte for speed; they must read exactly
    /// as Foundation's `JSONEncoder` (sorted keys) and string interpolation
    /// write them, for every address type, no reading, an implausible
    /// measured power and the extreme times.
    @Test(arguments: [false, true]) func linesReadAsFoundationWritesThem(json: Bool) async throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var writer = BtsnoopWriter(datalink: .monitor)
        var expected: [String] = []
        let uuid = UUID()
        let times = [Int64.min, -1, 0, 1_700_000_000_123_456, Int64.max].map(Timestamp.init(microsecondsSinceEpoch:))
        for (index, time) in times.enumerated() {
            for addressType in [0, 1, 2, 3, 0x42] as [UInt8] {
                for (rssi, power) in [(Int8(-67), Int8(-59)), (127, -59), (0, -20), (-128, 0), (-1, -128)] {
                    let identity = BeaconIdentity(uuid: uuid, major: UInt16(index * 16_000), minor: UInt16.max - UInt16(addressType))
                    let frame = IBeaconFrame(identity: identity, measuredPower: power)
                    let address = BluetoothAddress(0xA0, 0x0B, UInt8(index), addressType, UInt8(bitPattern: rssi), 0xFF)
                    let report = AdvertisingReport(
                        kind: .legacy(.advNonconnInd), addressType: addressType, address: address, rssi: rssi,
                        data: ([0x02, 0x01, 0x06] + frame.advertisingData)[...])
                    writer.append(event: HCIEvent.advertisingReportEvent([report]), at: time)
                    let sighting = BeaconSighting(
                        time: time, frame: frame, rssi: BeaconSighting.reading(rssi), address: address,
                        addressType: addressType)
                    expected.append(json ? try Self.foundationJSON(sighting) : Self.interpolatedText(sighting))
                }
            }
        }
        let path = directory.appendingPathComponent("all-kinds.btsnoop").path
        try Data(writer.bytes).write(to: URL(fileURLWithPath: path))
        let result = try await TestSupport.run(
            TestSupport.product("beacond"), ["scan", "--source", "replay:\(path)@max"] + (json ? ["--json"] : []))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.split(separator: "\n").map(String.init) == expected)
    }

    /// A sighting as `scan --json` printed it with `JSONEncoder`.
    static func foundationJSON(_ sighting: BeaconSighting) throws -> String {
        struct Record: Encodable {
            var time: String, time_us: Int64, address: String, address_type: String, uuid: String
            var major: UInt16, minor: UInt16, measured_power: Int8, measured_power_plausible: Bool, rssi: Int8?
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let record = Record(
            time: sighting.time.description, time_us: sighting.time.microsecondsSinceEpoch,
            address: sighting.address.description, address_type: AdvertisingReport.addressTypeName(sighting.addressType),
            uuid: sighting.identity.uuid.uuidString, major: sighting.identity.major, minor: sighting.identity.minor,
            measured_power: sighting.frame.measuredPower,
            measured_power_plausible: sighting.frame.hasPlausibleMeasuredPower, rssi: sighting.rssi)
        return String(decoding: try encoder.encode(record), as: UTF8.self)
    }

    /// A sighting as `scan` printed it with string interpolation.
    static func interpolatedText(_ sighting: BeaconSighting) -> String {
        let identity = sighting.identity
        let power = "\(sighting.frame.measuredPower) dBm" + (sighting.frame.hasPlausibleMeasuredPower ? "" : " (not a 1 m calibration)")
        return "\(sighting.time) \(sighting.address) \(identity.uuid.uuidString) major \(identity.major) minor \(identity.minor) "
            + "power \(power) rssi \(sighting.rssi.map { "\($0) dBm" } ?? "n/a")"
    }

    @Test func truncatedCaptureReplaysWhatItHasAndSaysWhere() async throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var generator = SystemRandomNumberGenerator()
        let capture = BtmonCrossCheckTests.generatedCapture(datalink: .monitor, using: &generator)
        let path = directory.appendingPathComponent("cut.btsnoop").path
        try Data(capture.bytes.dropLast(7)).write(to: URL(fileURLWithPath: path))
        let result = try await TestSupport.run(TestSupport.product("beacond"), ["scan", "--source", "replay:\(path)@max", "--json"])
        #expect(result.status == 0)
        #expect(result.stderr.contains("stopped early: truncated at byte"))
        let lines = result.stdout.split(separator: "\n").count
        #expect(lines >= capture.iBeacons - 3 && lines <= capture.iBeacons)
    }

    @Test func unknownFileFormatIsRefusedClearly() async throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("notes.txt").path
        try Data("shopping list\n".utf8).write(to: URL(fileURLWithPath: path))
        let result = try await TestSupport.run(TestSupport.product("beacond"), ["scan", "--source", "replay:\(path)"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("not a recording beacond knows"))
        let missing = try await TestSupport.run(TestSupport.product("beacond"), ["scan", "--source", "replay:/nonexistent.btsnoop"])
        #expect(missing.status != 0)
        #expect(missing.stderr.contains("no such file"))
    }

    /// A pcapng simple packet has no time: paced, it comes 100 ms after the
    /// packet before it, and timed packets after it keep the recording's pace.
    /// Until 2026-11-26 one among timed packets was due at the wall clock's
    /// time (the replay waited for hours), and one first made every later
    /// packet due in the past (no pacing at all).
    @Test(arguments: [0, 1]) func aPacedReplayKeepsItsPaceAroundAPacketWithoutATime(untimed: Int) async throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var writer = PcapngWriter()
        let interface = writer.addInterface(linkType: LinkType.bluetoothHCIH4.rawValue)
        let t0 = Timestamp(microsecondsSinceEpoch: 1_700_000_000_000_000)
        for index in 0..<3 {
            let frame = IBeaconFrame(identity: BeaconIdentity(uuid: UUID(), major: 1, minor: UInt16(index + 1)), measuredPower: -59)
            let report = AdvertisingReport(
                kind: .legacy(.advNonconnInd), addressType: 0, address: BluetoothAddress(0xA0, 0, 0, 0, 0, UInt8(index)), rssi: -60,
                data: ([0x02, 0x01, 0x06] + frame.advertisingData)[...])
            let packet = LinkType.bluetoothHCIH4.packet(for: report)
            if index == untimed { writer.append(simplePacket: packet) } else { writer.append(packet: packet, interface: interface, at: t0 + .seconds(index)) }
        }
        let path = directory.appendingPathComponent("with-simple-packet.pcapng").path
        try Data(writer.bytes).write(to: URL(fileURLWithPath: path))
        // Under timeout(1): a replay that waits for a packet for hours ends in 124. The
        // run's own time is taken in the shell around it (the test may wait to start it).
        let script = #"s=$(date +%s%N); timeout 60 "$0" scan --source "replay:$1@1"; r=$?; echo "ms=$((($(date +%s%N) - s) / 1000000))" >&2; exit $r"#
        let result = try await TestSupport.run("/bin/bash", ["-c", script, TestSupport.product("beacond"), path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.split(separator: "\n").map { line in (1...3).contains { line.contains("minor \($0) ") } } == [true, true, true])
        // The last two timed packets are a recorded second or two apart, paced at @1.
        let milliseconds = result.stderr.split(separator: "\n").last { $0.hasPrefix("ms=") }.flatMap { Int($0.dropFirst(3)) }
        #expect((milliseconds ?? 0) >= 900, "\(result.stderr)")
    }

    /// Stopped by a signal, `beacond scan` has printed every sighting it
    /// decoded (each flushed to the pipe as it went: the first arrive while it
    /// runs) and then its summary, whose count matches the lines.
    @Test(arguments: [SIGINT, SIGTERM]) func aSignalledScanPrintsEveryLineAndItsSummary(signal: Int32) async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: TestSupport.product("beacond"))
        process.arguments = ["scan", "--source", "simulate", "--config", TestSupport.repository("beacons.yaml"), "--json"]
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        defer { if process.isRunning { process.killAndWait() } }
        let deadline = DispatchTime.now() + 30
        var lines: [String] = []
        for _ in 0..<3 { lines.append(try #require(await out.fileHandleForReading.line(deadline: deadline))) }
        kill(process.processIdentifier, signal)
        // A deadline of its own for the rest: a reader that gave up early would
        // leave beacond blocked on a full pipe.
        let drained = DispatchTime.now() + 30
        while let line = await out.fileHandleForReading.line(deadline: drained) { lines.append(line) }
        var stderr: [String] = []
        while let line = await err.fileHandleForReading.line(deadline: drained) { stderr.append(line) }
        // Waited for without blocking one of the test pool's threads (waitUntilExit
        // would, and two such waits stall every other test on two cores).
        let exited = await eventually(seconds: 30) { !process.isRunning }
        try #require(exited, "beacond scan was still running 30 s after signal \(signal); stderr: \(stderr)")
        #expect(process.terminationStatus == 0)
        for line in lines {
            #expect(line.hasPrefix("{\"address\":") && line.hasSuffix("}"), "a whole JSON line: \(line)")
        }
        let summary = try #require(stderr.first { $0.contains("advertisements read") }, "no summary in \(stderr)")
        #expect(summary.contains(" \(lines.count) iBeacons decoded"), "\(lines.count) lines printed; \(summary)")
    }

    /// Whether this kernel has Bluetooth sockets at all (this development machine and CI containers do not).
    static var kernelHasBluetooth: Bool {
        let probe = socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue), 1)
        if probe >= 0 { close(probe) }
        return probe >= 0 || errno != EAFNOSUPPORT
    }

    @Test func hciSourceExplainsAMachineWithoutBluetooth() async throws {
        let result = try await TestSupport.run(TestSupport.product("beacond"), ["scan", "--source", "hci"])
        #expect(result.status != 0)
        if Self.kernelHasBluetooth {
            // A Pi: the message names what is missing (adapter, capability).
            #expect(result.stderr.contains("hciconfig") || result.stderr.contains("setcap") || result.stderr.contains("adapter"))
        } else {
            #expect(result.stderr.contains("this kernel offers no Bluetooth sockets"))
            #expect(result.stderr.contains("Address family not supported"))
            #expect(result.stderr.contains("--source simulate or --source replay:FILE"))
        }
    }

    /// `auto` on a machine with no radio and no bluetoothd: both tries are
    /// named, with the two ways to run without a radio.
    @Test func autoExplainsBothSourcesAndTheWaysWithoutARadio() async throws {
        let bus = try PrivateBus()
        let result = try await TestSupport.run(
            TestSupport.product("beacond"), ["scan", "--source", "auto"], environment: bus.environment)
        #expect(result.status != 0)
        #expect(result.stderr.contains("no radio to scan with"))
        #expect(result.stderr.contains("bluez: bluetoothd is not running (nobody owns org.bluez on the system bus)"))
        #expect(result.stderr.contains("--source simulate"))
        #expect(result.stderr.contains("--source replay:FILE"))
        if !Self.kernelHasBluetooth {
            #expect(result.stderr.contains("hci: this kernel offers no Bluetooth sockets"))
        }
    }

    @Test func bluezSourceWithoutASystemBusSaysSo() async throws {
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=/nonexistent/beacond-test-bus"
        let result = try await TestSupport.run(TestSupport.product("beacond"), ["scan", "--source", "bluez"], environment: environment)
        #expect(result.status != 0)
        #expect(result.stderr.contains("cannot reach the system bus to talk to BlueZ"))
    }

    @Test func checkConfigAcceptsTheShippedFileAndRefusesABrokenOne() async throws {
        let shipped = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("beacons.yaml").path
        let good = try await TestSupport.run(TestSupport.product("beacond"), ["check-config", shipped])
        #expect(good.status == 0)
        #expect(good.stdout.contains("咖啡小站"))

        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let broken = directory.appendingPathComponent("beacons.yaml").path
        try Data(
            """
            regions:
              - id: cafe
                uuid: not-a-uuid
            venues:
              - id: counter
                name: Counter
                beacon: { uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0, major: 70000 }
                colour: blue
            """.utf8
        ).write(to: URL(fileURLWithPath: broken))
        let bad = try await TestSupport.run(TestSupport.product("beacond"), ["check-config", broken])
        #expect(bad.status == 1)
        #expect(bad.stderr.contains("\(broken):3: regions[0].uuid: expected a UUID"))
        #expect(bad.stderr.contains("\(broken):7: venues[0].beacon.major: expected an integer 0...65535, got 70000"))
        #expect(bad.stderr.contains("\(broken):8: venues[0].colour: unknown key"))
        // One line per problem, in the order of the file.
        #expect(bad.stderr.split(separator: "\n").prefix(3).map { $0.split(separator: ":")[1] } == ["3", "7", "8"])
    }

    /// The count is of every problem, those past the hundred listed too, and
    /// a file missing from the working directory names the installed one as
    /// check-config takes it, not only as an option it does not take (the audit of 2026-11-27).
    @Test func checkConfigCountsEveryProblemAndNamesTheInstalledFile() async throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("unknown-keys.yaml").path
        try Data((0..<150).map { "k\($0): 1\n" }.joined().utf8).write(to: URL(fileURLWithPath: file))
        let many = try await TestSupport.run(TestSupport.product("beacond"), ["check-config", file])
        #expect(many.status == 1)
        #expect(many.stderr.hasSuffix("… and 50 more problem(s)\n\(file): invalid, 150 problem(s)\n"), "\(many.stderr.suffix(200))")
        let missing = try await TestSupport.run(TestSupport.product("beacond"), ["check-config", "no-such-beacons.yaml"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("in the working directory; an installed beacond reads /etc/beacond/beacons.yaml"), "\(missing.stderr)")
        #expect(missing.stderr.contains("beacond check-config /etc/beacond/beacons.yaml"), "\(missing.stderr)")
    }

    /// What it prints is all it understood: RSSI gates and a region's own
    /// exit time too, and the node id MQTT will really use.
    @Test func checkConfigShowsEverySettingThatChangesBehaviour() async throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("beacons.yaml").path
        try Data(
            """
            ranging: { enter_rssi: -85, exit_rssi: -92 }
            regions:
              - id: cafe
                uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0
                exit_after: 30s
                enter_rssi: -80
            mqtt:
              url: mqtt://127.0.0.1
            """.utf8
        ).write(to: URL(fileURLWithPath: file))
        let result = try await TestSupport.run(TestSupport.product("beacond"), ["check-config", file])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("; enter at -85.0 dBm or stronger, exit when filtered below -92.0 dBm;"), "\(result.stdout)")
        #expect(result.stdout.contains("cafe: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0 major any minor any; notify on entry and exit; exit after 30s; enter at -80.0 dBm or stronger"))
        let node = try #require(result.stdout.split(separator: "\n").first { $0.hasPrefix("mqtt: mqtt://127.0.0.1:1883 as node ") })
        #expect(
            node.hasSuffix(" (from the host name), topics beacond/…; discovery under homeassistant/, Home Assistant's birth message on homeassistant/status"),
            "\(node)")
        #expect(!node.contains("as node (the host name)"))
    }

    /// The size limit holds in the program itself, not only in the tests'
    /// process (where full Foundation is loaded): a file over 8 MiB of valid
    /// YAML, a FIFO and a character device are refused unread.
    @Test func checkConfigRefusesAFileOverTheLimitAndWhatIsNoFile() async throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let huge = directory.appendingPathComponent("huge.yaml").path
        try Data(("source: auto\n" + String(repeating: "\n", count: 8 << 20)).utf8).write(to: URL(fileURLWithPath: huge))
        let refused = try await TestSupport.run(TestSupport.product("beacond"), ["check-config", huge])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("\(huge): cannot read: larger than 8 MiB"), "\(refused.stderr)")
        let small = directory.appendingPathComponent("small.yaml").path
        try Data(("source: auto\n" + String(repeating: "\n", count: 1 << 20)).utf8).write(to: URL(fileURLWithPath: small))
        #expect(try await TestSupport.run(TestSupport.product("beacond"), ["check-config", small]).status == 0)

        let fifo = directory.appendingPathComponent("fifo.yaml").path
        #expect(mkfifo(fifo, 0o600) == 0)
        for path in [fifo, "/dev/zero"] {
            let result = try await TestSupport.run(TestSupport.product("beacond"), ["check-config", path])
            #expect(result.status == 1)
            #expect(result.stderr.contains("\(path): cannot read: not a regular file"), "\(result.stderr)")
        }
    }

    /// A replay reads its capture whole first: a device that never ends or a
    /// FIFO whose writer never writes is refused at once, not read until
    /// memory runs out or SIGTERM is ignored.
    @Test func aReplayOfWhatIsNoFileIsRefusedAtOnce() async throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fifo = directory.appendingPathComponent("capture").path
        #expect(mkfifo(fifo, 0o600) == 0)
        for path in ["/dev/zero", fifo] {
            let result = try await TestSupport.run(TestSupport.product("beacond"), ["scan", "--source", "replay:\(path)@max"])
            #expect(result.status != 0)
            #expect(result.stderr.contains("cannot read \(path): not a regular file"), "\(result.stderr)")
        }
    }
}
