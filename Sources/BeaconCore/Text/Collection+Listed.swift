extension Collection<String> {
    /// The first `limit` joined with ", ", then how many more: a list in a
    /// message stays short however long the file it comes from.
    public func listed(atMost limit: Int) -> String {
        let shown = prefix(limit).joined(separator: ", ")
        return count > limit ? "\(shown) (and \(count - limit) more)" : shown
    }
}
