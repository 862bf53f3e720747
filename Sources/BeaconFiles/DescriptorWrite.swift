import Glibc

/// Writing a whole buffer to a file descriptor with `write(2)`: the one loop
/// behind beacond's output, its journal lines and the state file.
public enum DescriptorWrite {
    /// Where a write stopped.
    public struct Failure: Error, Sendable, Equatable {
        /// Bytes the file took before it.
        public let written: Int
        /// errno of the failed call, read at once (a later call may change
        /// it); 0 when the file took nothing and reported no error.
        public let code: Int32

        /// What a person reads: strerror's text, or "nothing taken".
        public var reason: String { code == 0 ? "nothing taken" : String(cString: strerror(code)) }
    }

    /// Writes all of `bytes`, going on after short writes and signals, so a
    /// disk that fills up mid-write says ENOSPC, not a stale errno.
    public static func all(_ bytes: [UInt8], to descriptor: Int32) throws(Failure) {
        let failure: Failure? = bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = write(descriptor, raw.baseAddress! + offset, raw.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0, errno == EINTR {
                    continue
                } else {
                    return Failure(written: offset, code: written < 0 ? errno : 0)
                }
            }
            return nil
        }
        if let failure { throw failure }
    }
}
