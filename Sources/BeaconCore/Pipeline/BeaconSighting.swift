/// One decoded iBeacon advertisement: what the region monitor and the ranger consume.
public struct BeaconSighting: Sendable, Equatable {
    public var time: Timestamp
    public var frame: IBeaconFrame
    /// `nil` when no reading was taken (RSSI 127 or 0 from any source).
    public var rssi: Int8?
    public var address: BluetoothAddress
    public var addressType: UInt8

    public init(time: Timestamp, frame: IBeaconFrame, rssi: Int8?, address: BluetoothAddress, addressType: UInt8) {
        self.time = time
        self.frame = frame
        self.rssi = rssi
        self.address = address
        self.addressType = addressType
    }

    public var identity: BeaconIdentity { frame.identity }
}
