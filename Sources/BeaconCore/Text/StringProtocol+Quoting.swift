extension StringProtocol {
    /// Text someone else sent (a bus caller's id or key), as a message
    /// quotes it: at most 64 Unicode scalars, so a megabyte is not sent back
    /// (64 characters could be: one letter and a million combining accents is
    /// one Character), and control characters escaped, so a newline cannot
    /// forge a second line.
    public var quotedForMessage: String {
        let scalars = unicodeScalars
        let shown = scalars.prefix(64).map { $0.properties.generalCategory == .control ? $0.escaped(asASCII: true) : String($0) }.joined()
        return scalars.dropFirst(64).isEmpty ? shown : shown + "…"
    }
}
