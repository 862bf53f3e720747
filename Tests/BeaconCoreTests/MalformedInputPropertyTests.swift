import PropertyBased
import Testing

@testable import BeaconCore

/// SPEC §3: the decoder "never reads past a length, and rejects malformed input
/// without crashing". Random and mutated input, checked against properties that
/// hold whatever the bytes are.
@Suite struct MalformedInputPropertyTests {
    static let randomBytes = Gen.uint8().array(of: 0...300)

    /// Valid events of each shape, to mutate.
    static let validEvents: [[UInt8]] = [
        Fixtures.raspberryPiIBeaconEvent,
        Fixtures.raspberryPiScanResponseEvent,
        HCIEvent.advertisingReportEvent(HCIEventTests.threeLegacyReports),
        Fixtures.hex("3E 50 0D 02") + HCIEventTests.extendedIBeaconReport + HCIEventTests.extendedEmptyReport,
    ]

    /// A mutation: (kind, position, byte). 0 replace, 1 insert, 2 remove, 3 truncate.
    static let mutations = zip(Gen.int(in: 0...3), Gen.int(in: 0...1000), Gen.uint8()).array(of: 1...4)

    static func mutate(_ bytes: [UInt8], _ mutations: [(Int, Int, UInt8)], fixLength: Bool) -> [UInt8] {
        var bytes = bytes
        for (kind, position, value) in mutations {
            switch kind {
            case 0 where !bytes.isEmpty: bytes[position % bytes.count] = value
            case 1: bytes.insert(value, at: position % (bytes.count + 1))
            case 2 where !bytes.isEmpty: bytes.remove(at: position % bytes.count)
            case 3: bytes.removeLast(bytes.count - position % (bytes.count + 1))
            default: break
            }
        }
        if fixLength, bytes.count >= 2, bytes.count - 2 <= 255 { bytes[1] = UInt8(bytes.count - 2) }
        return bytes
    }

    // MARK: Frames

    @Test func randomPayloadsNeverCrashTheFrameDecoder() async {
        await propertyCheck(count: 500, input: Self.randomBytes, Gen.int(in: 0...16)) { bytes, padding in
            let payload = Fixtures.offsetSlice(bytes, by: padding)
            do throws(FrameError) {
                if let frame = try IBeaconFrame.decode(advertisingData: payload) {
                    // A frame is only ever read from bytes that are there, in order.
                    let structure = frame.advertisingData.dropFirst()  // `FF 4C 00 02 15 …`, after the length
                    #expect(bytes.count >= 27)
                    #expect(Self.contains(bytes, structure))
                }
            } catch {
                switch error {
                case .truncatedStructure(let offset, let declared, let remaining):
                    #expect(offset >= 0 && offset < bytes.count)
                    #expect(declared > remaining)
                    #expect(remaining == bytes.count - offset - 1)
                case .manufacturerDataWithoutCompany(let offset, _), .malformedIBeacon(let offset, _, _):
                    #expect(offset >= 0 && offset < bytes.count)
                }
            }
        }
    }

