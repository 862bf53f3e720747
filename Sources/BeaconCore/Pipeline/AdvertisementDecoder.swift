/// The first stage of the pipeline: HCI events and advertisements in, iBeacon
/// sightings out. It counts what went through and what was dropped, with the
/// last reason: malformed input is counted, never silently lost.
public struct AdvertisementDecoder: Sendable, Equatable {
    /// HCI events read (advertising or not).
    public var events = 0
    /// Advertising reports read from those events.
    public var advertisements = 0
    /// Reports that carried an iBeacon.
    public var iBeacons = 0
    /// HCI events that could not be parsed (their reports are lost).
    public var malformedEvents = 0
    /// Reports whose payload was malformed.
    public var malformedFrames = 0
    /// Pieces of extended advertisements waiting for the rest.
    public private(set) var chains = ReportChains()
    /// The most recent reason something was dropped.
    public var lastProblem: String?

    public init() {}

    public var malformed: Int { malformedEvents + malformedFrames }
    /// Extended advertisements that came in pieces and never whole (cut
    /// short by the controller, pieces lost): not decoded, and not malformed.
    public var incompleteAdvertisements: Int { chains.abandoned }

    /// Decodes one report's payload, counting the outcome.
    ///
    /// Every source's reports pass here, so this is where an RSSI that means
    /// no reading becomes `nil` (`BeaconSighting.reading`).
    public mutating func decode(_ advertisement: Advertisement) -> BeaconSighting? {
        advertisements += 1
        let report = advertisement.report
        do {
            guard let frame = try IBeaconFrame.decode(advertisingData: report.data) else { return nil }
            iBeacons += 1
            return BeaconSighting(
                time: advertisement.time, frame: frame, rssi: report.rssi.flatMap(BeaconSighting.reading),
                address: report.address, addressType: report.addressType)
        } catch {
            malformedFrames += 1
            lastProblem = "\(report.address): \(error)"
            return nil
        }
    }

    /// Parses one HCI event and decodes its reports, counting the outcome;
    /// an extended advertisement reported in pieces is decoded once whole.
    public mutating func decode(event packet: ArraySlice<UInt8>, at time: Timestamp, _ body: (BeaconSighting) -> Void) {
        events += 1
        do {
            try HCIEvent.forEachAdvertisingReport(in: packet) { piece in
                if chains.passesWhole(piece) {
                    if let sighting = decode(Advertisement(time: time, report: piece)) { body(sighting) }
                    return
                }
                let abandoned = chains.abandoned
                let whole = chains.join(piece, at: time)
                if chains.abandoned > abandoned { lastProblem = chains.lastAbandoned }
                if let whole, let sighting = decode(Advertisement(time: time, report: whole)) { body(sighting) }
            }
        } catch {
            malformedEvents += 1
            lastProblem = "HCI event: \(error)"
        }
    }
}
