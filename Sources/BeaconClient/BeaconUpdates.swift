/// An async sequence of a `BeaconClient`, failing only with `BeacondError`
/// (`.serviceNotRunning` when beacond leaves the bus, `.bus` named
/// `org.freedesktop.DBus.Error.Disconnected` when the bus does). Leaving the loop or
/// cancelling the task ends it and undoes what it set up on the bus (below).
///
/// A sequence subscribes when it is made, not when it is first iterated:
/// what beacond signals from then on is kept until read, so a caller that
/// makes its sequences before its first call to beacond misses nothing
/// beacond signals after answering it. What waits is bounded: a state
/// (`nearestVenueUpdates`, `availabilityUpdates`) keeps only its newest
/// value for a reader that falls behind; events keep up to
/// `BeaconClient.mostUnreadEvents`, then the sequence ends with `LimitsExceeded`.
///
/// A sequence is read once, by one task, as the `AsyncThrowingStream`
/// under it (a second concurrent reader traps): make one per reader.
/// Leaving the loop ends it once the sequence is released, as one made in
/// the `for` statement is at once; one kept in a property lives on until
/// released or its reading task is cancelled.
public struct BeaconUpdates<Element: Sendable>: AsyncSequence, Sendable {
    public typealias Failure = BeacondError
    let stream: AsyncThrowingStream<Element, any Error>

    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<Element, any Error>.AsyncIterator

        public mutating func next(isolation actor: isolated (any Actor)?) async throws(BeacondError) -> Element? {
            do {
                return try await base.next(isolation: actor)
            } catch {
                throw error as? BeacondError ?? .bus(name: "", message: "\(error)")
            }
        }

        public mutating func next() async throws(BeacondError) -> Element? {
            try await next(isolation: nil)
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: stream.makeAsyncIterator())
    }
}

import BeacondAPI
