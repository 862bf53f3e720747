/// Text written straight into bytes: what `beacond scan` prints for every
/// sighting, hundreds of thousands a second at a replay's full speed, without
/// building a `String` per field or growing an array byte by byte. The
/// `description`s of `Timestamp` and `BluetoothAddress` are made by the same
/// writers, so each format is written once.
///
/// A writer fills scratch space on the stack (`[UInt8].appendText`), which
/// is then appended to the array in one copy.
public struct TextWriter: ~Copyable {
    @usableFromInline let scratch: UnsafeMutableBufferPointer<UInt8>
    @usableFromInline var count = 0

    @usableFromInline init(_ scratch: UnsafeMutableBufferPointer<UInt8>) {
        self.scratch = scratch
    }

    /// Writes one byte; past the space asked for is a programming error.
    @inlinable
    public mutating func write(_ byte: UInt8) {
        precondition(count < scratch.count, "text longer than the space asked for")
        scratch[count] = byte
        count += 1
    }

    /// Writes text given as a literal.
    @inlinable
    public mutating func write(_ text: StaticString) {
        text.withUTF8Buffer { write(bytes: $0) }
    }

    /// Writes bytes made earlier (text a caller keeps to repeat), in one copy.
    @inlinable
    public mutating func write(bytes: some Collection<UInt8>) {
        precondition(count + bytes.count <= scratch.count, "text longer than the space asked for")
        count = UnsafeMutableBufferPointer(rebasing: scratch[count...]).initialize(fromContentsOf: bytes) + count
    }

    /// Writes a string's UTF-8 (a separate name, so that literals take the `StaticString` path).
    @inlinable
    public mutating func write(contentsOf text: String) {
        for byte in text.utf8 { write(byte) }
    }

    /// Writes `value` in decimal, with a leading `-` when negative.
    @inlinable
    public mutating func writeDecimal(_ value: some BinaryInteger) {
        if value < 0 { write(UInt8(ascii: "-")) }
        writeDecimal(UInt64(value.magnitude), width: 1)
    }

    /// Writes `value` in decimal, zero-padded to at least `width` digits.
    @inlinable
    public mutating func writeDecimal(_ value: UInt64, width: Int) {
        var digits = 1
        var limit: UInt64 = 10
        while digits < 20 && value >= limit {
            digits += 1
            limit &*= 10
        }
        digits = max(digits, width)
        precondition(count + digits <= scratch.count, "text longer than the space asked for")
        let start = count
        count += digits
        var remaining = value
        var index = count
        while index > start {
            index -= 1
            scratch[index] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: remaining % 10)
            remaining /= 10
        }
    }

    /// Writes two upper-case hex digits.
    @inlinable
    public mutating func writeHex(_ byte: UInt8) {
        write(Self.hexDigit(byte >> 4))
        write(Self.hexDigit(byte & 0x0F))
    }

    @inlinable
    static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") &+ nibble : UInt8(ascii: "A") &+ nibble &- 10
    }
}

extension [UInt8] {
    /// Appends what `body` writes, at most `capacity` bytes.
    @inlinable
    public mutating func appendText(capacity: Int, _ body: (inout TextWriter) -> Void) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) { scratch in
            var writer = TextWriter(scratch)
            body(&writer)
            append(contentsOf: UnsafeBufferPointer(rebasing: scratch[..<writer.count]))
        }
    }
}

extension String {
    /// The text a writer makes, as a `String` (for `description`s).
    init(capacity: Int, writing body: (inout TextWriter) -> Void) {
        var bytes: [UInt8] = []
        bytes.appendText(capacity: capacity, body)
        self.init(decoding: bytes, as: UTF8.self)
    }
}
