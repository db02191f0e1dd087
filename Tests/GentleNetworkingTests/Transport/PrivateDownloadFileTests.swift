import Foundation
import GentleNetworkingTesting
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

/// A download's partial file is made anew, exclusively, on every hop of a redirect: reopened by
/// name, a file someone put at that name between hops (in a directory others can write to) was
/// truncated and written into, keeping its owner and mode, and then moved into place.
@Suite("CurlTransport downloads: the partial file is the download's own on every hop")
struct DownloadPartialFileTests {
    @Test("A file put at the partial file's name between two hops is not written into nor moved into place")
    func plantedBetweenHops() async throws {
        let directory = try makeScratchDirectory("download-hops")
        defer { try? FileManager.default.removeItem(at: directory) }
        let destination = directory.appendingPathComponent("body.json")
        let server = try LoopbackServer()
        defer { server.shutdown() }
        // The inode of the file planted while the second hop was being answered.
        let planted = Locked<UInt64?>(nil)
        server.route("GET", "/a") { _ in LoopbackResponse(status: 302, headers: [("Location", "/b")]) }
        server.route("GET", "/b") { _ in
            // What another user could do: move the partial file away, put one of theirs there
            // (readable by all).
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
            if let partial = names.first(where: { $0.contains(".tmp-") }) {
                let path = directory.appendingPathComponent(partial).path
                _ = rename(path, path + ".moved")
                let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o644)
                var info = stat()
                if descriptor >= 0, fstat(descriptor, &info) == 0 { planted.withLock { $0 = UInt64(info.st_ino) } }
                if descriptor >= 0 { close(descriptor) }
            }
            return .text("the body")
        }
        let transport = try CurlTransport()
        do {
            // The second hop's file is open before its answer comes (when the swap happens here):
            // the swap is seen before the rename, and nothing is moved into place.
            _ = try await transport.download(for: URLRequest(url: server.url("/a")), to: destination)
            #expect(try String(contentsOf: destination, encoding: .utf8) == "the body")
            #expect(permissionBits(destination) == 0o600)
        } catch let error as CocoaError {
            #expect(!FileManager.default.fileExists(atPath: destination.path), "\(error)")
        }
        let plantedInode = try #require(planted.current, "no partial file to swap during the second hop")
        var info = stat()
        // Before: the planted file (0644, empty) was moved into place as the download, and the
        // call succeeded.
        #expect(lstat(destination.path, &info) != 0 || UInt64(info.st_ino) != plantedInode)
    }
}
