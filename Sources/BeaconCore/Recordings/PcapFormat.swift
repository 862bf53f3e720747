/// The classic pcap file format (libpcap's savefile, draft-ietf-opsawg-pcap):
/// what `tcpdump -w`, `ubertooth-btle -q` and Wireshark's "pcap" save write.
///
/// A 24-byte header (magic, version 2.4, time zone, accuracy, snap length,
/// link type), then records with a 16-byte header: seconds, fraction
/// (microseconds, or nanoseconds when the magic says so), captured length,
/// original length. Every integer is in the byte order the magic shows.
public enum PcapFormat {
    /// The magic of a file with microsecond timestamps, as its writer stored it.
    static let microsecondMagic: UInt32 = 0xA1B2_C3D4
    /// The magic of a file with nanosecond timestamps.
    static let nanosecondMagic: UInt32 = 0xA1B2_3C4D
    public static let headerSize = 24
    public static let recordHeaderSize = 16
    /// libpcap's `LT_LINKTYPE`: the link type is the low 26 bits; the
    /// bits above say whether the packets end in a frame check sequence.
    static let linkTypeMask: UInt32 = 0x03FF_FFFF
    /// libpcap's `LT_FCS_LENGTH_PRESENT` and `LT_FCS_LENGTH`: when the flag is
    /// set, each packet ends in a frame check sequence of the top four bits'
    /// count of 16-bit words, which is no part of the packet.
    static let frameCheckPresent: UInt32 = 0x0400_0000
    static func frameCheckBytes(_ field: UInt32) -> Int {
        field & frameCheckPresent == 0 ? 0 : Int(field >> 28) * 2
    }
    /// libpcap's `MAXIMUM_SNAPLEN`: no capture holds a larger packet.
    static let largestPacket = 262_144

    /// Whether `bytes` start like a pcap file, in either byte order.
    static func hasMagic(_ bytes: ArraySlice<UInt8>) -> Bool {
        guard bytes.count >= 4 else { return false }
        let magic = bytes.uint32(at: bytes.startIndex, bigEndian: false)
        return [microsecondMagic, nanosecondMagic].contains { magic == $0 || magic == $0.byteSwapped }
    }
}
