import BeaconTestSupport
import Foundation
import Testing

/// `beacond scan` and `check-config` as a person runs them.
@Suite struct ScanCommandTests {
    @Test func raspberryPiLogReplaysToItsIBeacons() throws {
        let result = try TestSupport.run(
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

    @Test func truncatedCaptureReplaysWhatItHasAndSaysWhere() throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var generator = SystemRandomNumberGenerator()
        let capture = BtmonCrossCheckTests.generatedCapture(datalink: .monitor, using: &generator)
        let path = directory.appendingPathComponent("cut.btsnoop").path
        try Data(capture.bytes.dropLast(7)).write(to: URL(fileURLWithPath: path))
        let result = try TestSupport.run(TestSupport.product("beacond"), ["scan", "--source", "replay:\(path)@max", "--json"])
        #expect(result.status == 0)
        #expect(result.stderr.contains("stopped early: truncated at byte"))
        let lines = result.stdout.split(separator: "\n").count
        #expect(lines >= capture.iBeacons - 3 && lines <= capture.iBeacons)
    }

    @Test func unknownFileFormatIsRefusedClearly() throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("notes.txt").path
        try Data("shopping list\n".utf8).write(to: URL(fileURLWithPath: path))
        let result = try TestSupport.run(TestSupport.product("beacond"), ["scan", "--source", "replay:\(path)"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("not a recording beacond knows"))
        let missing = try TestSupport.run(TestSupport.product("beacond"), ["scan", "--source", "replay:/nonexistent.btsnoop"])
        #expect(missing.status != 0)
        #expect(missing.stderr.contains("no such file"))
    }

    /// Stopped by a signal, `beacond scan` has printed every sighting it
    /// decoded (each flushed to the pipe as it went: the first arrive while it
    /// runs) and then its summary, whose count matches the lines.
    @Test(arguments: [SIGINT, SIGTERM]) func aSignalledScanPrintsEveryLineAndItsSummary(signal: Int32) throws {
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
        for _ in 0..<3 { lines.append(try #require(out.fileHandleForReading.availableLine(deadline: deadline))) }
        kill(process.processIdentifier, signal)
        while let line = out.fileHandleForReading.availableLine(deadline: deadline) { lines.append(line) }
        var stderr: [String] = []
        while let line = err.fileHandleForReading.availableLine(deadline: deadline) { stderr.append(line) }
        process.waitUntilExit()
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

    @Test func hciSourceExplainsAMachineWithoutBluetooth() throws {
        let result = try TestSupport.run(TestSupport.product("beacond"), ["scan", "--source", "hci"])
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
    @Test func autoExplainsBothSourcesAndTheWaysWithoutARadio() throws {
        let bus = try PrivateBus()
        let result = try TestSupport.run(
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

    @Test func bluezSourceWithoutASystemBusSaysSo() throws {
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=/nonexistent/beacond-test-bus"
        let result = try TestSupport.run(TestSupport.product("beacond"), ["scan", "--source", "bluez"], environment: environment)
        #expect(result.status != 0)
        #expect(result.stderr.contains("cannot reach the system bus to talk to BlueZ"))
    }

    @Test func checkConfigAcceptsTheShippedFileAndRefusesABrokenOne() throws {
        let shipped = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("beacons.yaml").path
        let good = try TestSupport.run(TestSupport.product("beacond"), ["check-config", shipped])
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
        let bad = try TestSupport.run(TestSupport.product("beacond"), ["check-config", broken])
        #expect(bad.status == 1)
        #expect(bad.stderr.contains("\(broken):3: regions[0].uuid: expected a UUID"))
        #expect(bad.stderr.contains("\(broken):7: venues[0].beacon.major: expected an integer 0...65535, got 70000"))
        #expect(bad.stderr.contains("\(broken):8: venues[0].colour: unknown key"))
    }
}
