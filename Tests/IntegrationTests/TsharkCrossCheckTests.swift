import BeaconCore
import BeaconTestSupport
import Foundation
import Testing

/// beacond's pcapng and pcap readers against Wireshark's dissectors (`tshark
/// -T json`), on captures the tests write with every link type beacond reads,
/// in both byte orders, and on Wireshark's own pcap copies of them (`editcap`):
/// the same packets, addresses, address types, RSSI and AdvData bytes; and
/// `beacond scan --source replay:FILE` prints the iBeacons tshark's bytes hold.
///
/// RSSI 127 and 0 are no reading for beacond (the decoder's rule); tshark
/// prints them as numbers, so the comparison reads them as none on both sides.
@Suite struct TsharkCrossCheckTests {
    /// One advertisement as both readers must agree on it.
    struct Packet: Hashable, CustomStringConvertible {
        var address: String
        var random: Bool
        var rssi: Int?
        var data: String
        var description: String { "\(address)\(random ? " (random)" : "") rssi \(rssi.map(String.init) ?? "none") data \(data)" }
    }

    /// An iBeacon as `beacond scan --json` prints it.
    struct Observation: Hashable, CustomStringConvertible {
        var address: String
        var rssi: Int?
        var uuid: String
        var major: Int
        var minor: Int
        var measuredPower: Int
        var plausiblePower: Bool
        var description: String {
            "\(address) \(uuid)/\(major)/\(minor) power \(measuredPower)\(plausiblePower ? "" : " (implausible)") rssi \(rssi.map(String.init) ?? "none")"
        }
    }

