import BeaconCore

/// The `--estimates` file: beacond's answer after every row of a trace, so
/// anyone can score it with their own script (distance, accuracy, band,
/// stationarity, and the nearest venue with its margin).
public enum EstimatesCSV {
    public static let header =
        "time_ms,uuid,major,minor,distance_m,accuracy_m,proximity,stationary,nearest_venue,venue_margin,listener_stationary"

    /// One line per estimate after the header. Unknown figures and "no venue" are empty fields.
    public static func render(_ estimates: [TraceEvaluation.Estimate]) -> String {
        var text = header + "\n"
        for estimate in estimates {
            let identity = estimate.row.identity
            let fields = [
                String(estimate.row.timeMilliseconds), identity.uuid.uuidString, String(identity.major), String(identity.minor),
                estimate.distance.map { decimal($0) } ?? "", estimate.accuracy.map { decimal($0) } ?? "",
                estimate.proximity.rawValue, String(estimate.isStationary), estimate.nearestVenue ?? "",
                estimate.venueMargin.map { decimal($0) } ?? "", String(estimate.listenerStationary),
            ]
            text += fields.joined(separator: ",") + "\n"
        }
        return text
    }

    private static func decimal(_ value: Double) -> String { value.decimals(4) }
}
