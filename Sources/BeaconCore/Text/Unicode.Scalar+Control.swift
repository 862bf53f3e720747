extension Unicode.Scalar {
    /// C0 controls, DEL and C1 controls: nothing a person reads in a name,
    /// and what breaks the places a name goes — NUL ends a D-Bus string (a
    /// reply carrying it cannot be sent), a line break forges a journal line.
    public var isControlCharacter: Bool {
        value <= 0x1F || (0x7F...0x9F).contains(value)
    }
}
