/// One PUBLISH: where, what, and whether the broker keeps it for late subscribers.
public struct MQTTMessage: Hashable, Sendable {
    public var topic: String
    /// UTF-8 text; empty and retained clears the topic on the broker.
    public var payload: String
    public var retain: Bool

    public init(topic: String, payload: String, retain: Bool) {
        self.topic = topic
        self.payload = payload
        self.retain = retain
    }
}
