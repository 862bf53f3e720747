/// A two-sided CUSUM on a level model's standardized innovations: it fires
/// when the level has shifted, and says when the shift began (where the run
/// that crossed the threshold started), so the level can be re-seeded from
/// the samples since.
struct ChangeDetector: Sendable {
    let design: RSSIFilter.Detector
    private var upward = 0.0
    private var downward = 0.0
    private var upwardStart: Timestamp?
    private var downwardStart: Timestamp?

    init(design: RSSIFilter.Detector) {
        self.design = design
    }

    /// Folds in one innovation, in sigmas (already clipped); returns when
    /// the change began if the detector fires.
    mutating func add(_ innovation: Double, at time: Timestamp) -> Timestamp? {
        if upward == 0 { upwardStart = time }
        if downward == 0 { downwardStart = time }
        upward = max(0, upward + innovation - design.allowance)
        downward = max(0, downward - innovation - design.allowance)
        return upward > design.threshold ? upwardStart : downward > design.threshold ? downwardStart : nil
    }

    mutating func reset() {
        upward = 0
        downward = 0
    }
}
