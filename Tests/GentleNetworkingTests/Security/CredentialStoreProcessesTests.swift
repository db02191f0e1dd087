import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing

/// Two processes saving different keys into one credentials file at the same time both keep
/// theirs: every program using the default location shares the file, and each save reads,
/// changes and rewrites it whole.
@Suite("FileCredentialStore: saves from two processes at once")
struct CredentialStoreProcessesTests {
    @Test("Two gentle-probe children save 200 keys each into one directory: all 400 are there")
    func twoWriters() throws {
        let probe = try SizeLimitMemoryTests.probePath()
        let directory = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("store")
        let count = 200
        let writers = try ["a", "b"].map { prefix -> Process in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: probe)
            process.arguments = ["persist-writer", "credentials-keys", store.path, "\(count)", prefix]
            try ProcessLauncher.run(process)
            return process
        }
        for writer in writers {
            writer.waitUntilExit()
            #expect(writer.terminationStatus == 0)
        }
        let reader = FileCredentialStore(directory: store)
        var missing: [String] = []
        for prefix in ["a", "b"] {
            for index in 0..<count where try reader.value(for: "\(prefix)/k\(index)") != "v\(index)" {
                missing.append("\(prefix)/k\(index)")
            }
        }
        #expect(missing.isEmpty, "\(missing.count) keys lost, such as \(missing.prefix(5))")
    }
}
