/// Validation of the names D-Bus restricts, so nothing invalid ever reaches
/// libdbus (which would refuse it with a warning, or abort).
public enum DBusNames {
    /// The message bus itself: the sender of NameOwnerChanged, NameAcquired and NameLost.
    public static let busDriver = "org.freedesktop.DBus"
    public static let busDriverPath = "/org/freedesktop/DBus"

    /// `/`, or `/`-separated elements of `[A-Za-z0-9_]`, no empty element, no trailing `/`.
    public static func isValidObjectPath(_ path: String) -> Bool {
        guard path.hasPrefix("/") else { return false }
        if path == "/" { return true }
        let elements = path.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        return elements.allSatisfy { element in
            !element.isEmpty && element.utf8.allSatisfy { isPathCharacter($0) }
        }
    }

    /// Makes any text a valid object path element, reversibly and without
    /// collisions: `[A-Za-z0-9]` stay, every other byte becomes `_XX` (hex),
    /// as systemd escapes unit names in paths.
    public static func escapePathElement(_ text: String) -> String {
        guard !text.isEmpty else { return "_" }
        var result = ""
        for byte in text.utf8 {
            if isAlphanumeric(byte) {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let hex = String(byte, radix: 16)
                result += "_" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return result
    }

    /// The inverse of `escapePathElement`.
    public static func unescapePathElement(_ element: some StringProtocol) -> String {
        var bytes: [UInt8] = []
        var iterator = Array(element.utf8).makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "_"), let high = iterator.next(), let low = iterator.next(),
                let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
            {
                bytes.append(value)
            } else if byte != UInt8(ascii: "_") {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A string D-Bus can carry: valid UTF-8 (Swift guarantees it) with no NUL.
    public static func isValidString(_ text: String) -> Bool {
        !text.utf8.contains(0)
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
    }

    private static func isPathCharacter(_ byte: UInt8) -> Bool {
        isAlphanumeric(byte) || byte == 0x5F
    }
}
