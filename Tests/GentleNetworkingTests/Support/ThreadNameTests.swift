import Foundation
import Testing

@testable import GentleNetworking

/// Every thread the library starts carries a name of its own. The fault table tells
/// libdispatch's pool workers from the threads a case owns by name, and an unnamed thread takes
/// its creator's name (a pool worker's, `oot.default-qos`, when started from a task), so a leaked
/// unnamed thread would pass for a pool worker.
@Suite("Thread names")
struct ThreadNameTests {
    @Test("A thread started from a pool worker carries its own name, not the worker's")
    func startedThreadIsNamed() async throws {
        let name: String = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                ThreadName.start("gentle.probe") {
                    let comm = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "?"
                    continuation.resume(returning: comm.trimmingCharacters(in: .whitespacesAndNewlines))
                }
            }
        }
        #expect(name == "gentle.probe")
    }

    @Test("The library starts threads only through ThreadName.start")
    func everyThreadIsStartedNamed() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        var offenders: [String] = []
        var files = 0
        for module in ["GentleNetworking", "JustNetworking", "YNetwork"] {
            let directory = root.appendingPathComponent("Sources/\(module)")
            let enumerator = try #require(FileManager.default.enumerator(atPath: directory.path))
            for case let path as String in enumerator where path.hasSuffix(".swift") {
                files += 1
                guard !path.hasSuffix("ThreadName.swift") else { continue }
                let text = try String(contentsOf: directory.appendingPathComponent(path), encoding: .utf8)
                for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
                where line.contains("Thread {") || line.contains("Thread(block") || line.contains("pthread_create") {
                    offenders.append("\(module)/\(path):\(number + 1): \(line.trimmingCharacters(in: .whitespaces))")
                }
            }
        }
        #expect(files > 100)
        #expect(offenders == [])
    }
}
