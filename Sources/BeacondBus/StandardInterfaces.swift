/// The freedesktop interfaces a client of org.beacond calls besides its own
/// (the binding serves them, and keeps their names to itself).
public enum StandardInterfaces {
    public static let properties = "org.freedesktop.DBus.Properties"
    public static let objectManager = "org.freedesktop.DBus.ObjectManager"
    public static let getAll = "GetAll"
    public static let getManagedObjects = "GetManagedObjects"
    /// The bus driver's signal that a name changed owner (to "" when it left).
    public static let nameOwnerChanged = "NameOwnerChanged"
    /// libdbus's own signal, never sent on the bus, that the connection to the bus was lost.
    public static let localPath = "/org/freedesktop/DBus/Local"
    public static let local = "org.freedesktop.DBus.Local"
    public static let disconnected = "Disconnected"
}
