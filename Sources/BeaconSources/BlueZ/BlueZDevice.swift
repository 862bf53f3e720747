import BeaconCore
import DBus

/// What the bluez source knows of one `org.bluez.Device1`: enough to turn a
/// report into an advertisement for the same decoder the `hci` source feeds.
///
/// BlueZ hands over the parts of an advertisement (address, RSSI,
/// manufacturer data), not its bytes; the manufacturer data is put back into
/// AD structures so the iBeacon frame is read, checked and counted in one place.
struct BlueZDevice: Sendable, Equatable {
    var address: BluetoothAddress?
    /// 0 public, 1 random, as HCI numbers them.
    var addressType: UInt8 = 0
    /// Company identifier → the bytes after it, of the report last merged
    /// only. With `DuplicateData` BlueZ sends ManufacturerData with every
    /// report that carries it, in the same PropertiesChanged as its RSSI
    /// (PLATFORM-NOTES); RSSI alone is a report without it — a scan response,
    /// another frame of a beacon that also sends Eddystone — which must not
    /// be taken for the iBeacon again (until 2026-11-27 the data of an
    /// earlier report was, and such a device never left its region).
    var manufacturerData: [UInt16: [UInt8]] = [:]
    var rssi: Int16?

    /// Takes in Device1 properties (all of them or just the changed ones);
    /// returns whether they carried an RSSI, which BlueZ sends with every
    /// report it passes on while a discovery filter is set.
    mutating func merge(_ properties: [String: DBusValue]) -> Bool {
        if let text = properties["Address"]?.string, let address = BluetoothAddress(text) { self.address = address }
        if let type = properties["AddressType"]?.string { addressType = type == "random" ? 1 : 0 }
        manufacturerData = properties["ManufacturerData"].flatMap(Self.manufacturerData) ?? [:]
        guard let rssi = properties["RSSI"]?.integer, let value = Int16(exactly: rssi) else { return false }
        self.rssi = value
        return true
    }

    /// The latest report as an advertisement received at `time` (with no
    /// data when it carried no manufacturer data); `nil` until the address
    /// and RSSI are known.
    func advertisement(at time: Timestamp) -> Advertisement? {
        guard let address, let rssi else { return nil }
        var data: [UInt8] = []
        for (company, bytes) in manufacturerData.sorted(by: { $0.key < $1.key }) where bytes.count <= 251 {
            data += [UInt8(bytes.count + 3), 0xFF, UInt8(company & 0xFF), UInt8(company >> 8)] + bytes
        }
        // BlueZ does not say which PDU type carried the data.
        let report = AdvertisingReport(
            kind: .legacy(.advNonconnInd), addressType: addressType, address: address,
            rssi: Int8(clamping: rssi), data: data[...])
        return Advertisement(time: time, report: report)
    }

    /// `a{qv}` with `ay` in each variant; `nil` when the value has another shape.
    static func manufacturerData(_ value: DBusValue) -> [UInt16: [UInt8]]? {
        guard case .dictionary("q", _, let entries) = value.unwrapped else { return nil }
        var result: [UInt16: [UInt8]] = [:]
        for entry in entries {
            guard case .uint16(let company) = entry.key, let elements = entry.value.unwrapped.arrayElements else { return nil }
            var bytes: [UInt8] = []
            for element in elements {
                guard case .byte(let byte) = element else { return nil }
                bytes.append(byte)
            }
            result[company] = bytes
        }
        return result
    }

    /// `/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF` → the address, for devices whose
    /// properties arrive without one.
    static func address(fromPath path: String) -> BluetoothAddress? {
        guard let element = path.split(separator: "/").last, element.hasPrefix("dev_") else { return nil }
        return BluetoothAddress(String(element.dropFirst(4).map { $0 == "_" ? ":" : $0 }))
    }
}
