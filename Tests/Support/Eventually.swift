/// Waits for `condition`, checking every few milliseconds, until a deadline.
///
/// Async on purpose: the test runner's pool has a thread per core, and a test
/// that blocks one (a `usleep` loop) starves every other test's deadline.
public func eventually(seconds: Int = 10, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while !condition() {
        if ContinuousClock.now > deadline { return false }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return true
}
