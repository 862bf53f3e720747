/// Awaits `body`, or gives up at a deadline: a test of "returns promptly"
/// fails instead of hanging the suite when it would not.
struct DeadlinePassed: Error, CustomStringConvertible {
    var seconds: Int
    var description: String { "no answer within \(seconds) s" }
}

func within<T: Sendable>(seconds: Int, _ body: @escaping @Sendable () async -> T) async throws -> T {
    // Unstructured on purpose: a task group would wait for a body that hangs.
    let first = AsyncStream<T?>.makeStream()
    let work = Task { first.continuation.yield(await body()) }
    let timer = Task {
        try? await Task.sleep(for: .seconds(seconds))
        first.continuation.yield(nil)
    }
    defer { timer.cancel() }
    for await value in first.stream {
        if let value { return value }
        work.cancel()
        break
    }
    throw DeadlinePassed(seconds: seconds)
}

/// Waits for `condition`, checking every few milliseconds, until a deadline.
func eventually(seconds: Int = 10, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while !condition() {
        if ContinuousClock.now > deadline { return false }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return true
}
