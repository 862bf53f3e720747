/// Reads the HCI events of an `hcidump --raw` text log, as many Raspberry Pi
/// users already have.
///
/// A packet starts on a line beginning with `>` (received) or `<` (sent),
/// optionally after a `hcidump -t` time (`2024-05-01 12:00:00.250000` or
/// `1714564800.250000`); indented lines continue it. The date form is read as
/// UTC, but hcidump prints it in the recording machine's local time: the
/// core reads no time zone, so such a log is off by that machine's offset
/// unless it was recorded with `TZ=UTC` (docs/sources.md). Received packets whose
/// first byte is the H4 event type are events. Banner lines, comments (`//`,
/// `#`) and blank lines are skipped; a packet line with something other than
/// hex bytes is counted in `malformedPackets` and skipped, because a text log
/// can be damaged in one place and fine after it.
public struct HCIDumpReader: RecordedEventReader {
    private let text: ArraySlice<UInt8>
    private var offset: Int
    public private(set) var packetsRead = 0
    public private(set) var malformedPackets = 0
    /// 1-based line number of the last line read, for messages.
    public private(set) var line = 0
    /// Text logs are read to the end: a damaged packet is skipped, never fatal.
    public var failure: RecordingError? { nil }
    public var format: RecordingReader.Format { .hcidump }
    public var skippedRecords: Int { malformedPackets }
    /// Where the last damaged packet or stray line is, so a person can look.
    public private(set) var lastSkipReason: String?

    public init(bytes: ArraySlice<UInt8>) throws(RecordingError) {
        guard Self.looksLikeHCIDump(bytes) else { throw .unrecognisedFormat }
        text = bytes
        offset = bytes.startIndex
    }

    /// True when the first line that is not a banner or comment starts a packet.
    static func looksLikeHCIDump(_ bytes: ArraySlice<UInt8>) -> Bool {
        var reader = LineReader(text: bytes.prefix(4096))
        while let line = reader.next() {
            switch classify(line) {
            case .packet: return true
            case .skipped: continue
            case .continuation, .unknown: return false
            }
        }
        return false
    }

    /// The next received HCI event, or `nil` at the end of the text.
    public mutating func next() -> RecordedEvent? {
        var lines = LineReader(text: text[offset...])
        defer { offset = lines.position }
        while let current = lines.next() {
            line += 1
            switch Self.classify(current) {
            case .packet(let direction, let timestamp, let hex):
                let first = line
                // Decoded line by line as it comes, so a packet of endless
                // continuation lines holds no more than `longestPacket` bytes.
                var bytes: [UInt8] = []
                var wellFormed = Self.appendHex(hex, to: &bytes)
                while let following = lines.peek(), case .continuation(let more) = Self.classify(following) {
                    _ = lines.next()
                    line += 1
                    if wellFormed { wellFormed = Self.appendHex(more, to: &bytes) }
                }
                if let event = finish(direction: direction, timestamp: timestamp, bytes: bytes, wellFormed: wellFormed, line: first) { return event }
            case .unknown, .continuation:
                // A stray line, or a packet whose first line was damaged: its
                // continuation lines belong to it and count once with it.
                malformedPackets += 1
                lastSkipReason = "line \(line): neither a packet (> or <, after an hcidump -t time or not) nor a comment"
                while let following = lines.peek(), case .continuation = Self.classify(following) {
                    _ = lines.next()
                    line += 1
                }
            case .skipped:
                continue
            }
        }
        return nil
    }

    /// Turns a packet's bytes into an event, or counts it as malformed.
    private mutating func finish(direction: UInt8, timestamp: Timestamp?, bytes: [UInt8], wellFormed: Bool, line: Int) -> RecordedEvent? {
        packetsRead += 1
        guard wellFormed else {
            malformedPackets += 1
            lastSkipReason = "the packet at line \(line): not hex bytes, or longer than \(Self.longestPacket) bytes"
            return nil
        }
        guard direction == UInt8(ascii: ">"), bytes.first == BtsnoopFormat.h4EventType else { return nil }
        return RecordedEvent(timestamp: timestamp, packet: bytes.dropFirst())
    }

    private enum LineKind {
        case packet(direction: UInt8, timestamp: Timestamp?, hex: ArraySlice<UInt8>)
        case continuation(ArraySlice<UInt8>)
        case skipped
        case unknown
    }

