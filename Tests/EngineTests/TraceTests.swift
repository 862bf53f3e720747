import BeaconCore
import BeaconEvaluation
import BeaconSimulation
import Foundation
import Testing

/// Reading a trace as people bring them: from spreadsheets, pandas and
/// other tools' exports, and with mistakes named where they are.
@Suite struct TraceTests {
    static let uuid = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
    /// Three rows in the plain form of SPEC's header.
    static let plain = """
        \(Trace.header)
        0,\(uuid),1,1,-60,-59,1.0
        100,\(uuid),1,2,-71,-65,2.5
        250,\(uuid),1,1,127,-59,1
        """

    @Test func whatSpreadsheetsAndPandasWriteReadsAsThePlainFile() throws {
        let expected = try Trace(csv: Self.plain).rows
        #expect(expected.count == 3 && expected[1].rssi == -71 && expected[1].identity.minor == 2)
        // A byte-order mark and CRLF (a spreadsheet saved as CSV), quoted
        // fields (one holding a comma and a doubled quote, as pandas writes a
        // note), blank and empty rows, columns in another order with one
        // more, and whole numbers written as floating point (pandas, when a
        // column has a gap).
        let exported = "\u{FEFF}"
            + [
                "\"uuid\",rssi,time_ms,note,major,minor,measured_power,true_distance_m",
                "\"\(Self.uuid)\",-60.0,0.0,\"by the door, \"\"left\"\"\",1,1,-59,1.0",
                "",
                ",,,,,,,",
                "\(Self.uuid),-71,100,,1.0,2,-65.0,2.5",
                " \(Self.uuid) , 127 ,250, \"c\" ,1,1,-59,1",
            ].joined(separator: "\r\n")
        let trace = try Trace(csv: exported)
        #expect(trace.rows == expected)
        #expect(trace.warnings.isEmpty)
    }

    /// Receivers report whole dBm; an export that averaged may not. Such a
    /// file is read rounded, and the first fraction is named beside the first
    /// place time goes back, in line order.
    @Test func fractionsAreRoundedAndTheFirstIsNamed() throws {
        let text = """
            \(Trace.header)
            0,\(Self.uuid),1,1,-60,-59,1
            200,\(Self.uuid),1,1,-60,-59,1
            300,\(Self.uuid),1,1,-61.6,-59,1
            100,\(Self.uuid),1,1,-62.2,-58.5,1
            """
        let trace = try Trace(csv: text)
        #expect(trace.rows.map(\.rssi) == [-60, -60, -62, -62])
        #expect(trace.rows[3].measuredPower == -59, "half away from zero")
        #expect(trace.warnings == [.rounded(line: 4, column: .rssi, value: "-61.6"), .timeGoesBack(line: 5, from: 300, to: 100)])
        #expect("\(trace.warnings[0])".hasPrefix("line 4: rssi -61.6 is not a whole number; rounded"))
    }

