import Foundation
import GentleNetworkingTesting
import Testing
import YNetwork

@testable import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A download to a file has no size limit, but only its 2xx body is the download: the body of an
/// error status or of a redirect that is not followed is held to the transport's in-memory limit.
/// Before, `CurlTransport.download` wrote a hostile server's endless 500 to the disk until it was
/// full (Y-Network's `NetworkManager` read back 1 MiB of it afterwards), the same on every path
/// that reaches the libcurl file sink.
@Suite("Downloads: an error body cannot fill the disk", .serialized)
struct DownloadErrorBodyTests {
    /// The ways a download reaches a transport, each held to `limit` for in-memory bodies.
    enum Path: String, CaseIterable, CustomStringConvertible {
        case curl, engineWithCurl, throughMemory

        var description: String { rawValue }

        func download(_ request: URLRequest, to destination: URL, limit: Int64) async throws {
            let limits = ResponseLimits(maxBodyBytes: limit)
            switch self {
            case .curl:
                let transport = try CurlTransport(configuration: CurlTransport.Configuration(limits: limits))
                _ = try await transport.download(for: request, to: destination)
            case .engineWithCurl:
                let transport = try CurlTransport(configuration: CurlTransport.Configuration(limits: limits))
                _ = try await URLNetworkEngine(transport: transport).download(request, to: destination, progress: nil)
            case .throughMemory:
                // The in-memory path (pinning, retries): held to the limit by `data(for:)` on every
                // transport; libcurl here, since corelibs' URLSession drains a cancelled endless
                // body in the background, holding back later URLSession requests of the process.
                let transport = try CurlTransport(configuration: CurlTransport.Configuration(limits: limits))
                _ = try await transport.downloadThroughMemory(for: request, to: destination, progress: nil)
            }
        }
    }

    /// Shuts `server` down once it has sent 256 MiB (a fixed client stops after about 1 MiB), so
    /// a regression fails with another error instead of filling the disk. Cancel it when done.
    private static func shutDownAfter256MiB(_ server: HostileServer) -> Task<Void, Never> {
        Task {
            while !Task.isCancelled, server.bytesSentCount < 256 << 20 {
                try? await Task.sleep(nanoseconds: 50_000_000)
            }
            if !Task.isCancelled { server.shutdown() }
        }
    }

    /// The error `operation` ends with, or `nil` if it succeeded; cancelled after `seconds` (an
    /// `Issue` is recorded then): without the limit, the download of an endless body never ends
    /// (it wrote 21 GB in a minute here; the partial file goes when the download is cancelled,
    /// so a regression holds at most one case's 30 s of writes on the disk).
    private static func failure(
        within seconds: Double, _ operation: @escaping @Sendable () async throws -> Void
    ) async -> (any Error)? {
        await withTaskGroup(of: (any Error)??.self) { group in
            group.addTask {
                do {
                    try await operation()
                    return .some(nil)
                } catch {
                    return .some(error)
                }
            }
            group.addTask {
                try? await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            guard let outcome = first else {
                Issue.record("still running after \(seconds) s")
                return nil
            }
            return outcome
        }
    }

    @Test(
        "An endless 500 or 302 body: .responseTooLarge at the limit, no file left, the connection closed",
        arguments: Path.allCases)
    func endlessErrorBody(path: Path) async throws {
        let scratch = try makeScratchDirectory("download-error-body")
        defer { try? FileManager.default.removeItem(at: scratch) }
        for status in [500, 302] {
            let server = try HostileServer()
            defer { server.shutdown() }
            server.route("/file", .endlessBody(chunked: status == 302, status: status))
            let destination = scratch.appendingPathComponent("download-\(status)")
            // Without the limit nothing ends the download: the server is shut down once it has
            // sent 256 MiB (the fixed client stops after about 1 MiB), so a regression fails
            // with another error instead of filling the disk; no wall-clock bound, since the
            // parallel runs stall the whole process for up to 65 s.
            let watchdog = Self.shutDownAfter256MiB(server)
            defer { watchdog.cancel() }
            let error = await Self.failure(within: 300) {
                try await path.download(URLRequest(url: server.url("/file")), to: destination, limit: 1 << 20)
            }
            #expect(
                (error as? TransportError)?.code == .responseTooLarge, "\(path) \(status): \(String(describing: error))"
            )
            // Nothing at the destination, no partial file beside it.
            #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path).isEmpty)
            try await waitUntil { server.clientHangUpCount >= 1 }
            #expect(server.bytesSentCount < 16 << 20, "\(path) \(status): \(server.bytesSentCount) bytes sent")
            server.shutdown()
        }
    }

