import BeaconCore
import BeaconTestSupport
import Foundation
import Testing

/// beacond's decoder against BlueZ's own (`btmon -r`), on the same captures.
///
/// btmon 5.66 shows the iBeacon UUID byte-reversed and major/minor as
/// little-endian (SPEC section 3); the comparison undoes that display quirk
/// and nothing else. btmon prints an iBeacon's fields, not its bytes, so the
/// raw bytes of every report (iBeacon or not) are compared with Wireshark's
/// reading of the same capture (`tshark -T json -x`).
@Suite struct BtmonCrossCheckTests {
    /// One iBeacon advertisement as both decoders must agree on it.
    struct Observation: Hashable, CustomStringConvertible {
        var address: String
        var rssi: Int
        var uuid: String
        var major: Int
        var minor: Int
        var measuredPower: Int
        var description: String { "\(address) \(uuid)/\(major)/\(minor) power \(measuredPower) rssi \(rssi)" }
    }

    @Test(arguments: [BtsnoopFormat.Datalink.monitor, .h4, .hci])
    func generatedCaptureAgreesWithBtmon(datalink: BtsnoopFormat.Datalink) async throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("generated-\(datalink.rawValue).btsnoop").path
        var generator = SystemRandomNumberGenerator()
        let capture = Self.generatedCapture(datalink: datalink, using: &generator)
        try Data(capture.bytes).write(to: URL(fileURLWithPath: path))

