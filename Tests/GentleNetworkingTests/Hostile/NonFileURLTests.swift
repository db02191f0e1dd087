import Foundation
import GentleNetworkingTesting
import Testing
import YNetwork

@testable import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A URL given where a file is expected that is not a `file:` URL (a careless caller passing a
/// CDN URL, or one built from user input) names a resource elsewhere: its path is never read or
/// written as a local one. Before, `https://cdn.example.com/<a local path>` uploaded the local
/// file at that path, and a download replaced it.
@Suite("A non-file URL given as a file: a typed error; nothing sent, read or written", .serialized)
struct NonFileURLTests {
    private static let secret = "TOP SECRET local file"

    /// A scratch directory holding a local file, and a remote URL with the same path.
    private struct Scratch {
        let directory: URL
        let local: URL
        let remote: URL

        init() throws {
            directory = try makeScratchDirectory("non-file-url")
            local = directory.appendingPathComponent("secret.txt")
            try Data(NonFileURLTests.secret.utf8).write(to: local)
            remote = try #require(URL(string: "https://cdn.example.invalid" + local.path))
        }

        /// The local file is as it was, and nothing else appeared beside it.
        func expectUntouched(sourceLocation: SourceLocation = #_sourceLocation) throws {
            #expect(
                try String(contentsOf: local, encoding: .utf8) == NonFileURLTests.secret, sourceLocation: sourceLocation
            )
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["secret.txt"],
                sourceLocation: sourceLocation)
        }
    }

    private static func isNotAFileURL(_ error: any Error) -> Bool {
        guard let error = error as? TransportError else { return false }
        return error.code == .invalidRequest && error.message.contains("is not a file URL")
    }

    @Test("upload: .invalidRequest before anything is read or sent", arguments: TransportKind.all)
    func upload(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route(nil, "/up") { request in .text("received \(request.body.count) bytes") }
        let scratch = try Scratch()
        defer { try? FileManager.default.removeItem(at: scratch.directory) }
        let transport = try kind.make()
        var request = URLRequest(url: server.url("/up"))
        request.httpMethod = "POST"
        await #expect {
            if let files = transport as? any FileTransferTransport {
                _ = try await files.upload(for: request, fromFile: scratch.remote, progress: nil)
            } else {
                _ = try await transport.uploadThroughMemory(for: request, fromFile: scratch.remote, progress: nil)
            }
        } throws: { Self.isNotAFileURL($0) }
        #expect(server.receivedRequests.isEmpty, "sent: \(server.receivedRequests.map(\.bodyText))")
        try scratch.expectUntouched()
    }

    @Test(
        "uploadThroughMemory (a decorated stack): /dev/zero and a FIFO are .invalidRequest at once, nothing sent",
        arguments: TransportKind.all)
    func throughMemoryNotRegular(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let directory = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fifo = directory.appendingPathComponent("pipe")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        // A decorator is not a FileTransferTransport: its uploads go through memory.
        let transport = RetryTransport(inner: try kind.make())
        var request = URLRequest(url: server.url("/up"))
        request.httpMethod = "POST"
        let upload = request
        for file in [URL(fileURLWithPath: "/dev/zero"), fifo] {
            // Before the fix, /dev/zero was read until memory ran out, and the FIFO held a thread
            // in open(2) for good (cancelling did not help: `outcome` reports a hang as one).
            let result = await outcome(within: 10) {
                let (_, response) = try await transport.uploadThroughMemory(for: upload, fromFile: file, progress: nil)
                return "\(response.statusCode)"
            }
            #expect(result.code == .invalidRequest, "\(file.path): \(result.description)")
        }
        #expect(server.receivedRequests.isEmpty)
    }

    @Test(
        "download: .invalidRequest before anything is sent; the local file at that path is kept",
        arguments: TransportKind.all)
    func download(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route(nil, "/down") { _ in .text("replacement") }
        let scratch = try Scratch()
        defer { try? FileManager.default.removeItem(at: scratch.directory) }
        let transport = try kind.make()
        let request = URLRequest(url: server.url("/down"))
        await #expect {
            if let files = transport as? any FileTransferTransport {
                _ = try await files.download(for: request, to: scratch.remote, progress: nil)
            } else {
                _ = try await transport.downloadThroughMemory(for: request, to: scratch.remote, progress: nil)
            }
        } throws: { Self.isNotAFileURL($0) }
        #expect(server.receivedRequests.isEmpty)
        try scratch.expectUntouched()
    }

    @Test(
        "Y-Network: an upload from a non-file URL fails in its handler; nothing is sent", arguments: TransportKind.all)
    func managerUpload(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route(nil, "/up") { _ in .text("ok") }
        let scratch = try Scratch()
        defer { try? FileManager.default.removeItem(at: scratch.directory) }
        let manager = NetworkManager()
        manager.configure(
            with: NetworkManagerConfiguration(
                basePath: server.baseURL.absoluteString,
                networkEngine: URLNetworkEngine(transport: try kind.make())))
        let result: Result<Data, any Error> = await withCheckedContinuation { continuation in
            manager.submitBackgroundUpload(UploadRequest(), fromFile: scratch.remote) {
                continuation.resume(returning: $0)
            }
        }
        #expect(throws: (any Error).self) { try result.get() }
        #expect(server.receivedRequests.isEmpty, "sent: \(server.receivedRequests.map(\.bodyText))")
        try scratch.expectUntouched()
    }

    @Test("Y-Network multipart: a file part with a non-file URL is unreadableFile; the local file is not read")
    func multipartFilePart() throws {
        let scratch = try Scratch()
        defer { try? FileManager.default.removeItem(at: scratch.directory) }
        let form = MultipartForm(
            parts: [
                "f": .file(info: MultipartFileInfo(fileName: "f.txt", fileURL: scratch.remote, mimeType: "text/plain"))
            ],
            boundary: "b")
        func isUnreadable(_ error: any Error) -> Bool {
            guard case MultipartError.unreadableFile(let url) = error else { return false }
            return url == scratch.remote
        }
        #expect(performing: { _ = try form.body(encoder: nil) }, throws: isUnreadable)
        #expect(performing: { _ = try form.contentLength() }, throws: isUnreadable)
        let output = scratch.directory.appendingPathComponent("body.bin")
        #expect(performing: { try form.writeBody(to: output) }, throws: isUnreadable)
        let written = (try? Data(contentsOf: output)) ?? Data()
        #expect(!String(decoding: written, as: UTF8.self).contains(Self.secret))
    }

    @Test("Y-Network multipart: writeBody to a non-file URL is cannotWrite; the local file is kept")
    func multipartDestination() throws {
        let scratch = try Scratch()
        defer { try? FileManager.default.removeItem(at: scratch.directory) }
        let form = MultipartForm(parts: ["a": .formField(value: "1")], boundary: "b")
        #expect {
            try form.writeBody(to: scratch.remote)
        } throws: { error in
            guard case MultipartError.cannotWrite(let url) = error else { return false }
            return url == scratch.remote
        }
        try scratch.expectUntouched()
    }

    @Test("HARRecorder.write to a non-file URL: CocoaError .fileWriteUnsupportedScheme; the local file is kept")
    func harDestination() throws {
        let scratch = try Scratch()
        defer { try? FileManager.default.removeItem(at: scratch.directory) }
        #expect {
            try HARRecorder().write(to: scratch.remote)
        } throws: { error in
            (error as? CocoaError)?.code == .fileWriteUnsupportedScheme
        }
        try scratch.expectUntouched()
    }
}

private struct UploadRequest: NetworkRequest {
    var path: PathRepresentable { "up" }
    var method: HttpMethod { .POST }
}
