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
        if let newest { links[newest]?.newer = key }
        newest = key
        if oldest == nil { oldest = key }
    }

    mutating func remove(_ key: Key) {
        guard let removed = links.removeValue(forKey: key) else { return }
        if let older = removed.older { links[older]?.newer = removed.newer } else { oldest = removed.newer }
        if let newer = removed.newer { links[newer]?.older = removed.older } else { newest = removed.older }
    }
}
