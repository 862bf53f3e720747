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
        /// are evaluated in file order, so the filters take no time to have
        /// passed there, and no venue is chosen until the time passes the latest row's.
        case timeGoesBack(line: Int, from: Int64, to: Int64)
        /// A whole-number column holds a fraction (an export that averaged):
        /// rounded to the nearest whole one, half away from zero, as a receiver reports dBm.
        case rounded(line: Int, column: Column, value: String)

        public var line: Int {
            switch self {
            case .timeGoesBack(let line, _, _), .rounded(let line, _, _): line
            }
        }

        public var description: String {
            switch self {
            case .timeGoesBack(let line, let from, let to):
                "line \(line): time_ms goes back from \(from) to \(to); rows are evaluated in file order, so the figures mean less (no venue is chosen until the time passes \(from) again; sort the file by time_ms)"
            case .rounded(let line, let column, let value):
                "line \(line): \(column.rawValue) \(value) is not a whole number; rounded, here and wherever else the file has fractions"
            }
        }
    }

    /// The columns SPEC names, in its order.
    public enum Column: String, CaseIterable, Sendable {
        case time = "time_ms", uuid, major, minor, rssi
        case measuredPower = "measured_power"
        case trueDistance = "true_distance_m"
    }

    public static let header = Column.allCases.map(\.rawValue).joined(separator: ",")
    /// A recording at known distances holds a few beacons; past the engine's
    /// tracked beacons it is not one, and scoring it would cost each row the
    /// work of every venue (one per beacon).
    public static let mostBeacons = EngineLimits().trackedBeacons
    /// SPEC's columns and as many again a person may keep beside them; a
    /// header past that is not split further.
    static let mostColumns = 64
    public var rows: [Row] = []
    /// The first of each kind, in line order.
    public var warnings: [Warning] { [firstReversal, firstRounding].compactMap { $0 }.sorted { $0.line < $1.line } }
    private var firstReversal: Warning?
    private var firstRounding: Warning?

    /// Parses the CSV text. The header names the columns, so their order may
    /// vary and other columns are ignored; what spreadsheets and pandas
    /// write is read as the plain form (a byte-order mark, CRLF, blank and
    /// empty rows, quoted fields, whole numbers written as `-61.0`).
    public init(csv text: String) throws(ParseError) {
        var lines = Lines(text)
        guard let (headerNumber, headerLine) = lines.next() else {
            throw ParseError(line: 1, message: "empty trace; expected the header \(Self.header)")
        }
        let header = try Self.fields(headerLine, line: headerNumber, atMost: Self.mostColumns)
        let columns = try Self.columns(header, line: headerNumber)
        var beacons = Set<BeaconIdentity>()
        while let (number, line) = lines.next() {
            // One more than the header, to say how many a row has when it has one too many.
            let fields = try Self.fields(line, line: number, atMost: header.count + 1)
            if fields.allSatisfy({ $0.allSatisfy(\.isWhitespace) }) { continue }  // a spreadsheet's empty row
            guard fields.count == header.count else {
                throw ParseError(line: number, message: "\(fields.count) fields where the header has \(header.count)")
            }
            var reader = RowReader(line: number, fields: fields, columns: columns)
            let row = try reader.row()
            firstRounding = firstRounding ?? reader.rounding
            if beacons.insert(row.identity).inserted, beacons.count > Self.mostBeacons {
                throw ParseError(
                    line: number,
                    message: "more than \(Self.mostBeacons) beacons (UUID, major, minor); a recording at known distances holds a few")
            }
            if let previous = rows.last?.timeMilliseconds, row.timeMilliseconds < previous {
                firstReversal = firstReversal ?? .timeGoesBack(line: number, from: previous, to: row.timeMilliseconds)
            }
            rows.append(row)
        }
        guard !rows.isEmpty else { throw ParseError(line: headerNumber, message: "no rows after the header") }
    }

    /// The lines that are not blank, numbered as an editor shows them (LF,
    /// CRLF or CR ends, a CRLF being one `Character`; a byte-order mark
    /// dropped), one at a time: a file of 256 MiB of empty lines must not
    /// become a list of a quarter of a billion of them before the first is read.
    private struct Lines: IteratorProtocol {
        private var rest: Substring?
        private var number = 0

        init(_ text: String) {
            rest = text.first == "\u{FEFF}" ? Substring(text.dropFirst()) : Substring(text)
        }

        mutating func next() -> (number: Int, text: Substring)? {
            while let text = rest {
                number += 1
                let line: Substring
                // Found among bytes, not characters: a line end is ASCII, and
                // grapheme breaking always breaks around it.
                let bytes = text.utf8
                if let end = bytes.firstIndex(where: { $0 == 0x0A || $0 == 0x0D }) {
                    line = text[..<end]
                    var next = bytes.index(after: end)
                    if bytes[end] == 0x0D, next < bytes.endIndex, bytes[next] == 0x0A { next = bytes.index(after: next) }
                    rest = text[next...]
                } else {
                    line = text
                    rest = nil
                }
                if !line.allSatisfy(\.isWhitespace) { return (number, line) }
            }
            return nil
        }
    }

    private static func fields(_ line: Substring, line number: Int, atMost most: Int) throws(ParseError) -> [String] {
        do {
            return try CSVLine.fields(line, atMost: most)
        } catch {
            throw ParseError(line: number, message: "\(error)")
        }
    }

    /// Where each column is, from the header: every one SPEC names, once.
    private static func columns(_ names: [String], line: Int) throws(ParseError) -> [Column: Int] {
        var columns: [Column: Int] = [:]
        for (index, name) in names.enumerated() {
            guard let column = Column(rawValue: String(name.trimming(while: \.isWhitespace))) else { continue }
            if let first = columns[column] {
                throw ParseError(line: line, message: "\(column.rawValue) names columns \(first + 1) and \(index + 1)")
            }
            columns[column] = index
        }
        let missing = Column.allCases.filter { columns[$0] == nil }
        guard missing.isEmpty else {
            throw ParseError(
                line: line, message: "missing column(s) \(missing.map(\.rawValue).joined(separator: ", ")); expected \(Self.header)")
        }
        return columns
    }

    /// One row's fields read as the types a row needs, each error naming the field.
    private struct RowReader {
        let line: Int
        let fields: [String]
        let columns: [Column: Int]
        /// The first fraction this row rounded.
        private(set) var rounding: Warning?

        init(line: Int, fields: [String], columns: [Column: Int]) {
            self.line = line
            self.fields = fields
            self.columns = columns
        }

        mutating func row() throws(ParseError) -> Row {
            let time: Int64 = try whole(.time)
            guard let uuid = UUID(uuidString: self[.uuid]) else { throw problem(.uuid, "is not a UUID") }
            let identity = BeaconIdentity(uuid: uuid, major: try whole(.major, exactly: true), minor: try whole(.minor, exactly: true))
            let rssi: Int8 = try whole(.rssi)
            let power: Int8 = try whole(.measuredPower)
            guard let distance = Self.decimal(self[.trueDistance]), distance >= 0 else {
                throw problem(.trueDistance, "is not a distance in metres (a number, 0 or more)")
            }
            return Row(timeMilliseconds: time, identity: identity, rssi: rssi, measuredPower: power, trueDistance: distance)
        }

        private subscript(column: Column) -> String { String(fields[columns[column]!].trimming(while: \.isWhitespace)) }

        /// A whole number of type `T`; a fraction is rounded unless `exactly` (an identity is never rounded).
        private mutating func whole<T: FixedWidthInteger>(_ column: Column, exactly: Bool = false) throws(ParseError) -> T {
            if let value = T(self[column]) { return value }  // exact, where a Double keeps only 53 bits
            guard let number = Self.decimal(self[column]) else { throw problem(column, "is not a number") }
            let nearest = number.rounded()
            guard nearest == number || !exactly else { throw problem(column, "is not a whole number") }
            guard let value = T(exactly: nearest) else {
                let range = "\(T.min)…\(T.max)"
                throw problem(column, nearest == number ? "is outside \(range)" : "rounds to \(Int64(exactly: nearest).map(String.init) ?? "\(nearest)"), outside \(range)")
            }
            if nearest != number, rounding == nil { rounding = .rounded(line: line, column: column, value: self[column]) }
            return value
        }

        /// A plain decimal number (sign, digits, point): no exponent, hex or
        /// infinity, which in a trace are a spreadsheet's damage, not data.
        private static func decimal(_ text: String) -> Double? {
            guard text.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == "-" || $0 == "+" || $0 == ".") }) else { return nil }
            return Double(text)
        }

        private func problem(_ column: Column, _ message: String) -> ParseError {
            ParseError(line: line, message: "\(column.rawValue) '\(self[column])' \(message)")
        }
    }
}
