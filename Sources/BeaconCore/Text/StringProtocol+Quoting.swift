extension StringProtocol {
    /// Text someone else sent (a bus caller's id or key), as a message
    /// quotes it: at most 64 characters, so a megabyte is not sent back, and
    /// control characters escaped, so a newline cannot forge a second line.
    public var quotedForMessage: String {
        let shown = count > 64 ? prefix(64) + "…" : String(self)
        return shown.unicodeScalars.map { $0.properties.generalCategory == .control ? $0.escaped(asASCII: true) : String($0) }.joined()
    }
}
