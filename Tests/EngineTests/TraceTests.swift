import BeaconCore
import BeaconEvaluation
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
        // fields, a blank line, columns in another order with one more,
        // and whole numbers written as floating point (pandas, when a column has a gap).
        let exported = "\u{FEFF}"
            + [
                "\"uuid\",rssi,time_ms,note,major,minor,measured_power,true_distance_m",
                "\"\(Self.uuid)\",-60.0,0.0,a,1,1,-59,1.0",
                "",
                "\(Self.uuid),-71,100,,1.0,2,-65.0,2.5",
                " \(Self.uuid) , 127 ,250,c,1,1,-59,1",
            ].joined(separator: "\r\n")
        let trace = try Trace(csv: exported)
        #expect(trace.rows == expected)
        #expect(trace.warnings.isEmpty)
    }

    /// Receivers report whole dBm; an export that averaged may not. Such a
    /// file is read rounded, and the first fraction is named.
    @Test func fractionsAreRoundedAndTheFirstIsNamed() throws {
        let text = """
            \(Trace.header)
            0,\(Self.uuid),1,1,-60,-59,1
            100,\(Self.uuid),1,1,-61.6,-59,1
            200,\(Self.uuid),1,1,-62.2,-58.5,1
            """
        let trace = try Trace(csv: text)
        #expect(trace.rows.map(\.rssi) == [-60, -62, -62])
        #expect(trace.rows[2].measuredPower == -59, "half away from zero")
        #expect(trace.warnings == [.rounded(line: 3, column: "rssi", value: "-61.6")])
        #expect("\(trace.warnings[0])".hasPrefix("line 3: rssi -61.6 is not a whole number; rounded"))
    }

    /// Every error says the line and the field, so a person can mend the file.
    @Test(arguments: [
        ("1.5,1,-60,-59,1", "line 2: major '1.5' is not a whole number from 0 to 65535"),
        ("1,1,-300,-59,1", "line 2: rssi '-300' is not a whole number from -128 to 127"),
        ("1,1,-60,-59,-2", "line 2: true_distance_m '-2' is not a distance in metres"),
        ("1,1,-60,-59,nan", "line 2: true_distance_m 'nan' is not a distance in metres"),
        ("1,1,-60", "line 2: 5 fields where the header has 7"),
    ])
    func errorsNameTheLineAndTheField(row: String, message: String) {
        #expect {
            try Trace(csv: "\(Trace.header)\n0,\(Self.uuid),\(row)\n")
        } throws: { error in
            "\(error)".hasPrefix(message)
        }
    }

    @Test func aWrongHeaderOrUUIDIsNamed() {
        #expect {
            try Trace(csv: "time;uuid;major;minor;rssi;measured_power;true_distance_m\n")
        } throws: { error in
            "\(error)".hasPrefix("line 1: missing column(s) time_ms, uuid, major, minor, rssi, measured_power, true_distance_m")
        }
        #expect {
            try Trace(csv: "\(Trace.header)\n0,E2C56DB5,1,1,-60,-59,1\n")
        } throws: { error in
            "\(error)" == "line 2: uuid 'E2C56DB5' is not a UUID"
        }
        #expect {
            try Trace(csv: "\n\n")
        } throws: { error in
            "\(error)".hasPrefix("line 1: empty trace")
        }
    }
}
