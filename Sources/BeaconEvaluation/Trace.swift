import BeaconCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A recording of received advertisements with ground truth (SPEC section 5
/// "Traces"): `time_ms,uuid,major,minor,rssi,measured_power,true_distance_m`.
public struct Trace: Sendable {
    public struct Row: Sendable, Equatable {
        public var timeMilliseconds: Int64
        public var identity: BeaconIdentity
        public var rssi: Int8
        public var measuredPower: Int8
        public var trueDistance: Double
    }

    public struct ParseError: Error, Sendable, CustomStringConvertible {
        public var line: Int
        public var message: String
        public var description: String { "line \(line): \(message)" }
    }

    /// Where `time_ms` first goes back. The rows are evaluated in file order
    /// all the same (a merged or re-sorted recording is still worth a
    /// look), but the figures mean less, and the person should know.
    public struct TimeReversal: Sendable, Equatable, CustomStringConvertible {
        public var line: Int
        public var from: Int64
        public var to: Int64
        public var description: String {
            "line \(line): time_ms goes back from \(from) to \(to); rows are evaluated in file order, so the figures mean less"
        }
    }

    public static let header = "time_ms,uuid,major,minor,rssi,measured_power,true_distance_m"
    public var rows: [Row]
    /// Found when the file is parsed (`Sway` changes RSSI only, never times).
    public private(set) var firstTimeReversal: TimeReversal?

    /// Parses the CSV text; the header names the columns, so their order may vary.
    public init(csv text: String) throws(ParseError) {
        var lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated()
            .filter { !$0.element.trimming(while: \.isWhitespace).isEmpty }.makeIterator()
        guard let (_, headerLine) = lines.next() else { throw ParseError(line: 1, message: "empty trace; expected the header \(Self.header)") }
        let names = headerLine.split(separator: ",").map { String($0.trimming(while: \.isWhitespace)) }
        var column: [String: Int] = [:]
        for (index, name) in names.enumerated() { column[name] = index }
        let required = Self.header.split(separator: ",").map(String.init)
        let missing = required.filter { column[$0] == nil }
        guard missing.isEmpty else {
            throw ParseError(line: 1, message: "missing column(s) \(missing.joined(separator: ", ")); expected \(Self.header)")
        }
        rows = []
        while let (index, line) = lines.next() {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false).map { String($0.trimming(while: \.isWhitespace)) }
            func field(_ name: String) -> String { column[name].flatMap { $0 < fields.count ? fields[$0] : nil } ?? "" }
            guard let time = Int64(field("time_ms")), let uuid = UUID(uuidString: field("uuid")),
                let major = UInt16(field("major")), let minor = UInt16(field("minor")),
                let rssi = Int8(field("rssi")), let power = Int8(field("measured_power")),
                let distance = Double(field("true_distance_m")), distance >= 0
            else {
                throw ParseError(line: index + 1, message: "expected \(Self.header), got '\(line)'")
            }
            if firstTimeReversal == nil, let previous = rows.last?.timeMilliseconds, time < previous {
                firstTimeReversal = TimeReversal(line: index + 1, from: previous, to: time)
            }
            rows.append(
                Row(
                    timeMilliseconds: time, identity: BeaconIdentity(uuid: uuid, major: major, minor: minor), rssi: rssi,
                    measuredPower: power, trueDistance: distance))
        }
    }
}
