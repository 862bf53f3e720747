import BeaconCore

/// One line per event, for stderr and the journal.
public enum EventLog {
    public static func line(_ event: EngineEvent) -> String? {
        switch event {
        case .region(let transition):
            switch transition.kind {
            case .entered: return "region \(transition.regionID) entered (\(transition.reason))"
            case .exited: return "region \(transition.regionID) exited (\(transition.reason))"
            case .determinedOutside: return "region \(transition.regionID) is outside (\(transition.reason))"
            }
        case .nearestVenueChanged(let venue):
            return "nearest venue: " + describe(venue)
        case let .implausibleMeasuredPower(beacon, advertised, used):
            return "beacon \(beacon) advertises measured power \(advertised) dBm, not a 1 m calibration "
                + "(\(IBeaconFrame.plausibleMeasuredPower)); ranging uses \(used) dBm"
        case .beaconAppeared, .beaconDisappeared:
            return nil
        }
    }

    /// `counter-1 "Caffè Macs — Counter 1", near, 0.62 m ±0.15, runner-up counter-2 (71% ahead), stationary`
    public static func describe(_ venue: NearestVenue?) -> String {
        guard let venue else { return "none (no venue in range)" }
        var text = "\(venue.venueID) \"\(venue.name)\""
        switch venue.source {
        case .preference:
            text += ", the preferred venue (nothing in range)"
        case .ranging:
            if let beacon = venue.beacon {
                text += ", \(beacon.proximity.rawValue), \(format(beacon.distance)) m ±\(format(beacon.accuracy))"
            }
            if let runnerUp = venue.runnerUpID {
                text += ", runner-up \(runnerUp) (\(Int((venue.margin * 100).rounded()))% ahead)"
            }
            // Said either way: the same venue is announced again when only this changes.
            text += venue.isStationary ? ", stationary" : ", moving"
        }
        return text
    }

    private static func format(_ value: Double) -> String { value.decimals(2) }
}
