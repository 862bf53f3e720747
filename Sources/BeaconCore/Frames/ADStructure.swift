/// One AD structure of an advertisement or scan response: `length, type, data…`.
public struct ADStructure: Sendable {
    /// The AD type (0x01 flags, 0x09 complete local name, 0xFF manufacturer data, …).
    public var type: UInt8
    /// The bytes after the type, never past the structure's length.
    public var data: ArraySlice<UInt8>
    /// Where the structure's length byte sits in the payload, for error messages.
    public var offset: Int

    public static let manufacturerSpecificData: UInt8 = 0xFF
}

extension ADStructure {
    /// Calls `body` on every AD structure of `payload`, in order.
    ///
    /// A zero length byte ends the significant part (Core Specification Vol 3
    /// Part C 11: early termination, the rest is padding). A length that points
    /// past the end throws before `body` sees that structure, so nothing ever
    /// reads past a length.
    public static func forEach(
        in payload: ArraySlice<UInt8>,
        _ body: (ADStructure) throws(FrameError) -> Void
    ) throws(FrameError) {
        var index = payload.startIndex
        while index < payload.endIndex {
            let length = Int(payload[index])
            if length == 0 { return }
            let remaining = payload.endIndex - index - 1
            guard length <= remaining else {
                throw .truncatedStructure(
                    offset: index - payload.startIndex, declaredLength: length, remaining: remaining)
            }
            let type = payload[index + 1]
            let data = payload[(index + 2)..<(index + 1 + length)]
            try body(ADStructure(type: type, data: data, offset: index - payload.startIndex))
            index += 1 + length
        }
    }
}
