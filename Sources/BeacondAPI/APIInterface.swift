/// One interface of org.beacond: where its objects are and what they offer.
/// Everything else — dispatch, the client, the XML, the reference — is made from these.
public struct APIInterface: Sendable, Hashable {
    public var name: String
    /// The object path, or its pattern (`/org/beacond/venue/<id>`).
    public var objectPath: String
    /// One line on what the objects are.
    public var summary: String
    /// More on the objects: when they appear, what is absent.
    public var doc: String
    public var methods: [APIMethod]
    public var properties: [APIProperty]
    public var signals: [APISignal]

    public init(
        name: String, objectPath: String, summary: String, doc: String = "", methods: [APIMethod] = [],
        properties: [APIProperty] = [], signals: [APISignal] = []
    ) {
        self.name = name
        self.objectPath = objectPath
        self.summary = summary
        self.doc = doc
        self.methods = methods
        self.properties = properties
        self.signals = signals
    }
}
