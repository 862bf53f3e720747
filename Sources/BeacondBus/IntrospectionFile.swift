import BeacondAPI
import DBus

/// `dist/dbus/<interface>.xml`: the introspection XML of one interface, as
/// the running service introspects it (both come from the same declaration).
public enum IntrospectionFile {
    public static func fileName(_ interface: APIInterface) -> String { "\(interface.name).xml" }

    public static func xml(_ interface: APIInterface) -> String {
        """
        <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
        <!-- \(interface.objectPath): \(interface.summary). Generated from Sources/BeacondAPI by `swift run generate-api`; do not edit. -->
        <node>
        \(DBusInterface(interface).introspectionXML)</node>

        """
    }
}