    /// Every error says the line and the field, so a person can mend the file.
    @Test(arguments: [
        ("1.5,1,-60,-59,1", "line 2: major '1.5' is not a whole number"),
        ("0x1,1,-60,-59,1", "line 2: major '0x1' is not a number"),
        ("1,1,-300,-59,1", "line 2: rssi '-300' is outside -128…127"),
        ("1,1,127.5,-59,1", "line 2: rssi '127.5' rounds to 128, outside -128…127"),
        ("1,1,-6e1,-59,1", "line 2: rssi '-6e1' is not a number"),
        ("1,1,-60,-59,-2", "line 2: true_distance_m '-2' is not a distance in metres"),
        ("1,1,-60,-59,nan", "line 2: true_distance_m 'nan' is not a distance in metres"),
        ("1,1,-60", "line 2: 5 fields where the header has 7"),
        ("1,1,-60,-59,1,extra", "line 2: 8 fields where the header has 7"),
        // Not split past that: a line of 200 MB of commas took 3 GB as empty strings (an audit of 2026-11-28).
        ("1,1,-60,-59,1" + String(repeating: ",", count: 100_000), "line 2: more than 8 fields"),
        ("1,1,-60,-59,\"1", "line 2: field 7 opens a quote that the line does not close"),
        ("1,1,\"-60\"x,-59,1", "line 2: field 5 has text after its closing quote"),
    ])
    func errorsNameTheLineAndTheField(row: String, message: String) {
        #expect {
            try Trace(csv: "\(Trace.header)\n0,\(Self.uuid),\(row)\n")
        } throws: { error in
            "\(error)".hasPrefix(message)
        }
    }

    /// Whatever a file holds, the reader answers rows or an error on one of
    /// its lines, and never traps: the plain file, edited at random (characters
    /// put in, changed or taken out) from the characters that matter in a trace.
    @Test func anEditedFileIsReadOrRefusedOnOneOfItsLines() {
        var random = SeededRandom(seed: 11)
        let alphabet = Array("0123456789,,,\"\"\n\r-.+ eE\u{FEFF}x")
        var read = 0
        for _ in 0..<3_000 {
            var text = Array(Self.plain)
            for _ in 0..<(1 + Int(random.uniform() * 4)) {
                let position = Int(random.uniform() * Double(text.count + 1))
                let character = alphabet[Int(random.uniform() * Double(alphabet.count))]
                switch Int(random.uniform() * 3) {
                case 0: text.insert(character, at: position)
                case 1 where position < text.count: text[position] = character
                default: if position < text.count { text.remove(at: position) }
                }
            }
            let edited = String(text)
            let lines = edited.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }.count
            do {
                let trace = try Trace(csv: edited)
                #expect(!trace.rows.isEmpty && trace.rows.count < lines, "\(edited.debugDescription)")
                read += 1
            } catch {
                #expect((1...lines).contains(error.line), "\(error) for \(edited.debugDescription)")
            }
        }
        #expect(read > 100, "enough edits leave a readable file for the check to mean something: \(read)")
    }

    /// A recording of more beacons than the engine tracks is not one at
    /// known distances: refused on the row of the first beacon too many.
    @Test func moreBeaconsThanTheEngineTracksAreRefused() throws {
        let rows = (0..<Trace.mostBeacons).map { "\($0),\(Self.uuid),\($0 / 65_536),\($0 % 65_536),-60,-59,1" }
        #expect(try Trace(csv: ([Trace.header] + rows).joined(separator: "\n")).rows.count == Trace.mostBeacons)
        let more = [Trace.header] + rows + ["\(Trace.mostBeacons),\(Self.uuid),7,7,-60,-59,1"]
        #expect {
            try Trace(csv: more.joined(separator: "\n"))
        } throws: { error in
            "\(error)" == "line \(Trace.mostBeacons + 2): more than \(Trace.mostBeacons) beacons (UUID, major, minor); a recording at known distances holds a few"
        }
    }

    /// Errors in the header are named on the header's own line.
    @Test(arguments: [
        ("\n\ntime;uuid;major;minor;rssi;measured_power;true_distance_m\n",
         "line 3: missing column(s) time_ms, uuid, major, minor, rssi, measured_power, true_distance_m"),
        ("time_ms,uuid,major,minor,rssi,rssi,measured_power,true_distance_m\n0,\(uuid),1,1,-60,-99,-59,1\n",
         "line 1: rssi names columns 5 and 6"),
        ("\n\(Trace.header)\n\n", "line 2: no rows after the header"),
        ("\(Trace.header)" + String(repeating: ",", count: 100_000) + "\n", "line 1: more than 64 fields"),
        ("\u{FEFF}\r\n \n", "line 1: empty trace"),
        ("\(Trace.header)\n0,E2C56DB5,1,1,-60,-59,1\n", "line 2: uuid 'E2C56DB5' is not a UUID"),
    ])
    func fileErrorsNameTheirLine(text: String, message: String) {
        #expect {
            try Trace(csv: text)
        } throws: { error in
            "\(error)".hasPrefix(message)
        }
    }
}