    private static func classify(_ line: ArraySlice<UInt8>) -> LineKind {
        guard let first = line.first else { return .skipped }
        if first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") {
            let trimmed = line.drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
            return trimmed.isEmpty ? .skipped : .continuation(trimmed)
        }
        if first == UInt8(ascii: ">") || first == UInt8(ascii: "<") {
            return .packet(direction: first, timestamp: nil, hex: line.dropFirst())
        }
        if line.starts(with: "//".utf8) || first == UInt8(ascii: "#")
            || line.starts(with: "HCI sniffer".utf8) || line.starts(with: "device:".utf8)
        {
            return .skipped
        }
        if let (timestamp, rest) = parseTimestampPrefix(line), let direction = rest.first,
            direction == UInt8(ascii: ">") || direction == UInt8(ascii: "<")
        {
            return .packet(direction: direction, timestamp: timestamp, hex: rest.dropFirst())
        }
        return .unknown
    }

    /// `hcidump -t` prefixes: `YYYY-MM-DD HH:MM:SS.ffffff ` (UTC) or `SECONDS.ffffff `.
    private static func parseTimestampPrefix(_ line: ArraySlice<UInt8>) -> (Timestamp, ArraySlice<UInt8>)? {
        let fields = line.split(separator: UInt8(ascii: " "), maxSplits: 2, omittingEmptySubsequences: true)
        guard let firstField = fields.first else { return nil }
        if firstField.contains(UInt8(ascii: "-")) {
            guard fields.count == 3,
                let date = parseDate(firstField), let time = parseSeconds(fields[1], allowClock: true)
            else { return nil }
            return (Timestamp(microsecondsSinceEpoch: date * 86_400_000_000 + time), fields[2])
        }
        guard fields.count >= 2, let seconds = parseSeconds(firstField, allowClock: false) else { return nil }
        return (Timestamp(microsecondsSinceEpoch: seconds), line[fields[1].startIndex...])
    }

    /// `YYYY-MM-DD` to days since the Unix epoch.
    private static func parseDate(_ field: ArraySlice<UInt8>) -> Int64? {
        let parts = field.split(separator: UInt8(ascii: "-"), omittingEmptySubsequences: false)
        // Four-digit years only: anything else is not an hcidump time, and would overflow.
        guard parts.count == 3, let y = decimal(parts[0]), let m = decimal(parts[1]), let d = decimal(parts[2]),
            (1...9999).contains(y), (1...12).contains(m), (1...31).contains(d)
        else { return nil }
        return CivilDate(year: y, month: m, day: d).daysSinceEpoch
    }

    /// `HH:MM:SS.ffffff` (clock) or `SSSS.ffffff` to microseconds.
    private static func parseSeconds(_ field: ArraySlice<UInt8>, allowClock: Bool) -> Int64? {
        let parts = field.split(separator: UInt8(ascii: "."), maxSplits: 1, omittingEmptySubsequences: false)
        var micros: Int64 = 0
        if parts.count == 2 {
            let digits = parts[1].prefix(6)
            guard !digits.isEmpty, let fraction = decimal(digits) else { return nil }
            micros = fraction * Int64(pow10(6 - digits.count))
        }
        let whole = parts[0].split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
        var seconds: Int64 = 0
        if allowClock {
            guard whole.count == 3, let h = decimal(whole[0]), let m = decimal(whole[1]), let s = decimal(whole[2]),
                h < 24, m < 60, s < 61
            else { return nil }
            seconds = h * 3600 + m * 60 + s
        } else {
            guard whole.count == 1, let s = decimal(whole[0]) else { return nil }
            seconds = s
        }
        return seconds * 1_000_000 + micros
    }

    private static func pow10(_ n: Int) -> Int { (0..<n).reduce(1) { value, _ in value * 10 } }

    private static func decimal(_ digits: ArraySlice<UInt8>) -> Int64? {
        guard !digits.isEmpty, digits.count <= 12 else { return nil }
        var value: Int64 = 0
        for byte in digits {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int64(byte - UInt8(ascii: "0"))
        }
        return value
    }

    /// The longest H4 packet a line can hold: ACL data, 1 + 4 + 65,535 bytes.
    static let longestPacket = 65_540

    /// Appends space-separated hex byte pairs; false on anything else, or on
    /// more than `longestPacket` bytes. One pass, no token copied: a hostile
    /// line of millions of pairs is refused at its limit, not held in memory.
    private static func appendHex(_ text: ArraySlice<UInt8>, to bytes: inout [UInt8]) -> Bool {
        func isSeparator(_ c: UInt8) -> Bool { c == UInt8(ascii: " ") || c == UInt8(ascii: "\t") || c == UInt8(ascii: "\r") }
        var index = text.startIndex
        while index < text.endIndex {
            if isSeparator(text[index]) {
                index += 1
                continue
            }
            let next = index + 2
            guard next <= text.endIndex, next == text.endIndex || isSeparator(text[next]),
                let high = hexValue(text[index]), let low = hexValue(text[index + 1]), bytes.count < longestPacket
            else { return false }
            bytes.append(high << 4 | low)
            index = next
        }
        return true
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// Splits text into lines (LF or CRLF), without copying.
struct LineReader {
    let text: ArraySlice<UInt8>
    private(set) var position: Int

    init(text: ArraySlice<UInt8>) {
        self.text = text
        position = text.startIndex
    }

    mutating func next() -> ArraySlice<UInt8>? {
        guard let (line, following) = lineAt(position) else { return nil }
        position = following
        return line
    }

    func peek() -> ArraySlice<UInt8>? { lineAt(position)?.line }

    private func lineAt(_ start: Int) -> (line: ArraySlice<UInt8>, following: Int)? {
        guard start < text.endIndex else { return nil }
        let end = text[start...].firstIndex(of: UInt8(ascii: "\n")) ?? text.endIndex
        var line = text[start..<end]
        if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
        return (line, min(end + 1, text.endIndex))
    }
}
