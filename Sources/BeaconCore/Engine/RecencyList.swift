/// Keys in the order they were last touched, with O(1) touch, removal and
/// "least recently touched": what bounded tracking evicts first.
///
/// A doubly linked list threaded through a dictionary, so no operation walks
/// the list, however many keys it holds.
struct RecencyList<Key: Hashable & Sendable>: Sendable {
    private struct Links: Sendable {
        var older: Key?
        var newer: Key?
    }

    private var links: [Key: Links] = [:]
    /// The least recently touched key.
    private(set) var oldest: Key?
    private var newest: Key?

    var count: Int { links.count }

    /// Makes `key` the most recently touched, adding it if new.
    mutating func touch(_ key: Key) {
        if newest == key { return }
        remove(key)
        links[key] = Links(older: newest, newer: nil)
        if let newest { update(newest) { $0.newer = key } }
        newest = key
        if oldest == nil { oldest = key }
    }

    mutating func remove(_ key: Key) {
        guard let removed = links.removeValue(forKey: key) else { return }
        if let older = removed.older { update(older) { $0.newer = removed.newer } } else { oldest = removed.newer }
        if let newer = removed.newer { update(newer) { $0.older = removed.older } } else { newest = removed.older }
    }

    /// Changes the links where they lie, with one lookup: `links[key]?.newer = …`
    /// (optional chaining through the subscript) allocates on every call (6
    /// mallocs per touch, measured with valgrind), and reading, changing and
    /// writing back hashes the key twice.
    private mutating func update(_ key: Key, _ change: (inout Links) -> Void) {
        guard let index = links.index(forKey: key) else { return }
        change(&links.values[index])
    }
}
