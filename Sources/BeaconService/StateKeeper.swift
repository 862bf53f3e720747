import BeaconCore

/// Keeps `state.json` in step with the engine. A save that fails is said once
/// with its reason and retried with backoff (1 s, doubling to a minute), not
/// on every input; a caller's change is saved at once or refused.
struct StateKeeper {
    enum Outcome: Equatable {
        case unchanged
        case saved
        /// Saved again after failing since `since`.
        case recovered(since: Timestamp)
        /// The save failed; `alreadySaid` when the last attempt failed for the same
        /// reason, so the log says each reason once (a full disk, then a read-only one).
        case failed(StateStore.SaveError, alreadySaid: Bool)
        /// Waiting for the next attempt.
        case pending
    }

    let store: StateStore
    private(set) var saved: EngineState
    private var failure: (since: Timestamp, retryAt: Timestamp, delay: Duration, error: StateStore.SaveError)?
    static let firstDelay: Duration = .seconds(1)
    static let longestDelay: Duration = .seconds(60)

    init(store: StateStore, saved: EngineState) {
        self.store = store
        self.saved = saved
    }

    /// Saves `state` if it changed and no backoff is running; at once if a caller asked for the change.
    mutating func sync(_ state: EngineState, now: Timestamp, requested: Bool = false) -> Outcome {
        guard state != saved else { return .unchanged }
        if !requested, let failure, now < failure.retryAt { return .pending }
        do {
            try store.save(state)
            saved = state
            defer { failure = nil }
            return failure.map { .recovered(since: $0.since) } ?? .saved
        } catch {
            if let previous = failure {
                let delay = min(previous.delay * 2, Self.longestDelay)
                failure = (previous.since, now + delay, delay, error)
                return .failed(error, alreadySaid: error.reason == previous.error.reason)
            }
            failure = (now, now + Self.firstDelay, Self.firstDelay, error)
            return .failed(error, alreadySaid: false)
        }
    }
}
