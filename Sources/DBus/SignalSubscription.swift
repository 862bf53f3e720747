/// What a `subscribe` asked for: the bus gets it as a match rule, and the
/// connection checks it again on each signal (a rule's sender is a name,
/// a message carries only its owner's unique name).
struct SignalSubscription: Sendable {
    var sender: String?
    var path: String?
    var interface: String?
    var member: String?
    /// The first argument, a string (`NameOwnerChanged`'s name): so that the
    /// bus wakes a subscriber only for the name it follows, not every client's coming and going.
    var arg0: String? = nil
    var handler: @Sendable (DBusSignal) -> Void

    /// The bus's match rule for it.
    var matchRule: String {
        var rule = ["type='signal'"]
        if let sender { rule.append("sender='\(sender)'") }
        if let path { rule.append("path='\(path)'") }
        if let interface { rule.append("interface='\(interface)'") }
        if let member { rule.append("member='\(member)'") }
        if let arg0 { rule.append("arg0='\(arg0)'") }
        return rule.joined(separator: ",")
    }

    /// Whether a signal matches by its header, before its arguments are read.
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

    /// The rest of the match, once the arguments are read (only for a
    /// signal whose header matched: `matches`).
    func matches(arguments: [DBusValue]) -> Bool {
        arg0 == nil || arg0 == arguments.first?.string
    }
}
