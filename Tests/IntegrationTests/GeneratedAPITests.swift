import BeaconTestSupport
import BeacondAPI
import BeacondBus
import Foundation
import Testing

/// The files made from Sources/BeacondAPI are the committed ones, and the
/// declaration is sound: `swift run generate-api` after changing the API.
/// (That the running service introspects the same XML is checked in
/// ServiceBusTests.signalsObjectsAndIntrospection.)
@Suite struct GeneratedAPITests {
    @Test(arguments: GeneratedFiles.all.map(\.path))
    func theCommittedFileIsWhatTheDeclarationGenerates(path: String) throws {
        let generated = try #require(GeneratedFiles.all.first { $0.path == path }).contents
        let committed = try String(contentsOfFile: TestSupport.repository(path), encoding: .utf8)
        #expect(committed == generated, "\(path) has drifted from Sources/BeacondAPI: run `swift run generate-api`")
    }

    @Test func everyInterfaceHasItsFilesAndNothingElseIsInTheirFolders() throws {
        for folder in ["dist/dbus", "docs/api"] {
            let present = try FileManager.default.contentsOfDirectory(atPath: TestSupport.repository(folder)).map { "\(folder)/\($0)" }
            #expect(Set(present) == Set(GeneratedFiles.all.map(\.path).filter { $0.hasPrefix(folder + "/") }), "\(folder): \(present)")
        }
    }

    @Test func namesAreUniqueAndEveryMethodErrorAndKeyIsDocumented() {
        #expect(Set(Beacond.interfaces.map(\.name)).count == Beacond.interfaces.count)
        for interface in Beacond.interfaces {
            let members = interface.methods.map(\.name) + interface.properties.map(\.name) + interface.signals.map(\.name)
            #expect(Set(members).count == members.count, "\(interface.name) declares a member twice")
            #expect(interface.methods.allSatisfy { !$0.doc.isEmpty } && interface.properties.allSatisfy { !$0.doc.isEmpty })
            let reference = APIReference.markdown(interface)
            for method in interface.methods {
                for error in method.errors { #expect(reference.contains(error.name)) }
                for argument in method.inputs + method.outputs {
                    for key in argument.type.dictionary?.keys ?? [] { #expect(reference.contains("`\(key.name)` \(key.type.signature)")) }
                }
            }
        }
        #expect(Set(BeacondError.Code.allCases.map(\.name)).count == BeacondError.Code.allCases.count)
        #expect(Beacond.Manager1.getRangedBeacons.outputs.first?.type.signature == "aa{sv}")
    }
}