    @Test(
        "A 2xx download given maxBytes, through PinningTransport or through memory: an endless 200 stops at the limit",
        arguments: ["pinning", "throughMemory"])
    func endlessSuccessWithLimit(way: String) async throws {
        let scratch = try makeScratchDirectory("download-limit")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let server = try HostileServer()
        defer { server.shutdown() }
        server.route("/file", .endlessBody(chunked: true))
        let destination = scratch.appendingPathComponent("download")
        // As above: without the limit the download would not end; the server stops at 256 MiB.
        let watchdog = Self.shutDownAfter256MiB(server)
        defer { watchdog.cancel() }
        let request = URLRequest(url: server.url("/file"))
        let error = await Self.failure(within: 300) {
            if way == "pinning" {
                // Before: PinningTransport had no way to pass a limit to the libcurl file sink.
                _ = try await PinningTransport(pinnedDomains: [:]).download(
                    for: request, to: destination, maxBytes: 1 << 20, progress: nil)
            } else {
                _ = try await CurlTransport().downloadThroughMemory(
                    for: request, to: destination, maxBytes: 1 << 20, progress: nil)
            }
        }
        #expect((error as? TransportError)?.code == .responseTooLarge, "\(way): \(String(describing: error))")
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path).isEmpty)
        #expect(server.bytesSentCount < 16 << 20, "\(way): \(server.bytesSentCount) bytes sent")
    }

    @Test("A 404 declaring a body above the limit fails before any of it is written", arguments: Path.allCases)
    func declaredErrorBody(path: Path) async throws {
        let scratch = try makeScratchDirectory("download-error-body")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let server = try HostileServer()
        defer { server.shutdown() }
        // The length is declared and the body never comes: only the check of the declared
        // length can fail it as too large (without it: .timedOut after the idle timeout).
        server.route("/file", .rawThenHold(Data("HTTP/1.1 404 Not Found\r\nContent-Length: 65536\r\n\r\n".utf8)))
        let destination = scratch.appendingPathComponent("download")
        var request = URLRequest(url: server.url("/file"))
        request.timeoutInterval = 30
        do {
            try await path.download(request, to: destination, limit: 1024)
            Issue.record("\(path): the 404 body was accepted")
        } catch let error as TransportError {
            #expect(error.code == .responseTooLarge, "\(path): \(error)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path).isEmpty)
    }

    @Test("A 2xx download is not held to the in-memory limit, and a small error body still arrives whole")
    func successUnlimited() async throws {
        let scratch = try makeScratchDirectory("download-error-body")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let server = try HostileServer()
        defer { server.shutdown() }
        let body = patternBytes(256 * 1024, multiplier: 1)
        server.route("/file", .ok(body: body))
        server.route("/missing", .status(404, body: Data("no such file".utf8)))
        let transport = try CurlTransport(
            configuration: CurlTransport.Configuration(limits: ResponseLimits(maxBodyBytes: 1024)))
        let destination = scratch.appendingPathComponent("download")
        let response = try await transport.download(for: URLRequest(url: server.url("/file")), to: destination)
        #expect(response.statusCode == 200)
        #expect(try Data(contentsOf: destination) == body)
        let missing = try await transport.download(for: URLRequest(url: server.url("/missing")), to: destination)
        #expect(missing.statusCode == 404)
        #expect(try Data(contentsOf: destination) == Data("no such file".utf8))
    }
}
