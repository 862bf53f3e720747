/// Awaits `body`, or gives up at a deadline: a test of "returns promptly"
/// fails instead of hanging the suite when it would not. Deadlines catch
/// hangs (a call left for its 60 s timeout), not slowness: the whole suite
/// shares two pool threads with tests that block them, so give ample time.
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
