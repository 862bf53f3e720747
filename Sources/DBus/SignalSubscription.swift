/// What a `subscribe` asked for: the bus gets it as a match rule, and the
/// connection checks it again on each signal (a rule's sender is a name,
/// a message carries only its owner's unique name).
struct SignalSubscription: Sendable {
    var sender: String?
    var path: String?
    var interface: String?
    var member: String?
    var handler: @Sendable (DBusSignal) -> Void

    /// The bus's match rule for it.
    var matchRule: String {
        var rule = ["type='signal'"]
        if let sender { rule.append("sender='\(sender)'") }
        if let path { rule.append("path='\(path)'") }
        if let interface { rule.append("interface='\(interface)'") }
        if let member { rule.append("member='\(member)'") }
        return rule.joined(separator: ",")
    }

    /// Unicast signals (sent to this connection by name rather than
    /// broadcast) never match: any peer may send one with any
    /// sender-looking content, and nothing here asks for them. The bus
    /// driver's signals match only if the bus itself sent them; another
    /// well-known name is matched by the bus through the match rule, since a
    /// message carries only the owner's unique name (a subscriber that cares
    /// checks the owner too).
    func matches(_ signal: DBusSignal, unicast: Bool) -> Bool {
        !unicast
            && (sender.map { wanted in
                wanted == signal.sender || (!wanted.hasPrefix(":") && wanted != DBusNames.busDriver)
            } ?? true)
            && (path == nil || path == signal.path)
            && (interface == nil || interface == signal.interface)
            && (member == nil || member == signal.member)
    }
}
