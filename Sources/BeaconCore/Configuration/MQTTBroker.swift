/// Where the broker is: `mqtt://host[:port]`, `mqtts://host[:port]` or `unix:///path/to/socket`.
public struct MQTTBroker: Hashable, Sendable, CustomStringConvertible {
    public enum Transport: String, Hashable, Sendable {
        case tcp = "mqtt"
        case tls = "mqtts"
        case unix
    }

    public var transport: Transport
    /// A host name or address; the socket's path for `unix`.
    public var host: String
    /// 0 for `unix` (libmosquitto's way of saying "a socket path").
    public var port: Int

    public struct ParseError: Error, Equatable, Sendable, CustomStringConvertible {
        public var text: String
        public var reason: String
        public var description: String {
            "invalid broker URL '\(text)': \(reason); expected mqtt://HOST[:PORT], mqtts://HOST[:PORT] or unix:///PATH"
        }
    }

    public init(transport: Transport, host: String, port: Int) {
        self.transport = transport
        self.host = host
        self.port = port
    }

    public init(parsing text: String) throws(ParseError) {
        guard let separator = text.firstRange(of: "://") else { throw ParseError(text: text, reason: "no scheme") }
        guard let transport = Transport(rawValue: String(text[..<separator.lowerBound]).lowercased()) else {
            throw ParseError(text: text, reason: "unknown scheme '\(text[..<separator.lowerBound])'")
        }
        let rest = String(text[separator.upperBound...])
        if transport == .unix {
            guard rest.hasPrefix("/"), !rest.hasSuffix("/"), rest.utf8.count < 108 else {
                throw ParseError(text: text, reason: "expected an absolute socket path (not a directory) shorter than 108 bytes")
            }
            self.init(transport: .unix, host: rest, port: 0)
            return
        }
        let authority = rest.hasSuffix("/") ? String(rest.dropLast()) : rest
        guard !authority.contains("/") else { throw ParseError(text: text, reason: "a broker URL has no path") }
        guard !authority.contains("@") else {
            throw ParseError(text: text, reason: "no credentials in the URL; use username and password_file")
        }
        var host = authority
        var port = transport == .tls ? 8883 : 1883
        // [v6::addr]:port, host:port, or a bare host.
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            let tail = authority[authority.index(after: close)...]
            if !tail.isEmpty {
                guard tail.hasPrefix(":"), let value = Int(tail.dropFirst()) else { throw ParseError(text: text, reason: "bad port") }
                port = value
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = String(authority[..<colon])
            guard let value = Int(authority[authority.index(after: colon)...]) else { throw ParseError(text: text, reason: "bad port") }
            port = value
        }
        guard !host.isEmpty, host.utf8.count <= 253 else { throw ParseError(text: text, reason: "no host") }
        guard (1...65535).contains(port) else { throw ParseError(text: text, reason: "port \(port) is outside 1...65535") }
        self.init(transport: transport, host: host, port: port)
    }

    public var description: String {
        switch transport {
        case .unix: "unix://\(host)"
        case .tcp, .tls: host.contains(":") ? "\(transport.rawValue)://[\(host)]:\(port)" : "\(transport.rawValue)://\(host):\(port)"
        }
    }
}
