/// The freedesktop interfaces a client of org.beacond calls besides its own
/// (the binding serves them, and keeps their names to itself).
public enum StandardInterfaces {
    public static let properties = "org.freedesktop.DBus.Properties"
    public static let objectManager = "org.freedesktop.DBus.ObjectManager"
    public static let getAll = "GetAll"
    public static let getManagedObjects = "GetManagedObjects"
    /// The bus driver's signal that a name changed owner (to "" when it left).
    public static let nameOwnerChanged = "NameOwnerChanged"
    /// The bus driver's method that says whether a name has an owner now.
    public static let nameHasOwner = "NameHasOwner"
    /// The bus's error for a call that got no reply: timed out, or its receiver left.
    public static let noReply = "org.freedesktop.DBus.Error.NoReply"
    /// libdbus's own signal, never sent on the bus, that the connection to the bus was lost.
    public static let localPath = "/org/freedesktop/DBus/Local"
    public static let local = "org.freedesktop.DBus.Local"
    public static let disconnected = "Disconnected"
}
