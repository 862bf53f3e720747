/// The pcapng file format (draft-ietf-opsawg-pcapng): facts shared by the
/// reader and the writer.
///
/// A file is a sequence of blocks: type (4), total length (4), body, total
/// length again; lengths are multiples of 4 and every integer is in the
/// byte order of its section, which the section header's magic announces.
public enum PcapngFormat {
    public static let sectionHeaderType: UInt32 = 0x0A0D_0D0A
    static let interfaceDescriptionType: UInt32 = 0x0000_0001
    static let simplePacketType: UInt32 = 0x0000_0003
    static let enhancedPacketType: UInt32 = 0x0000_0006
    static let byteOrderMagic: UInt32 = 0x1A2B_3C4D
    /// Type, length, and the trailing length: the smallest block there is.
    static let blockOverhead = 12
    /// The section header's first 16 bytes: type, length, magic, version.
    static let sectionHeaderPrefix = 16
    /// `if_tsresol`: the interface's timestamp unit (default 10⁻⁶ s).
    static let timestampResolutionOption: UInt16 = 9
    /// `if_fcslen`: the bytes of frame check sequence that end each packet.
    static let frameCheckLengthOption: UInt16 = 13
    /// `if_tsoffset`: a signed 64-bit number of seconds to add to every packet's time.
    static let timestampOffsetOption: UInt16 = 14
    static let endOfOptions: UInt16 = 0
}
