import Foundation
import GentleNetworkingTesting
import Testing

@testable import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A download that cannot be written (a full disk) fails the same way whether the body went
/// through libcurl's file sink or through memory: a `CocoaError` naming the destination, with
/// the `POSIXError` beneath, and no file left. Before, `CurlTransport.download` threw
/// `TransportError(.other)` with an errno in its message, a download through memory a
/// `CocoaError`, and Y-Network's default engine download `MultipartError.cannotWrite`.
///
/// The paths: `CurlTransport.download`, a download through memory, and Y-Network's default
/// engine download (an engine that implements only `submit`).
///
/// The disk is "full" in a `gentle-probe` child whose file size is limited (`RLIMIT_FSIZE`: a
/// write past it fails with `EFBIG`), so nothing else in the test run is affected.
@Suite("Downloads: a full disk is the same CocoaError on every path", .serialized)
struct DownloadDiskFullTests {
    struct ProbeOutcome: Decodable {
        let outcome: String
        let cocoaCode: Int?
        let path: String?
        let underlyingErrno: Int32?
        let description: String?
    }

    static func probe(_ path: String, _ url: URL, destination: String, maxFileBytes: Int) async throws -> ProbeOutcome {
        let data = try await runProbe(["download-fsize", path, url.absoluteString, destination, String(maxFileBytes)])
        return try JSONDecoder().decode(ProbeOutcome.self, from: data)
    }

    /// What `gentle-probe` with `arguments` prints, once it exited with 0 (killed after 60 s).
    static func runProbe(_ arguments: [String]) async throws -> Data {
        let executable = try SizeLimitMemoryTests.probePath()
        return try await offCooperativePool {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            let output = Pipe()
            process.standardOutput = output
            try ProcessLauncher.run(process)
            let killer = DispatchWorkItem { if process.isRunning { process.terminate() } }
            DispatchQueue.global().asyncAfter(deadline: .now() + 60, execute: killer)
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            killer.cancel()
            guard process.terminationReason == .exit, process.terminationStatus == 0 else {
                throw TransportError(.other, url: nil, message: "gentle-probe ended with \(process.terminationStatus)")
            }
            return data
        }
    }

    @Test(
        "A write past the file size limit: the same CocoaError through libcurl's file sink, memory and a Y-Network engine"
    )
    func sameErrorOnEveryPath() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let body = Data(repeating: 0x5A, count: 1 << 20)
        server.route("GET", "/file") { _ in LoopbackResponse(status: 200, body: body) }
        let scratch = try makeScratchDirectory("download-disk-full")
        defer { try? FileManager.default.removeItem(at: scratch) }
        var outcomes: [String: ProbeOutcome] = [:]
        for path in ["curl", "memory", "engine"] {
            let destination = scratch.appendingPathComponent("download-\(path)").path
            let outcome = try await Self.probe(
                path, server.url("/file"), destination: destination, maxFileBytes: 64 * 1024)
            outcomes[path] = outcome
            #expect(outcome.outcome == "cocoaError", "\(path): \(outcome)")
            #expect(outcome.path == destination, "\(path): \(outcome)")
            #expect(outcome.underlyingErrno == EFBIG, "\(path): \(outcome)")
        }
        #expect(outcomes["curl"]?.cocoaCode == outcomes["memory"]?.cocoaCode)
        #expect(outcomes["engine"]?.cocoaCode == outcomes["memory"]?.cocoaCode)
        #expect(outcomes["curl"]?.cocoaCode == CocoaError.fileWriteUnknown.rawValue)
        // No partial file left beside the destinations.
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path).isEmpty)
        // Below the limit, both paths write the file.
        for path in ["curl", "memory", "engine"] {
            let destination = scratch.appendingPathComponent("small-\(path)").path
            let outcome = try await Self.probe(
                path, server.url("/file"), destination: destination, maxFileBytes: 4 << 20)
            #expect(outcome.outcome == "success", "\(path): \(outcome)")
            #expect(FileManager.default.contents(atPath: destination) == body)
        }
    }
}