        let btmon = try await Self.btmonObservations(path)
        let beacond = try await Self.beacondObservations(path)
        #expect(btmon.count == capture.iBeacons, "btmon saw \(btmon.count) of \(capture.iBeacons) iBeacons")
        #expect(beacond == btmon)
        try await Self.expectSameBytes(path, capture.bytes)
    }

    @Test func realRaspberryPiLogAgreesWithBtmon() async throws {
        // btmon cannot read hcidump text, so the Pi's events go into a btsnoop capture unchanged.
        let text = try [UInt8](Data(contentsOf: URL(fileURLWithPath: TestSupport.recording("rpi-hcidump-ibeacon.raw"))))
        var reader = try RecordingReader(bytes: text)
        var writer = BtsnoopWriter(datalink: .h4)
        var time = Timestamp.milliseconds(1_700_000_000_000)
        while let event = reader.next() {
            writer.append(event: Array(event.packet), at: time)
            time = time + .milliseconds(100)
        }
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("rpi.btsnoop").path
        try Data(writer.bytes).write(to: URL(fileURLWithPath: path))

        let btmon = try await Self.btmonObservations(path)
        #expect(btmon.count == 113)
        #expect(try await Self.beacondObservations(path) == btmon)
        try await Self.expectSameBytes(path, writer.bytes)
        // And the text log itself gives the same, straight through beacond.
        #expect(try await Self.beacondObservations(TestSupport.recording("rpi-hcidump-ibeacon.raw")) == btmon)
    }

    /// The peers' vectors (`PeerVector`): btmon, beacond and the peers' own
    /// tests must agree on every iBeacon in them, the Jaalee's with its
    /// battery byte too (btmon ignores that byte, as beacond does).
    @Test func peersVectorsAgreeWithBtmon() async throws {
        var writer = BtsnoopWriter(datalink: .h4)
        var time = Timestamp.milliseconds(1_700_000_000_000)
        var peers: [Observation] = []
        for vector in PeerVector.all {
            writer.append(event: vector.hciEvent, at: time)
            time = time + .milliseconds(100)
            var reports: [AdvertisingReport] = []
            try HCIEvent.forEachAdvertisingReport(in: vector.hciEvent[...]) { reports.append($0) }
            let report = try #require(reports.first)
            let fields: (uuid: String, major: Int, minor: Int, power: Int)? =
                switch vector.verdict {
                case .iBeacon(let uuid, let major, let minor, let power): (uuid, major, minor, power)
                // The peers assert what they make of major and minor, not the numbers: take btmon's word for those.
                case .jaalee, .tilt, .noIBeacon: nil
                }
            if let fields {
                peers.append(
                    Observation(
                        address: report.address.description, rssi: Int(try #require(report.rssi)), uuid: fields.uuid,
                        major: fields.major, minor: fields.minor, measuredPower: fields.power))
            }
        }
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("peers.btsnoop").path
        try Data(writer.bytes).write(to: URL(fileURLWithPath: path))

        let btmon = try await Self.btmonObservations(path)
        let iBeacons = PeerVector.all.filter { if case .noIBeacon = $0.verdict { false } else { true } }.count
        #expect(btmon.count == iBeacons, "btmon saw \(btmon.count) of the peers' \(iBeacons) iBeacons")
        #expect(try await Self.beacondObservations(path) == btmon)
        #expect(Set(peers).isSubset(of: Set(btmon)), "peers \(peers)\nbtmon \(btmon)")
        try await Self.expectSameBytes(path, writer.bytes)
    }

    // MARK: Captures

    /// Random legacy and extended report events: iBeacons among scan
    /// responses, other companies' data and events with several reports.
    static func generatedCapture(
        datalink: BtsnoopFormat.Datalink, using generator: inout some RandomNumberGenerator
    ) -> (bytes: [UInt8], iBeacons: Int) {
        var writer = BtsnoopWriter(datalink: datalink)
        var iBeacons = 0
        var time = Timestamp.milliseconds(1_700_000_000_000)
        for _ in 0..<300 {
            let extended = Bool.random(using: &generator)
            let reports = (0..<Int.random(in: 1...3, using: &generator)).map { _ in
                let report = randomReport(extended: extended, using: &generator)
                if (try? IBeaconFrame.decode(advertisingData: report.data)) != nil { iBeacons += 1 }
                return report
            }
            writer.append(event: HCIEvent.advertisingReportEvent(reports), at: time)
            time = time + .milliseconds(Int64.random(in: 1...200, using: &generator))
        }
        return (writer.bytes, iBeacons)
    }

    static func randomReport(extended: Bool, using g: inout some RandomNumberGenerator) -> AdvertisingReport {
        let address = BluetoothAddress(
            UInt8.random(in: 0...255, using: &g), UInt8.random(in: 0...255, using: &g), UInt8.random(in: 0...255, using: &g),
            UInt8.random(in: 0...255, using: &g), UInt8.random(in: 0...255, using: &g), UInt8.random(in: 0...255, using: &g))
        let payload: [UInt8]
        let scanResponse: Bool
        switch Int.random(in: 0..<4, using: &g) {
        case 0, 1:
            let frame = IBeaconFrame(
                identity: BeaconIdentity(
                    uuid: UUID(), major: UInt16.random(in: 0...UInt16.max, using: &g),
                    minor: UInt16.random(in: 0...UInt16.max, using: &g)),
                measuredPower: Int8.random(in: -100 ... -30, using: &g))
            payload = [0x02, 0x01, 0x06] + frame.advertisingData
            scanResponse = false
        case 2:
            payload = [0x05, 0x09] + Array("Ligt".utf8) + [0x02, 0x0A, 0x04]
            scanResponse = true
        default:
            payload = [0x02, 0x01, 0x06, 0x07, 0xFF, 0x59, 0x00, 0x01, 0x02, 0x03, 0x04]
            scanResponse = false
        }
        let kind: AdvertisingReport.Kind = switch (extended, scanResponse) {
        case (false, false): .legacy(.advNonconnInd)
        case (false, true): .legacy(.scanResponse)
        case (true, false): .extended([.connectable])
        case (true, true): .extended([.scannable, .scanResponse])
        }
        return AdvertisingReport(
            kind: kind, addressType: UInt8.random(in: 0...1, using: &g), address: address,
            rssi: Int8.random(in: -100 ... -20, using: &g), txPower: extended ? 4 : nil, data: payload[...])
    }

    // MARK: The two decoders

    static func beacondObservations(_ path: String) async throws -> [Observation] {
        let result = try await TestSupport.run(TestSupport.product("beacond"), ["scan", "--source", "replay:\(path)@max", "--json"])
        try #require(result.status == 0, "beacond scan failed: \(result.stderr)")
        return try result.stdout.split(separator: "\n").map { line in
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            return Observation(
                address: try #require(object["address"] as? String),
                rssi: try #require(object["rssi"] as? Int),
                uuid: try #require(object["uuid"] as? String),
                major: try #require(object["major"] as? Int),
                minor: try #require(object["minor"] as? Int),
                measuredPower: try #require(object["measured_power"] as? Int))
        }
    }

    /// Every report's address, address type, RSSI and AdvData bytes, as
    /// beacond's reader yields them and as tshark reads the same file.
    static func expectSameBytes(_ path: String, _ bytes: [UInt8]) async throws {
        let ours = try TsharkCrossCheckTests.beacondPackets(bytes)
        let tshark = try await TsharkCrossCheckTests.tsharkPackets(path)
        #expect(ours.count == tshark.count, "beacond read \(ours.count) reports, tshark \(tshark.count)")
        for (a, b) in zip(ours, tshark).filter({ $0 != $1 }).prefix(3) { Issue.record("beacond \(a)\ntshark  \(b)") }
    }

    /// Reads btmon's text: a report starts at its `Event type:` line; an
    /// iBeacon's fields follow `Type: iBeacon (2)`.
    static func btmonObservations(_ path: String) async throws -> [Observation] {
        let btmon = try #require(TestSupport.tool("btmon"), "btmon (Debian package bluez) is needed for this test")
        let result = try await TestSupport.run(btmon, ["-r", path])
        try #require(result.status == 0, "btmon failed: \(result.stderr)")
        var observations: [Observation] = []
        var address: String?
        var rssi: Int?
        var iBeacon: (uuid: String?, version: String?, power: Int?)?

        func finishReport() {
            if let address, let rssi, let beacon = iBeacon, let uuid = beacon.uuid, let version = beacon.version,
                let power = beacon.power
            {
                let (major, minor) = Self.undoByteOrderQuirk(version: version)
                observations.append(
                    Observation(
                        address: address, rssi: rssi, uuid: Self.undoByteOrderQuirk(uuid: uuid),
                        major: major, minor: minor, measuredPower: power))
            }
            address = nil
            rssi = nil
            iBeacon = nil
        }

        for rawLine in result.stdout.split(separator: "\n") {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("Event type:") || line.hasPrefix("> HCI Event") || line.hasPrefix("< HCI") {
                finishReport()
            } else if line.hasPrefix("Address:") {
                address = String(line.dropFirst("Address: ".count).prefix(17))
            } else if line.hasPrefix("RSSI:") {
                rssi = Int(line.dropFirst("RSSI: ".count).split(separator: " ")[0])
            } else if line == "Type: iBeacon (2)" {
                iBeacon = (nil, nil, nil)
            } else if iBeacon != nil, line.hasPrefix("UUID:") {
                iBeacon?.uuid = String(line.dropFirst("UUID: ".count))
            } else if iBeacon != nil, line.hasPrefix("Version:") {
                iBeacon?.version = String(line.dropFirst("Version: ".count))
            } else if iBeacon != nil, iBeacon?.power == nil, line.hasPrefix("TX power:") {
                iBeacon?.power = Int(line.dropFirst("TX power: ".count).split(separator: " ")[0])
            }
        }
        finishReport()
        return observations
    }

    /// btmon prints the UUID's 16 bytes in reverse order.
    static func undoByteOrderQuirk(uuid: String) -> String {
        let hex = Array(uuid.replacingOccurrences(of: "-", with: "").uppercased())
        let bytes = stride(from: 0, to: hex.count, by: 2).map { String(hex[$0..<($0 + 2)]) }.reversed().joined()
        let h = Array(bytes)
        return [h[0..<8], h[8..<12], h[12..<16], h[16..<20], h[20..<32]].map { String($0) }.joined(separator: "-")
    }

    /// btmon prints `Version: MAJOR.MINOR` reading each as little-endian.
    static func undoByteOrderQuirk(version: String) -> (Int, Int) {
        let parts = version.split(separator: ".").compactMap { UInt16($0) }
        return (Int(parts[0].byteSwapped), Int(parts[1].byteSwapped))
    }
}
