import BeaconCore
import BeaconFiles
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc

/// Region states and the preferred venue, kept in `state.json` under the
/// state directory, written so that a power cut never leaves half a file:
/// write a temporary file, fsync it, rename it over the old one, fsync the
/// directory. A corrupt or unreadable file is reported, set aside and replaced.
public struct StateStore: Sendable {
    public let directory: String
    public var path: String { directory + "/state.json" }

    public init(directory: String) {
        self.directory = directory
    }

    public enum LoadResult: Sendable, Equatable {
        case loaded(EngineState)
        case missing
        /// The file was there but could not be used; the message says why. It will be replaced.
        case unusable(String)
    }

    /// Far more than the state of the most regions and venues beacond keeps
    /// (a few hundred bytes each); a larger file is not read but replaced.
    static let largestState = 16 << 20

    /// Where an unusable state file is kept for a person to look at (one, the
    /// newest): the next save writes `path` afresh.
    public var setAsidePath: String { path + ".unusable" }

    /// Moves an unusable file to `setAsidePath`; why not, if it cannot.
    public func setAside() -> String? {
        rename(path, setAsidePath) == 0 ? nil : "cannot keep it as \(setAsidePath): \(String(cString: strerror(errno)))"
    }

    public func load() -> LoadResult {
        let bytes: [UInt8]
        do {
            bytes = try RegularFile.read(path, limit: Self.largestState)
        } catch .noSuchFile {
            return .missing
        } catch {
            return .unusable("cannot read \(path): \(error)")
        }
        do {
            return .loaded(try JSONDecoder().decode(EngineState.self, from: Data(bytes)))
        } catch {
            return .unusable("\(path) is corrupt (\(bytes.count) bytes): \(error)")
        }
    }

    public struct SaveError: Error, Equatable, CustomStringConvertible {
        public var description: String
        /// What failed and why, without what varies from one try to the next
        /// (the bytes written): the same reason is said once (`StateKeeper`).
        public var reason: String

        init(description: String, reason: String? = nil) {
            self.description = description
            self.reason = reason ?? description
        }
    }

    public func save(_ state: EngineState) throws(SaveError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        let data: Data
        do {
            data = try encoder.encode(state)
        } catch {
            throw SaveError(description: "cannot encode state: \(error)")
        }
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            // FileManager's error wraps the errno; its own description is for programmers.
            let code = ((error as? CocoaError)?.underlying as? POSIXError)?.code.rawValue
            throw SaveError(description: "cannot create \(directory): \(code.map { String(cString: strerror($0)) } ?? "\(error)")")
        }
        let temporary = path + ".tmp"
        // A leftover (a crash mid-save) or a planted file or symlink is removed,
        // never written through: O_EXCL|O_NOFOLLOW refuses anything that
        // reappears in between.
        if unlink(temporary) != 0, errno != ENOENT {
            // A read-only file system says so before it looks for the file: nothing need be stale.
            throw SaveError(
                description: errno == EROFS ? "cannot write in \(directory): \(errorText())" : "cannot remove the stale \(temporary): \(errorText())")
        }
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o640)
        guard descriptor >= 0 else { throw SaveError(description: "cannot write \(temporary): \(errorText())") }
        var failure: String?
        var reason: String?
        do throws(DescriptorWrite.Failure) {
            try DescriptorWrite.all([UInt8](data), to: descriptor)
        } catch {
            failure = "cannot write \(temporary) (\(error.written) of \(data.count) bytes written): \(error.reason)"
            reason = "cannot write \(temporary): \(error.reason)"
        }
        if failure == nil, fsync(descriptor) != 0 { failure = "cannot write \(temporary) to disk: \(errorText())" }
        if close(descriptor) != 0, failure == nil { failure = "cannot write \(temporary): \(errorText())" }
        if let failure {
            unlink(temporary)
            throw SaveError(description: failure, reason: reason)
        }
        guard rename(temporary, path) == 0 else {
            unlink(temporary)
            throw SaveError(description: "cannot replace \(path): \(errorText())")
        }
        let directoryDescriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryDescriptor >= 0 {
            fsync(directoryDescriptor)
            close(directoryDescriptor)
        }
    }

    private func errorText() -> String { String(cString: strerror(errno)) }
}
