extension StringProtocol {
    /// Without the leading and trailing characters `drop` is true for:
    /// Foundation's `trimmingCharacters(in:)` for code that does not load
    /// Foundation (`trimming(while: \.isWhitespace)`, `\.isNewline`).
    public func trimming(while drop: (Character) -> Bool) -> SubSequence {
        guard let first = firstIndex(where: { !drop($0) }), let last = lastIndex(where: { !drop($0) }) else {
            return self[endIndex...]
        }
        return self[first...last]
    }
}
