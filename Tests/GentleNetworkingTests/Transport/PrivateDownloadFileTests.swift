import Foundation
import Testing
import YNetwork

@testable import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A download written from memory (a transport that cannot stream to a file, such as a pinned
/// URLSession stack, or a Y-Network engine without file transfers) is the owner's alone from its
/// first byte, as ``CurlTransport`` writes one.
@Suite("Downloads written from memory: owner-only from the first byte, as libcurl's are")
struct PrivateDownloadFileTests {
    private static let payload = String(repeating: "private body ", count: 400)

    @Test("downloadThroughMemory: no file in the directory is ever open to group or others; the file is 0600")
    func throughMemory() async throws {
        let directory = try makeScratchDirectory("download")
        defer { try? FileManager.default.removeItem(at: directory) }
        let destination = directory.appendingPathComponent("body.json")
        let transport = ScriptedTransport([.status(200, body: Self.payload)])
        let request = URLRequest(url: try #require(URL(string: "https://api.example.com/file")))
        let watcher = FileModeWatcher(directory: directory)
        for _ in 0..<300 {
            _ = try await transport.downloadThroughMemory(for: request, to: destination, progress: nil)
        }
        let sightings = watcher.stop()
        #expect(sightings.count == 0, "modes seen: \(sightings)")
        #expect(permissionBits(destination) == 0o600)
        #expect(try String(contentsOf: destination, encoding: .utf8) == Self.payload)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["body.json"])
    }

    @Test("downloadThroughMemory into a missing directory: .invalidRequest before sending, nothing created")
    func missingDirectory() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("missing-\(UUID().uuidString)")
        let destination = directory.appendingPathComponent("body.json")
        let transport = ScriptedTransport([.status(200, body: "{}")])
        let request = URLRequest(url: try #require(URL(string: "https://api.example.com/file")))
        // As on every download path (DownloadDestinationTests); it was a CocoaError after the
        // request had been sent and its body received.
        await #expect {
            _ = try await transport.downloadThroughMemory(for: request, to: destination, progress: nil)
        } throws: { error in
            (error as? TransportError)?.code == .invalidRequest
        }
        #expect(transport.sent.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: directory.path))
    }

    @Test("A Y-Network engine's default download: no file in the directory is ever open to group or others")
    func engineDefaultDownload() async throws {
        let directory = try makeScratchDirectory("engine-download")
        defer { try? FileManager.default.removeItem(at: directory) }
        let destination = directory.appendingPathComponent("body.json")
        let engine = SubmitOnlyEngine(body: Data(Self.payload.utf8))
        let request = URLRequest(url: try #require(URL(string: "https://api.example.com/file")))
        let watcher = FileModeWatcher(directory: directory)
        for _ in 0..<300 {
            _ = try await engine.download(request, to: destination, progress: nil)
        }
        let sightings = watcher.stop()
        #expect(sightings.count == 0, "modes seen: \(sightings)")
        #expect(permissionBits(destination) == 0o600)
        #expect(try String(contentsOf: destination, encoding: .utf8) == Self.payload)
    }

    @Test(
        "Y-Network's multipart writeBody: the body file is never open to group or others; an existing one is narrowed")
    func multipartBodyFile() throws {
        let directory = try makeScratchDirectory("multipart-body")
        defer { try? FileManager.default.removeItem(at: directory) }
        let destination = directory.appendingPathComponent("body.bin")
        let form = MultipartForm(parts: ["note": .formField(value: Self.payload)], boundary: "b")
        let watcher = FileModeWatcher(directory: directory)
        for _ in 0..<300 {
            try? FileManager.default.removeItem(at: destination)
            try form.writeBody(to: destination)
        }
        let sightings = watcher.stop()
        #expect(sightings.count == 0, "modes seen: \(sightings)")
        #expect(permissionBits(destination) == 0o600)
        // A file already there, open to others, is narrowed before the body goes into it.
        try Data("old".utf8).write(to: destination)
        #expect(chmod(destination.path, 0o644) == 0)
        try form.writeBody(to: destination)
        #expect(permissionBits(destination) == 0o600)
        #expect(try Data(contentsOf: destination) == (try form.body(encoder: nil)))
    }
}

/// A Y-Network engine that implements only `submit`, so its transfers take the protocol's
/// defaults (the body through memory).
private struct SubmitOnlyEngine: NetworkEngine {
    let body: Data

    func configure(with configuration: NetworkEngineConfiguration) {}

    func submit(_ request: URLRequest) async throws -> (Data, URLResponse) {
        let url = request.url ?? URL(fileURLWithPath: "/")
        guard let response = HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: nil)
        else { throw URLError(.badServerResponse) }
        return (body, response)
    }
}
