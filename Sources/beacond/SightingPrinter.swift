import BeaconCore
import Glibc

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Prints sightings, a line each, as text or JSON.
///
/// Written byte by byte into one buffer and handed to `write(2)` 64 KB at a
/// time: at @max a replay prints hundreds of thousands of lines a second, and
/// a `String` per field or a write per line would cost more than decoding.
/// Line by line instead when someone reads live: to a terminal, and to a pipe
/// from a live source (a person, `grep`, the real-stack harness sees each
/// sighting as it is heard). Whatever is buffered is written before a note,
/// at the end and when the scan is stopped.
final class SightingPrinter {
    private let json: Bool
    private let flushesEachLine: Bool
    // Used from one task only: the dynamic exclusivity checks on a class's
    // properties were 3 % of a scan.
    @exclusivity(unchecked) private var buffer: [UInt8] = []
    private let output = OutputFile.standardOutput
    @exclusivity(unchecked) private var uuidText = RepeatedText<UUID>()
    @exclusivity(unchecked) private var secondText = RepeatedText<Int64>()
    /// One write per this many bytes.
    static let bufferSize = 1 << 16

    /// - Parameter live: the lines come as they are heard (not a replay at @max).
    init(json: Bool, live: Bool) {
        self.json = json
        flushesEachLine = output.isTerminal || (live && output.isPipe)
        buffer.reserveCapacity(Self.bufferSize)
    }

    deinit { flush() }

    func print(_ sighting: BeaconSighting) {
        buffer.appendText(capacity: Self.lineCapacity) { line in
            if json { writeJSON(sighting, to: &line) } else { writeText(sighting, to: &line) }
        }
        if flushesEachLine || buffer.count > Self.bufferSize - Self.lineCapacity { flush() }
    }

    /// Room for the longest line (the JSON of a far-future time and an unnamed address type is under 300 bytes).
    static let lineCapacity = 320

    /// `TIME ADDRESS UUID major M minor N power P dBm rssi R dBm`, or `rssi n/a`;
    /// `(not a 1 m calibration)` after an implausible measured power.
    private func writeText(_ sighting: BeaconSighting, to line: inout TextWriter) {
        writeTime(sighting.time, to: &line)
        line.write(" ")
        sighting.address.write(to: &line)
        line.write(" ")
        writeUUID(sighting.identity.uuid, to: &line)
        line.write(" major ")
        line.writeDecimal(sighting.identity.major)
        line.write(" minor ")
        line.writeDecimal(sighting.identity.minor)
        line.write(" power ")
        line.writeDecimal(sighting.frame.measuredPower)
        line.write(sighting.frame.hasPlausibleMeasuredPower ? " dBm rssi " : " dBm (not a 1 m calibration) rssi ")
        if let rssi = sighting.rssi {
            line.writeDecimal(rssi)
            line.write(" dBm\n")
        } else {
            line.write("n/a\n")
        }
    }

    /// One object, keys sorted, `rssi` left out without a reading: what
    /// `JSONEncoder` with `.sortedKeys` made of it before (the tests compare).
    /// Every string is an address, a name, a time or a UUID: nothing to escape.
    private func writeJSON(_ sighting: BeaconSighting, to line: inout TextWriter) {
        line.write(#"{"address":""#)
        sighting.address.write(to: &line)
        line.write(#"","address_type":""#)
        line.write(contentsOf: AdvertisingReport.addressTypeName(sighting.addressType))
        line.write(#"","major":"#)
        line.writeDecimal(sighting.identity.major)
        line.write(#","measured_power":"#)
        line.writeDecimal(sighting.frame.measuredPower)
        line.write(
            sighting.frame.hasPlausibleMeasuredPower
                ? #","measured_power_plausible":true,"minor":"# : #","measured_power_plausible":false,"minor":"#)
        line.writeDecimal(sighting.identity.minor)
        if let rssi = sighting.rssi {
            line.write(#","rssi":"#)
            line.writeDecimal(rssi)
        }
        line.write(#","time":""#)
        writeTime(sighting.time, to: &line)
        line.write(#"","time_us":"#)
        line.writeDecimal(sighting.time.microsecondsSinceEpoch)
        line.write(#","uuid":""#)
        writeUUID(sighting.identity.uuid, to: &line)
        line.write("\"}\n")
    }

    /// `Timestamp.writeISO8601`, the part up to the fraction made once a second.
    private func writeTime(_ time: Timestamp, to line: inout TextWriter) {
        secondText.write(for: time.wholeSeconds, capacity: Timestamp.iso8601Capacity, to: &line) {
            time.writeISO8601Seconds(to: &$0)
        }
        time.writeISO8601Fraction(to: &line)
    }

    /// `TextWriter.writeUUID`, made once while the UUID repeats.
    private func writeUUID(_ uuid: UUID, to line: inout TextWriter) {
        uuidText.write(for: uuid, capacity: 36, to: &line) { $0.writeUUID(uuid) }
    }

    /// A line for stderr; the sightings before it are written first, so a file of both reads in order.
    func note(_ line: String) {
        flush()
        OutputFile.standardError.write(Array("\(line)\n".utf8))
    }

    func flush() {
        guard !buffer.isEmpty else { return }
        output.write(buffer)
        buffer.removeAll(keepingCapacity: true)
    }
}
