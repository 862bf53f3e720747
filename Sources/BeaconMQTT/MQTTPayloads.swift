import BeaconCore

/// The state topics' payloads: short JSON with sorted keys (the same state
/// is the same bytes, so an unchanged value is never sent again).
public enum MQTTPayloads {
    /// `…/nearest_venue`; every key present, `null` when no venue is known.
    public static func nearestVenue(_ venue: NearestVenue?) -> String {
        guard let venue else {
            return json([
                "id": nil, "name": nil, "proximity": .string(Proximity.unknown.rawValue), "distance": nil,
                "accuracy": nil, "runner_up": nil, "margin": nil, "stationary": false, "source": "none",
            ])
        }
        return json([
            "id": .string(venue.venueID), "name": .string(venue.name), "proximity": .string(venue.proximity.rawValue),
            "distance": venue.beacon == nil ? nil : rounded(venue.distance),
            "accuracy": venue.beacon.map { roundedUp($0.accuracy) } ?? nil,
            "runner_up": JSONValue(venue.runnerUpID), "margin": rounded(venue.margin),
            "stationary": .bool(venue.isStationary), "source": .string(venue.source.rawValue),
        ])
    }

    /// `…/scanning`: whether the radio delivers, and why not.
    public static func scanning(_ available: Bool, reason: String) -> String {
        json(["available": .bool(available), "reason": .string(reason)])
    }

    /// `…/beacon/<uuid>-<major>-<minor>`, only with `publish_beacons`;
    /// `distance`, `accuracy` and `rssi` are `null` while the proximity is
    /// unknown (nothing measured lately), as in `nearest_venue`.
    public static func beacon(_ beacon: RangedBeacon) -> String {
        let known = beacon.proximity != .unknown
        func measured(_ value: Double) -> JSONValue { known ? rounded(value) : nil }
        return json([
            "uuid": .string(beacon.identity.uuid.uuidString), "major": .int(Int(beacon.identity.major)),
            "minor": .int(Int(beacon.identity.minor)), "proximity": .string(beacon.proximity.rawValue),
            "distance": measured(beacon.distance), "accuracy": known ? roundedUp(beacon.accuracy) : nil,
            "rssi": measured(beacon.filteredRSSI), "stationary": .bool(beacon.isStationary),
            "venue": JSONValue(beacon.venueID),
        ])
    }

    /// Centimetres are what ranging can tell; finer digits would only make
    /// every tick a change. `null` for a value that is no number.
    static func rounded(_ value: Double) -> JSONValue {
        value.isFinite ? .double((value * 100).rounded() / 100) : nil
    }

    /// An accuracy to the centimetre above (`roundedUp(toDecimals:)`).
    static func roundedUp(_ value: Double) -> JSONValue {
        value.isFinite ? .double(value.roundedUp(toDecimals: 2)) : nil
    }

    static func json(_ object: [String: JSONValue]) -> String {
        JSONValue.object(object).text
    }
}
