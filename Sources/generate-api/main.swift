import BeacondBus
import Foundation

// Writes dist/dbus/*.xml and docs/api/*.md from Sources/BeacondAPI, into the
// repository at the given path (default: the current directory). A separate
// tool rather than a beacond subcommand: it is for whoever changes the API,
// and has no place in the installed service.
let root = URL(fileURLWithPath: CommandLine.arguments.dropFirst().first ?? FileManager.default.currentDirectoryPath)
do {
    for file in GeneratedFiles.all {
        let url = root.appendingPathComponent(file.path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(file.contents.utf8).write(to: url)
        print("wrote \(file.path)")
    }
} catch {
    FileHandle.standardError.write(Data("generate-api: \(error)\n".utf8))
    exit(1)
}
