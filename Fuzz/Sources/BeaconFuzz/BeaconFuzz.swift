import BeaconCore
import BeaconEvaluation

/// Results are folded in here so the optimiser cannot drop the work.
nonisolated(unsafe) private var sink = 0

/// libFuzzer's entry point: every decoder BeaconCore runs on untrusted bytes
/// gets the input, and so does the trace reader (a recording brought from
/// elsewhere); none of them may trap, whatever the bytes.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes: [UInt8] = if let data, size > 0 { Array(UnsafeBufferPointer(start: data, count: size)) } else { [] }

    // Once as a slice starting at 0, once as a slice whose indices start
    // elsewhere (as a record inside a capture does): code that indexes a
    // slice from 0 instead of startIndex fails the second.
    exercise(bytes[...])
    let padded = [0xA5, 0x5A, 0xA5] + bytes
    exercise(padded[3...])
    return 0
}

private func exercise(_ input: ArraySlice<UInt8>) {
    // 1. The input as an advertising payload.
    decodeFrame(input)

    // 2. The input as an HCI event packet; every report's data as a payload.
    do {
        try HCIEvent.forEachAdvertisingReport(in: input) { report in
            sink &+= report.data.count &+ Int(report.rssi ?? 0) &+ Int(report.addressType)
            decodeFrame(report.data)
        }
    } catch {
        sink &+= 1
    }

    // 3. The input as a recording (btsnoop, pcapng or hcidump text), through the pipeline's decoder.
    if var reader = try? RecordingReader(bytes: input) {
        var decoder = AdvertisementDecoder()
        while let event = reader.next() {
            decoder.decode(event: event.packet, at: event.timestamp ?? Timestamp(microsecondsSinceEpoch: 0)) { sighting in
                sink &+= Int(sighting.frame.identity.major) &+ Int(sighting.frame.measuredPower)
            }
        }
        sink &+= decoder.events &+ decoder.advertisements &+ decoder.iBeacons &+ decoder.malformed
        sink &+= reader.skippedRecords &+ (reader.failure == nil ? 0 : 1)
    }

    // 4. The input as a trace CSV (invalid UTF-8 replaced, as `evaluate` reads a file).
    do {
        let trace = try Trace(csv: String(decoding: input, as: UTF8.self))
        sink &+= trace.rows.count &+ trace.warnings.count
    } catch {
        sink &+= error.line
    }
}

private func decodeFrame(_ payload: ArraySlice<UInt8>) {
    do {
        if let frame = try IBeaconFrame.decode(advertisingData: payload) {
            sink &+= Int(frame.identity.minor) &+ Int(frame.measuredPower)
        }
    } catch {
        sink &+= 2
    }
}
