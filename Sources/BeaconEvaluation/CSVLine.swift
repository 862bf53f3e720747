/// The fields of one line of CSV (RFC 4180): separated by commas, and a field
/// in double quotes may hold commas and doubled quotes (`""`), as spreadsheets
/// and pandas write a note or a name. Fields are returned as written, spaces
/// and all; a quoted one without its quotes.
///
/// Written by hand because the CSV packages (SwiftCSV, yaslab's CSV.swift)
/// import the whole of Foundation, and beacond links only FoundationEssentials:
/// Foundation and its ICU data would add tens of megabytes to the Pi's package
/// for one line of splitting.
enum CSVLine {
    enum Malformed: Error, Sendable, Equatable, CustomStringConvertible {
        /// A field opens a quote and the line ends inside it (a trace keeps one row to a line).
        case unclosedQuote(field: Int)
        /// Something other than spaces follows a field's closing quote.
        case textAfterQuote(field: Int)
        /// More fields than the reader takes: not split further (a line of a
        /// hundred million commas would be as many strings).
        case tooMany(atMost: Int)

        var description: String {
            switch self {
            case .unclosedQuote(let field): "field \(field) opens a quote that the line does not close"
            case .textAfterQuote(let field): "field \(field) has text after its closing quote"
            case .tooMany(let most): "more than \(most) fields"
            }
        }
    }

    static func fields(_ line: Substring, atMost most: Int) throws(Malformed) -> [String] {
        var fields: [String] = []
        var field = ""
        var inQuotes = false
        var wasQuoted = false
        var index = line.startIndex
        while index < line.endIndex {
            let character = line[index]
            index = line.index(after: index)
            if inQuotes {
                if character != "\"" {
                    field.append(character)
                } else if index < line.endIndex, line[index] == "\"" {
                    field.append("\"")
                    index = line.index(after: index)
                } else {
                    inQuotes = false
                }
            } else if character == "," {
                guard fields.count + 1 < most else { throw .tooMany(atMost: most) }
                fields.append(field)
                field = ""
                wasQuoted = false
            } else if wasQuoted {
                guard character.isWhitespace else { throw .textAfterQuote(field: fields.count + 1) }
            } else if character == "\"", field.allSatisfy(\.isWhitespace) {
                field = ""
                inQuotes = true
                wasQuoted = true
            } else {
                field.append(character)
            }
        }
        guard !inQuotes else { throw .unclosedQuote(field: fields.count + 1) }
        fields.append(field)
        return fields
    }
}
