/// What the shell keeps of a received message: its length and a digest of
/// the whole, which tells this node's own config from any other however
/// alike they begin, and Home Assistant's birth message from anything else.
/// The digest is Swift's `Hasher`, seeded afresh in each process, so another
/// client on the broker cannot craft a config that passes for this node's.
public struct ReceivedPayload: Sendable, Equatable {
    /// How long the whole payload was.
    public let length: Int
    let digest: Int

    public init(_ bytes: UnsafeRawBufferPointer) {
        length = bytes.count
        var hasher = Hasher()
        hasher.combine(bytes: bytes)
        digest = hasher.finalize()
    }

    public init(_ text: String) {
        self = Array(text.utf8).withUnsafeBytes { ReceivedPayload($0) }
    }

    public var isEmpty: Bool { length == 0 }
}
