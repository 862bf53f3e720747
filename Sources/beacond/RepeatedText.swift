import BeaconCore

/// Text made once for a key and copied while the key repeats: a replay
/// prints thousands of lines a second from a few beacons, each with the same
/// UUID and, within a second, the same date and time up to the fraction.
struct RepeatedText<Key: Equatable> {
    private var key: Key?
    private var text: [UInt8] = []

    /// Writes the text for `key`, made by `make` (at most `capacity` bytes) when the key changed.
    mutating func write(for key: Key, capacity: Int, to line: inout TextWriter, make: (inout TextWriter) -> Void) {
        if self.key != key {
            text.removeAll(keepingCapacity: true)
            text.appendText(capacity: capacity, make)
            self.key = key
        }
        line.write(bytes: text)
    }
}
