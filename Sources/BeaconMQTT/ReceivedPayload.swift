/// What the shell keeps of a received message: its first bytes, enough for
/// Home Assistant's birth message, and a digest of the whole, which tells
/// this node's own config from any other however alike they begin. The
/// digest is Swift's `Hasher`, seeded afresh in each process, so another
/// client on the broker cannot craft a config that passes for this node's.
public struct ReceivedPayload: Sendable, Equatable {
    /// How many bytes of the payload are kept as text.
    public static let keptBytes = 16

    /// The payload's first `keptBytes` bytes.
    public let start: String
    /// How long the whole payload was.
    public let length: Int
    let digest: Int

    public init(_ bytes: UnsafeRawBufferPointer) {
        start = String(decoding: bytes.prefix(Self.keptBytes), as: UTF8.self)
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
