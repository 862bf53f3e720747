import BeaconCore
import Foundation

/// The state topics' payloads: short JSON with sorted keys (the same state
/// is the same bytes, so an unchanged value is never sent again).
public enum MQTTPayloads {
    /// `…/nearest_venue`; every key present, `null` when no venue is known.
    public static func nearestVenue(_ venue: NearestVenue?) -> String {
        guard let venue else {
            return json([
                "id": NSNull(), "name": NSNull(), "proximity": Proximity.unknown.rawValue, "distance": NSNull(),
                "accuracy": NSNull(), "runner_up": NSNull(), "margin": NSNull(), "stationary": false, "source": "none",
            ])
        }
        return json([
            "id": venue.venueID, "name": venue.name, "proximity": venue.proximity.rawValue,
            "distance": venue.beacon == nil ? NSNull() : rounded(venue.distance),
            "accuracy": venue.beacon.map { rounded($0.accuracy) as Any } ?? NSNull(),
            "runner_up": venue.runnerUpID ?? NSNull(), "margin": rounded(venue.margin), "stationary": venue.isStationary,
            "source": venue.source.rawValue,
        ])
    }

    /// `…/scanning`: whether the radio delivers, and why not.
    public static func scanning(_ available: Bool, reason: String) -> String {
        json(["available": available, "reason": reason])
    }

    /// `…/beacon/<uuid>-<major>-<minor>`, only with `publish_beacons`.
    public static func beacon(_ beacon: RangedBeacon) -> String {
        json([
            "uuid": beacon.identity.uuid.uuidString, "major": Int(beacon.identity.major), "minor": Int(beacon.identity.minor),
            "proximity": beacon.proximity.rawValue, "distance": rounded(beacon.distance), "accuracy": rounded(beacon.accuracy),
            "rssi": rounded(beacon.filteredRSSI), "stationary": beacon.isStationary, "venue": beacon.venueID ?? NSNull(),
        ])
    }

    /// Centimetres are what ranging can tell; finer digits would only make every tick a change.
    static func rounded(_ value: Double) -> Double {
        value.isFinite ? (value * 100).rounded() / 100 : -1
    }

    static func json(_ object: [String: Any]) -> String {
        // Only strings, numbers, booleans, nulls and nested dictionaries of them reach here.
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}
