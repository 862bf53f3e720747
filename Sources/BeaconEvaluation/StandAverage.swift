import BeaconCore

/// A reference, not a baseline: the mean RSSI of each beacon since its row's
/// true distance last changed, through the path-loss model. It knows from the
/// truth when the listener moved, which no ranger can, and averages the stand
/// so far: what a filter that saw every move at once and then averaged would
/// give. It is no ceiling (a robust average can beat the mean), but where it
/// loses to raw RSSI by a wide margin, finding the moves better is unlikely
/// to win that file: its stands' frozen fading, calibration or exponent is
/// what the figures measure.
public struct StandAverage: Sendable {
    private struct Stand: Sendable {
        var trueDistance: Double
        var sum = 0.0
        var count = 0
        var lastReading: Timestamp?
        var power = 0.0
    }

    private let model: PathLossModel
    private var stands: [BeaconIdentity: Stand] = [:]

    public init(settings: RangingSettings) {
        model = PathLossModel(exponent: settings.pathLossExponent)
    }

    /// One row: a new true distance starts a new stand; a row with no
    /// reading (`nil`) adds nothing to it.
    public mutating func observe(
        _ identity: BeaconIdentity, rssi: Int8?, measuredPower: Int8, trueDistance: Double, at time: Timestamp
    ) {
        var stand = stands[identity].flatMap { $0.trueDistance == trueDistance ? $0 : nil } ?? Stand(trueDistance: trueDistance)
        if let rssi {
            stand.sum += Double(rssi)
            stand.count += 1
            stand.lastReading = time
            stand.power = Double(measuredPower)
        }
        stands[identity] = stand
    }

    /// The stand's mean through the model; `nil` before its first reading or,
    /// as for the baselines, once the beacon has gone unheard too long.
    public func distance(_ identity: BeaconIdentity, now: Timestamp) -> Double? {
        guard let stand = stands[identity], stand.count > 0, let last = stand.lastReading,
            now - last <= BaselineRanger.staleAfter
        else { return nil }
        return model.distance(rssi: stand.sum / Double(stand.count), measuredPower: stand.power)
    }
}
