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

    /// An RSSI reading, or `nil` for the values that mean none was taken:
    /// 127 (HCI's "not available"), 0 (what some stacks, sniffers and
    /// recordings put when they measured nothing), and anything outside HCI's
    /// −127…+20 dBm (a damaged capture: +100 dBm ranged at 10 nm). Every way into the engine
    /// (the decoder for live sources and captures, `evaluate --trace` for
    /// recordings) passes its RSSI through here, so the sighting is still
    /// presence but no filter or distance sees a number never measured.
    public static func reading(_ rssi: Int8) -> Int8? {
        (-127...20).contains(rssi) && rssi != 0 ? rssi : nil
    }
}
