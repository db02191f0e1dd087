import Foundation
import GentleNetworkingTesting
import Testing
import YNetwork

@testable import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A download's destination is checked the same way on every download path, before anything is
/// sent: a directory given as the destination, or a destination whose directory does not exist,
/// is `TransportError(.invalidRequest)`, and the directory and what it holds are left alone.
/// Before, Y-Network's engines deleted such a directory with everything in it (and then wrote
/// the file there), `CurlTransport` transferred the whole body and failed at the rename with
/// `.other`, and a download through memory sent the request and failed with a `CocoaError`.
@Suite("Download destinations: one check on every path, before anything is sent", .serialized)
struct DownloadDestinationTests {
    /// Every way a download can be made, each against `server`.
    enum Path: String, CaseIterable, CustomStringConvertible {
        case curl, throughMemory, engineWithCurl, engineThroughMemory, submitOnlyEngine, stubEngine

        var description: String { rawValue }

        func download(_ request: URLRequest, to destination: URL) async throws {
            switch self {
            case .curl:
                _ = try await CurlTransport().download(for: request, to: destination)
            case .throughMemory:
                _ = try await URLSessionTransport().downloadThroughMemory(for: request, to: destination, progress: nil)
            case .engineWithCurl:
                _ = try await URLNetworkEngine().download(request, to: destination, progress: nil)
            case .engineThroughMemory:
                let engine = URLNetworkEngine(transport: RetryTransport(inner: URLSessionTransport()))
                _ = try await engine.download(request, to: destination, progress: nil)
            case .submitOnlyEngine:
                _ = try await TransportEngine(transport: CurlTransport()).download(
                    request, to: destination, progress: nil)
            case .stubEngine:
                let engine = URLProtocolStubNetworkEngine(protocolClasses: [])
                engine.configure(with: NetworkEngineConfiguration())
                _ = try await engine.download(request, to: destination, progress: nil)
            }
        }
    }

    private static func isInvalidRequest(_ error: any Error, mentioning text: String) -> Bool {
        guard let error = error as? TransportError else { return false }
        return error.code == .invalidRequest && error.message.contains(text)
    }

    @Test(
        "A directory as the destination: .invalidRequest, nothing sent, the directory kept whole",
        arguments: Path.allCases)
    func directory(path: Path) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/file") { _ in .text("replacement") }
        let scratch = try makeScratchDirectory("download-destination")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let documents = scratch.appendingPathComponent("Documents")
        try FileManager.default.createDirectory(at: documents, withIntermediateDirectories: false)
        try Data("keep".utf8).write(to: documents.appendingPathComponent("keep.txt"))

        await #expect {
            try await path.download(URLRequest(url: server.url("/file")), to: documents)
        } throws: { Self.isInvalidRequest($0, mentioning: "is a directory") }
        #expect(server.receivedRequests.isEmpty)
        // Before: gone, with keep.txt, on the Y-Network engines' defaults.
        #expect(try String(contentsOf: documents.appendingPathComponent("keep.txt"), encoding: .utf8) == "keep")
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path) == ["Documents"])
    }

    @Test("A destination in a missing directory: .invalidRequest, nothing sent", arguments: Path.allCases)
    func missingDirectory(path: Path) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/file") { _ in .text("body") }
        let scratch = try makeScratchDirectory("download-destination")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let destination = scratch.appendingPathComponent("missing/body.txt")

        await #expect {
            try await path.download(URLRequest(url: server.url("/file")), to: destination)
        } throws: { Self.isInvalidRequest($0, mentioning: "does not exist") }
        #expect(server.receivedRequests.isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path).isEmpty)
    }

    @Test(
        "An existing file is replaced by the download (the old one is not removed beforehand)", arguments: Path.allCases
    )
    func existingFileReplaced(path: Path) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/file") { _ in .text("new body") }
        let scratch = try makeScratchDirectory("download-destination")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let destination = scratch.appendingPathComponent("body.txt")
        try Data("old body".utf8).write(to: destination)

        try await path.download(URLRequest(url: server.url("/file")), to: destination)
        #expect(try String(contentsOf: destination, encoding: .utf8) == "new body")
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path) == ["body.txt"])
    }

    @Test(
        "A symbolic link to a directory as the destination: the link is replaced, the directory kept",
        arguments: Path.allCases)
    func linkToDirectory(path: Path) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/file") { _ in .text("new body") }
        let scratch = try makeScratchDirectory("download-destination")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let documents = scratch.appendingPathComponent("Documents")
        try FileManager.default.createDirectory(at: documents, withIntermediateDirectories: false)
        try Data("keep".utf8).write(to: documents.appendingPathComponent("keep.txt"))
        let link = scratch.appendingPathComponent("latest")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: documents)

        try await path.download(URLRequest(url: server.url("/file")), to: link)
        #expect(try String(contentsOf: link, encoding: .utf8) == "new body")
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: link.path)) == nil, "now a file")
        #expect(try String(contentsOf: documents.appendingPathComponent("keep.txt"), encoding: .utf8) == "keep")
    }

    @Test("submitBackgroundUpload: /dev/zero and a FIFO are .invalidRequest at once; nothing is sent")
    func delegateUploadNotRegular() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route(nil, "/up") { _ in .text("ok") }
        let scratch = try makeScratchDirectory("upload-source")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let fifo = scratch.appendingPathComponent("pipe")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        // The configuration holds its delegate weakly, as Y-Network's does.
        let delegate = QuietDelegate()
        let engine = URLNetworkEngine()
        engine.configure(with: NetworkEngineConfiguration(sessionDelegate: delegate))
        var request = URLRequest(url: server.url("/up"))
        request.httpMethod = "PUT"
        // The delegate session is there: a regular file goes out.
        let regular = scratch.appendingPathComponent("body.txt")
        try Data("body".utf8).write(to: regular)
        try engine.submitBackgroundUpload(request, fileUrl: regular)
        try await waitUntil { server.receivedRequests.count == 1 }
        #expect(server.receivedRequests.first?.bodyText == "body")
        server.clearRecordedRequests()
        for file in [URL(fileURLWithPath: "/dev/zero"), fifo] {
            // Before: handed to the delegate session with a length of 0.
            #expect("\(file.path)") {
                try engine.submitBackgroundUpload(request, fileUrl: file)
            } throws: { Self.isInvalidRequest($0, mentioning: "not a regular file") }
        }
        #expect(server.receivedRequests.isEmpty)
        withExtendedLifetime(delegate) {}
    }
}

/// A session delegate that does nothing (the engine's delegate session needs one).
private final class QuietDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {}

/// A Y-Network engine that implements only `configure` and `submit` (over a transport), so its
/// download takes the protocol's default (the body through memory).
private struct TransportEngine: NetworkEngine {
    let transport: any HTTPTransportProtocol

    func configure(with configuration: NetworkEngineConfiguration) {}

    func submit(_ request: URLRequest) async throws -> (Data, URLResponse) {
        let (data, response) = try await transport.data(for: request)
        return (data, response)
    }
}