    @Test func payloadsThatStartWithAnAppleHeader() async {
        // Random bytes rarely look like Apple's header; plant `LL FF 4C 00 02` so the deep
        // paths run, and predict the outcome from the length byte alone.
        await propertyCheck(count: 400, input: Gen.uint8(in: 0...30), Self.randomBytes, Gen.int(in: 0...40)) { length, tail, cut in
            let bytes = Array(([length, 0xFF, 0x4C, 0x00, 0x02] + tail).prefix(cut))
            let result = Result { () throws(FrameError) in try IBeaconFrame.decode(advertisingData: bytes) }
            let declared = Int(length)
            if bytes.isEmpty || declared == 0 {
                #expect(try result.get() == nil)
            } else if declared > bytes.count - 1 {
                #expect(throws: FrameError.truncatedStructure(offset: 0, declaredLength: declared, remaining: bytes.count - 1)) {
                    try result.get()
                }
            } else if declared <= 2 {
                #expect(throws: FrameError.manufacturerDataWithoutCompany(offset: 0, length: declared - 1)) { try result.get() }
            } else if declared == 3 {
                // Apple's company id and nothing else: not an iBeacon, and not an error at offset 0.
                if case .failure(let error) = result {
                    #expect(error != .manufacturerDataWithoutCompany(offset: 0, length: 2))
                }
            } else if declared >= 0x1A, bytes[5] == 0x15 {
                // 21 bytes after `02 15`, or more (a Jaalee battery byte): the first 21 are the iBeacon.
                let frame = try result.get()
                #expect(frame?.advertisingData.dropFirst() == bytes[1..<27])
            } else {
                let error = #expect(throws: FrameError.self) { try result.get() }
                guard case .malformedIBeacon(let offset, _, _)? = error else {
                    Issue.record("expected malformedIBeacon, got \(String(describing: error))")
                    return
                }
                #expect(offset == 0)
            }
        }
    }

    static func contains(_ haystack: [UInt8], _ needle: ArraySlice<UInt8>) -> Bool {
        guard needle.count <= haystack.count else { return false }
        return (0...(haystack.count - needle.count)).contains { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
    }

    // MARK: HCI events

    @Test func randomBytesNeverCrashTheEventReader() async {
        await propertyCheck(count: 500, input: Self.randomBytes, Gen.int(in: 0...16)) { bytes, padding in
            let packet = Fixtures.offsetSlice(bytes, by: padding)
            do throws(HCIError) {
                try HCIEvent.forEachAdvertisingReport(in: packet) { report in
                    #expect(report.data.startIndex >= packet.startIndex && report.data.endIndex <= packet.endIndex)
                }
            } catch {
                #expect(!error.description.isEmpty)
            }
        }
    }

    /// Random bytes behind a plausible header (`3E len 02|0D count`) reach the report walk.
    @Test func randomReportsBehindAValidHeader() async {
        await propertyCheck(count: 500, input: Gen.bool, Gen.uint8(in: 0...12), Self.randomBytes) { extended, count, body in
            let parameters = [extended ? 0x0D : 0x02, count] + body.prefix(253)
            let packet = [0x3E, UInt8(parameters.count)] + parameters
            var delivered = 0
            do throws(HCIError) {
                try HCIEvent.forEachAdvertisingReport(in: packet[...]) { report in
                    delivered += 1
                    #expect(report.data.startIndex >= 4 && report.data.endIndex <= packet.count)
                }
                #expect(delivered == Int(count))
            } catch {
                // Reports before the bad one may have been delivered, never more than claimed;
                // extra bytes are only found after all of them.
                #expect(delivered <= Int(count))
                if case .trailingBytes = error { #expect(delivered == Int(count)) }
            }
        }
    }

    @Test func mutatedEventsThrowOrDeliverReportsInsideThePacket() async {
        let input = zip(Gen.int(in: 0...(Self.validEvents.count - 1)), Self.mutations, Gen.bool, Gen.int(in: 0...9))
        await propertyCheck(count: 600, input: input) { which, mutations, fixLength, padding in
            let bytes = Self.mutate(Self.validEvents[which], mutations, fixLength: fixLength)
            let packet = Fixtures.offsetSlice(bytes, by: padding)
            var reports: [AdvertisingReport] = []
            do throws(HCIError) {
                try HCIEvent.forEachAdvertisingReport(in: packet) { reports.append($0) }
            } catch {
                for report in reports {
                    #expect(report.data.startIndex >= packet.startIndex && report.data.endIndex <= packet.endIndex)
                }
                return
            }
            for report in reports {
                #expect(report.data.startIndex >= packet.startIndex && report.data.endIndex <= packet.endIndex)
            }
            // Accepted: the reports account for every byte of the packet.
            guard bytes.count >= 3, bytes[0] == 0x3E, bytes[2] == 0x02 || bytes[2] == 0x0D else {
                #expect(reports.isEmpty)
                return
            }
            let perReport = bytes[2] == 0x02 ? 10 : 24
            #expect(reports.count == Int(bytes[3]))
            #expect(4 + reports.reduce(0) { $0 + perReport + $1.data.count } == bytes.count)
        }
    }

    // MARK: Recordings

    static func drain(_ bytes: ArraySlice<UInt8>) -> (events: Int, failure: RecordingError?)? {
        guard var reader = try? RecordingReader(bytes: bytes) else { return nil }
        var events = 0
        while let event = reader.next() {
            events += 1
            #expect(events <= bytes.count, "more events than bytes: the reader is not advancing")
            if events > bytes.count { break }
            _ = event.packet.count
        }
        return (events, reader.failure)
    }

    @Test func randomBytesNeverCrashTheRecordingReader() async {
        await propertyCheck(count: 300, input: Self.randomBytes) { bytes in
            _ = Self.drain(bytes[...])
        }
    }

    @Test func randomRecordsBehindABtsnoopHeader() async {
        let datalinks: [UInt32] = [1001, 1002, 2001]
        await propertyCheck(count: 300, input: Gen.int(in: 0...2), Self.randomBytes) { which, body in
            let bytes = SnoopBytes.header(datalink: datalinks[which]) + body
            let result = Self.drain(bytes[...])
            let drained = try #require(result, "a valid header must be accepted")
            // Every record has a 24-byte header.
            #expect(drained.events <= body.count / 24)
        }
    }

    @Test func randomLinesBehindAPacketStart() async {
        let textBytes = Gen.uint8(in: 0x09...0x7E).array(of: 0...300)
        await propertyCheck(count: 300, input: textBytes) { body in
            let bytes = Array("> 04 0E 04 01 0C 20 00\n\n".utf8) + body
            let result = Self.drain(bytes[...])
            let drained = try #require(result, "text starting with a packet is an hcidump log")
            #expect(drained.events >= 1)
            #expect(drained.failure == nil)
        }
    }

    @Test func corruptedCapturesStopCleanly() async {
        let input = zip(Gen.int(in: 0...2), Gen.int(in: 0...10_000), Gen.uint8(), Gen.int(in: 0...10_000))
        await propertyCheck(count: 300, input: input) { which, position, value, cut in
            let datalink = [BtsnoopFormat.Datalink.monitor, .h4, .hci][which]
            var bytes = BtsnoopReaderTests.capture(datalink)
            bytes[16 + position % (bytes.count - 16)] = value  // somewhere after the file header
            let result = Self.drain(bytes[..<(16 + cut % (bytes.count - 15))])
            let drained = try #require(result)
            // However the lengths were damaged, every record still costs a 24-byte header.
            #expect(drained.events <= (bytes.count - 16) / 24)
        }
    }

    @Test func randomBlocksBehindAPcapngHeader() async {
        let linkTypes = LinkType.allCases
        await propertyCheck(count: 300, input: Gen.int(in: 0...(linkTypes.count - 1)), Gen.bool, Self.randomBytes, Gen.int(in: 0...16)) {
            which, bigEndian, body, padding in
            var writer = PcapngWriter(bigEndian: bigEndian)
            writer.addInterface(linkType: linkTypes[which].rawValue)
            let bytes = writer.bytes + body
            let result = Self.drain(Fixtures.offsetSlice(bytes, by: padding))
            let drained = try #require(result, "a valid header and interface must be accepted")
            // Every packet costs a block of at least 16 bytes (a simple packet block).
            #expect(drained.events <= body.count / 16)
        }
    }

    @Test func randomBytesAfterThePcapngBlockType() async {
        await propertyCheck(count: 300, input: Self.randomBytes) { body in
            _ = Self.drain(([0x0A, 0x0D, 0x0D, 0x0A] + body)[...])
        }
    }

    @Test func corruptedPcapngCapturesStopCleanly() async {
        let linkTypes = LinkType.allCases
        let input = zip(Gen.int(in: 0...(linkTypes.count - 1)), Gen.bool, Gen.int(in: 0...10_000), Gen.uint8(), Gen.int(in: 0...10_000))
        await propertyCheck(count: 300, input: input) { which, bigEndian, position, value, cut in
            var bytes = PcapngReaderTests.capture(linkTypes[which], bigEndian: bigEndian)
            bytes[28 + position % (bytes.count - 28)] = value  // somewhere after the section header
            // A damaged interface description may name a link type beacond refuses: then nothing is read.
            guard let drained = Self.drain(bytes[..<(28 + cut % (bytes.count - 27))]) else { return }
            #expect(drained.events <= PcapngReaderTests.reports.count)
        }
    }

    // MARK: The decoder's books

    @Test func decoderCountersAlwaysAddUp() async {
        let oneEvent = zip(Gen.int(in: 0...(Self.validEvents.count - 1)), Self.mutations, Gen.bool, Gen.bool)
        await propertyCheck(count: 200, input: oneEvent.array(of: 1...12)) { events in
            var decoder = AdvertisementDecoder()
            var sightings = 0
            for (which, mutations, mutate, fixLength) in events {
                let base = Self.validEvents[which]
                let packet = mutate ? Self.mutate(base, mutations, fixLength: fixLength) : base
                decoder.decode(event: packet[...], at: Timestamp(microsecondsSinceEpoch: 0)) { _ in sightings += 1 }
            }
            #expect(decoder.events == events.count)
            #expect(sightings == decoder.iBeacons)
            #expect(decoder.iBeacons + decoder.malformedFrames <= decoder.advertisements)
            #expect(decoder.malformed == decoder.malformedEvents + decoder.malformedFrames)
            #expect(decoder.malformedEvents <= decoder.events)
            #expect((decoder.malformed + decoder.incompleteAdvertisements == 0) == (decoder.lastProblem == nil))
            #expect(decoder.chains.pending <= ReportChains.mostChains)
            // Unmutated events are all well-formed: 1 + 1 + 3 + 2 reports, iBeacons in three of them;
            // the last event's second report is a piece ("incomplete, more to come"), not yet an advertisement.
            if events.allSatisfy({ !$0.2 }) {
                #expect(decoder.malformed == 0)
                #expect(decoder.incompleteAdvertisements == 0)
                let reports = [1, 1, 3, 1]
                let beacons = [1, 0, 1, 1]
                #expect(decoder.advertisements == events.reduce(0) { $0 + reports[$1.0] })
                #expect(decoder.iBeacons == events.reduce(0) { $0 + beacons[$1.0] })
            }
        }
    }
}
