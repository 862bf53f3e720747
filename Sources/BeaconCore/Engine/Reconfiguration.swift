/// What applying a new configuration dropped, so the service can say so: a
/// region or preference that silently vanished looks like a bug to whoever
/// edited the file.
public struct Reconfiguration: Hashable, Sendable {
    /// The ids of the file's regions that the new file no longer has, sorted.
    public var removedRegions: [String]
    /// The preferred venue, when the new file no longer has it.
    public var droppedPreferredVenue: String?
}