    @Test(arguments: LinkType.allCases, [false, true])
    func generatedCaptureAgreesWithTshark(linkType: LinkType, bigEndian: Bool) async throws {
        var generator = SystemRandomNumberGenerator()
        let (bytes, sent) = Self.generatedCapture(linkType, bigEndian: bigEndian, using: &generator)
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("generated-\(linkType.rawValue).pcapng").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))

        let tshark = try await Self.tsharkPackets(path)
        #expect(tshark.count == sent, "tshark saw \(tshark.count) of \(sent) packets")
        let ours = try Self.beacondPackets(bytes)
        #expect(ours.count == tshark.count)
        for (a, b) in zip(ours, tshark).filter({ $0 != $1 }).prefix(3) { Issue.record("beacond \(a)\ntshark  \(b)") }
        let expected = tshark.compactMap(Self.iBeacon)
        #expect(!expected.isEmpty)
        let observed = try await Self.scanObservations(path, format: "pcapng", linkType: linkType)
        #expect(observed == expected)
    }

    /// The same capture saved by Wireshark's `editcap` as classic pcap, with
    /// micro- and nanosecond timestamps: beacond reads from it the events,
    /// times included, that it reads from the pcapng, and tshark agrees.
    @Test(arguments: LinkType.allCases, ["pcap", "nsecpcap"])
    func editcapsPcapCopyReadsAsTheOriginal(linkType: LinkType, editcapFormat: String) async throws {
        var generator = SystemRandomNumberGenerator()
        let (bytes, _) = Self.generatedCapture(linkType, bigEndian: false, using: &generator)
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let original = directory.appendingPathComponent("generated.pcapng").path
        let copy = directory.appendingPathComponent("generated.pcap").path
        try Data(bytes).write(to: URL(fileURLWithPath: original))
        let editcap = try #require(TestSupport.tool("editcap"), "editcap (Debian package wireshark-common) is needed for this test")
        let converted = try await TestSupport.run(editcap, ["-F", editcapFormat, original, copy])
        try #require(converted.status == 0, "editcap failed: \(converted.stderr)")
        let pcap = try Array(Data(contentsOf: URL(fileURLWithPath: copy)))

        #expect(try RecordingReader(bytes: pcap).format == .pcap(linkType: linkType.rawValue))
        let events = try Self.recordedEvents(pcap)
        #expect(events.count > 0)
        #expect(events == (try Self.recordedEvents(bytes)))
        let ours = try Self.beacondPackets(pcap)
        let tshark = try await Self.tsharkPackets(copy)
        #expect(ours == tshark)
        let observed = try await Self.scanObservations(copy, format: "pcap", linkType: linkType)
        #expect(observed == ours.compactMap(Self.iBeacon))
    }

    // MARK: Captures

    /// Random legacy advertisements, timed from an `if_tsoffset`: iBeacons (some with a Jaalee battery
    /// byte, some with a measured power of 0 or +5), scan responses and other
    /// companies' data; one in eight with no RSSI reading (none, 127 or 0, as
    /// the link type can say it).
    static func generatedCapture(
        _ linkType: LinkType, bigEndian: Bool, using g: inout some RandomNumberGenerator
    ) -> (bytes: [UInt8], packets: Int) {
        var writer = PcapngWriter(bigEndian: bigEndian)
        // Times count from an `if_tsoffset`, as Wireshark reads it: editcap's pcap copy must agree.
        let interface = writer.addInterface(
            linkType: linkType.rawValue, tsresol: [6, 9, 3][Int.random(in: 0..<3, using: &g)], tsoffset: 1_699_999_000)
        var time = Timestamp.milliseconds(1_700_000_000_000)
        let count = 150
        for _ in 0..<count {
            var report = BtmonCrossCheckTests.randomReport(extended: false, using: &g)
            if (try? IBeaconFrame.decode(advertisingData: report.data)) != nil {
                var data = Array(report.data)
                if Int.random(in: 0..<5, using: &g) == 0 { data[29] = [0x00, 0x05][Int.random(in: 0...1, using: &g)] }
                if Int.random(in: 0..<4, using: &g) == 0 {
                    data[3] = 0x1B
                    data.append(UInt8.random(in: 0...100, using: &g))
                }
                report.data = data[...]
            }
            switch Int.random(in: 0..<16, using: &g) {
            case 0: report.rssi = nil
            case 1: report.rssi = 0
            default: break
            }
            writer.append(report: report, interface: interface, at: time)
            time = time + .milliseconds(Int64.random(in: 1...200, using: &g))
        }
        return (writer.bytes, count)
    }

    // MARK: The two readers

    /// What beacond's reader yields, in process: every report of every event.
    static func beacondPackets(_ bytes: [UInt8]) throws -> [Packet] {
        var reader = try RecordingReader(bytes: bytes)
        var packets: [Packet] = []
        while let event = reader.next() {
            try HCIEvent.forEachAdvertisingReport(in: event.packet) { report in
                packets.append(
                    Packet(
                        address: report.address.description.lowercased(), random: report.addressType == 1,
                        rssi: reading(report.rssi.map(Int.init)), data: report.data.map { hex($0) }.joined()))
            }
        }
        #expect(reader.failure == nil)
        #expect(reader.skippedRecords == 0)
        return packets
    }

    /// Every event a capture holds, with its time (microseconds), as beacond reads it.
    static func recordedEvents(_ bytes: [UInt8]) throws -> [[Int64]] {
        var reader = try RecordingReader(bytes: bytes)
        var events: [[Int64]] = []
        while let event = reader.next() { events.append([event.timestamp?.microsecondsSinceEpoch ?? -1] + event.packet.map(Int64.init)) }
        #expect(reader.failure == nil)
        return events
    }

    /// Reads tshark's JSON (`-T json -x`, which adds each field's bytes as
    /// `NAME_raw`; `--no-duplicate-keys` makes the fields of an event's several
    /// reports one array each), one packet per report.
    static func tsharkPackets(_ path: String) async throws -> [Packet] {
        let tshark = try #require(TestSupport.tool("tshark"), "tshark (Debian package tshark) is needed for this test")
        let result = try await TestSupport.run(tshark, ["-r", path, "-T", "json", "-x", "--no-duplicate-keys"])
        try #require(result.status == 0, "tshark failed: \(result.stderr)")
        // Wireshark checks the CRC of link-layer packets without a sniffer's verdict (251): ours must pass.
        #expect(!result.stdout.contains("btle.crc.incorrect"))
        let frames = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [Any])
        return frames.flatMap { frame -> [Packet] in
            /// A field's values, one per report: a string, or an array of them.
            func values(_ names: String...) -> [String] {
                guard let value = names.lazy.compactMap({ first($0, in: frame) }).first else { return [] }
                return value as? [String] ?? [value as? String].compactMap { $0 }
            }
            // A `_raw` field is [hex, offset, length, …], or an array of those.
            let raw = first("btcommon.eir_ad.advertising_data_raw", in: frame) as? [Any] ?? []
            let data = raw.first is String ? [raw[0] as? String].compactMap { $0 } : raw.compactMap { ($0 as? [Any])?.first as? String }
            let addresses = values("btle.advertising_address", "bthci_evt.bd_addr")
            let addressTypes = values("btle.advertising_header.randomized_tx", "bthci_evt.le_peer_address_type")
            let rssis = values("btle_rf.signal_dbm", "nordic_ble.rssi", "bthci_evt.rssi")
            guard !data.isEmpty else { return [] }
            guard addresses.count == data.count, addressTypes.count == data.count, rssis.isEmpty || rssis.count == data.count else {
                Issue.record("tshark: \(data.count) AdvData, \(addresses.count) addresses, \(addressTypes.count) address types, \(rssis.count) RSSI")
                return []
            }
            return data.indices.map { index in
                Packet(
                    address: addresses[index], random: addressTypes[index] == "1" || addressTypes[index] == "0x01",
                    rssi: reading(rssis.isEmpty ? nil : Int(rssis[index])), data: data[index])
            }
        }
    }

    /// The first value under `key` anywhere in tshark's nested layers.
    static func first(_ key: String, in value: Any) -> Any? {
        if let object = value as? [String: Any] {
            if let found = object[key] { return found }
            return object.values.lazy.compactMap { first(key, in: $0) }.first
        }
        if let array = value as? [Any] { return array.lazy.compactMap { first(key, in: $0) }.first }
        return nil
    }

    /// `beacond scan --json` on the file, through `--source replay:` (the format found from the content).
    static func scanObservations(_ path: String, format: String, linkType: LinkType) async throws -> [Observation] {
        let result = try await TestSupport.run(TestSupport.product("beacond"), ["scan", "--source", "replay:\(path)@max", "--json"])
        try #require(result.status == 0, "beacond scan failed: \(result.stderr)")
        #expect(result.stderr.contains("recording: \(format), link type \(LinkType.describe(linkType.rawValue))"))
        return try result.stdout.split(separator: "\n").map { line in
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            return Observation(
                address: try #require(object["address"] as? String).lowercased(),
                rssi: object["rssi"] as? Int,
                uuid: try #require(object["uuid"] as? String),
                major: try #require(object["major"] as? Int),
                minor: try #require(object["minor"] as? Int),
                measuredPower: try #require(object["measured_power"] as? Int),
                plausiblePower: try #require(object["measured_power_plausible"] as? Bool))
        }
    }

    /// The iBeacon in a packet's AdvData, read here from the bytes tshark
    /// printed (AD structures, `FF 4C 00 02 15`, big-endian fields), not by beacond's decoder.
    static func iBeacon(_ packet: Packet) -> Observation? {
        let hexDigits = Array(packet.data)
        let bytes = stride(from: 0, to: hexDigits.count - 1, by: 2).compactMap { UInt8(String(hexDigits[$0...($0 + 1)]), radix: 16) }
        var index = 0
        while index < bytes.count, bytes[index] > 0, index + Int(bytes[index]) < bytes.count {
            let length = Int(bytes[index])
            let s = Array(bytes[(index + 1)...(index + length)])
            if s.count >= 26, s[0] == 0xFF, s[1] == 0x4C, s[2] == 0x00, s[3] == 0x02, s[4] == 0x15 {
                let u = s[5..<21].map { hex($0) }.joined()
                let uuid = [u.prefix(8), u.dropFirst(8).prefix(4), u.dropFirst(12).prefix(4), u.dropFirst(16).prefix(4), u.dropFirst(20)]
                    .joined(separator: "-").uppercased()
                let power = Int(Int8(bitPattern: s[25]))
                return Observation(
                    address: packet.address, rssi: packet.rssi, uuid: uuid, major: Int(s[21]) << 8 | Int(s[22]),
                    minor: Int(s[23]) << 8 | Int(s[24]), measuredPower: power, plausiblePower: (-100 ... -20).contains(power))
            }
            index += length + 1
        }
        return nil
    }

    /// beacond's rule (`BeaconSighting.reading`) on what tshark printed.
    static func reading(_ rssi: Int?) -> Int? {
        rssi.flatMap { Int8(exactly: $0) }.flatMap(BeaconSighting.reading).map(Int.init)
    }

    static func hex(_ byte: UInt8) -> String {
        String(byte, radix: 16).count == 1 ? "0" + String(byte, radix: 16) : String(byte, radix: 16)
    }
}
