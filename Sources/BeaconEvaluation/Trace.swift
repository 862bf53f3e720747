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

    /// Something about the file that the figures should be read with, named
    /// where it first happens. The rows are evaluated all the same.
    public enum Warning: Sendable, Equatable, CustomStringConvertible {
        /// `time_ms` goes back (a merged or re-sorted recording): the rows
        /// are evaluated in file order, so the filters take no time to have passed there.
        case timeGoesBack(line: Int, from: Int64, to: Int64)
        /// A whole-number column holds a fraction (an export that averaged,
        /// or wrote every number as floating point): rounded to the nearest
        /// whole one, as a receiver reports dBm.
        case rounded(line: Int, column: String, value: String)

        public var description: String {
            switch self {
            case .timeGoesBack(let line, let from, let to):
                "line \(line): time_ms goes back from \(from) to \(to); rows are evaluated in file order, so the figures mean less"
            case .rounded(let line, let column, let value):
                "line \(line): \(column) \(value) is not a whole number; rounded, here and wherever else the file has fractions"
            }
        }
    }

    public static let header = "time_ms,uuid,major,minor,rssi,measured_power,true_distance_m"
    public var rows: [Row]
    /// Found when the file is parsed, the first of each kind (`Sway` changes RSSI only, never times).
    public private(set) var warnings: [Warning] = []

    /// Parses the CSV text; the header names the columns, so their order may
    /// vary and other columns are ignored. What spreadsheets and pandas add
    /// is accepted: a byte-order mark, CRLF, quoted fields, blank lines,
    /// whole numbers written as `-61.0`.
    public init(csv text: String) throws(ParseError) {
        let text = text.first == "\u{FEFF}" ? Substring(text.dropFirst()) : Substring(text)
        var lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated()
            .filter { !$0.element.trimming(while: \.isWhitespace).isEmpty }.makeIterator()
        guard let (_, headerLine) = lines.next() else { throw ParseError(line: 1, message: "empty trace; expected the header \(Self.header)") }
        let names = Self.fields(headerLine)
        var column: [String: Int] = [:]
        for (index, name) in names.enumerated() where column[name] == nil { column[name] = index }
        let required = Self.header.split(separator: ",").map(String.init)
        let missing = required.filter { column[$0] == nil }
        guard missing.isEmpty else {
            throw ParseError(line: 1, message: "missing column(s) \(missing.joined(separator: ", ")); expected \(Self.header)")
        }
        rows = []
        var rounded = false
        while let (index, line) = lines.next() {
            var fields = RowFields(line: index + 1, values: Self.fields(line), column: column)
            guard fields.values.count >= names.count else {
                throw ParseError(line: index + 1, message: "\(fields.values.count) fields where the header has \(names.count): '\(line)'")
            }
            let time: Int64 = try fields.whole("time_ms")
            guard let uuid = UUID(uuidString: fields["uuid"]) else {
                throw ParseError(line: index + 1, message: "uuid '\(fields["uuid"])' is not a UUID")
            }
            let identity = BeaconIdentity(uuid: uuid, major: try fields.whole("major", exactly: true), minor: try fields.whole("minor", exactly: true))
            let rssi: Int8 = try fields.whole("rssi")
            let power: Int8 = try fields.whole("measured_power")
            guard let distance = Double(fields["true_distance_m"]), distance.isFinite, distance >= 0 else {
                throw ParseError(line: index + 1, message: "true_distance_m '\(fields["true_distance_m"])' is not a distance in metres (a number, 0 or more)")
            }
            if let rounding = fields.rounding, !rounded {
                warnings.append(rounding)
                rounded = true
            }
            if !warnings.contains(where: { if case .timeGoesBack = $0 { true } else { false } }),
                let previous = rows.last?.timeMilliseconds, time < previous
            {
                warnings.append(.timeGoesBack(line: index + 1, from: previous, to: time))
            }
            rows.append(Row(timeMilliseconds: time, identity: identity, rssi: rssi, measuredPower: power, trueDistance: distance))
        }
    }

    /// A line's fields, trimmed and unquoted (no field of a trace holds a comma).
    private static func fields(_ line: Substring) -> [String] {
        line.split(separator: ",", omittingEmptySubsequences: false).map { raw in
            let field = raw.trimming(while: \.isWhitespace)
            let unquoted = field.count >= 2 && field.first == "\"" && field.last == "\"" ? field.dropFirst().dropLast() : field
            return String(unquoted.trimming(while: \.isWhitespace))
        }
    }

    /// One row's fields by column name, read as the types a row needs.
    private struct RowFields {
        let line: Int
        let values: [String]
        let column: [String: Int]
        /// The first fraction rounded in this row.
        var rounding: Warning?

        subscript(name: String) -> String { values[column[name]!] }

        /// A whole number of type `T`; a fraction is rounded unless `exactly` (an identity is never rounded).
        mutating func whole<T: FixedWidthInteger>(_ name: String, exactly: Bool = false) throws(ParseError) -> T {
            let text = self[name]
            if let value = T(text) { return value }
            if let number = Double(text), number.isFinite {
                let nearest = number.rounded()
                if nearest == number || !exactly, let value = T(exactly: nearest) {
                    if nearest != number, rounding == nil { rounding = .rounded(line: line, column: name, value: text) }
                    return value
                }
            }
            throw ParseError(line: line, message: "\(name) '\(text)' is not a whole number from \(T.min) to \(T.max)")
        }
    }
}
