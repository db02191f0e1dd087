import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing

@testable import YNetwork

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

private struct Transfer: NetworkRequest {
    var path: PathRepresentable
    var method: HttpMethod = .GET
    var body: BodyBuilder? = nil
    var requestType: RequestContentType = .binary
}

private struct BigUpload: MultipartRequest {
    var path: PathRepresentable { "multipart" }
    var method: HttpMethod { .PUT }
    let multipart: MultipartBuilder
}

/// `Authorization: Bearer <token>`; a refresh sets the token to `fresh` (without a request).
private final class SwappingSession: SessionManager, Sendable {
    let token = Locked("expired")
    let refreshes = Locked(0)

    func apply(_ request: inout URLRequest) {
        request.setValue("Bearer \(token.current)", forHTTPHeaderField: "Authorization")
    }

    func refresh(networkManager: NetworkManager) async -> Bool {
        refreshes.withLock { $0 += 1 }
        token.withLock { $0 = "fresh" }
        return true
    }
}

private func download(_ manager: NetworkManager, _ path: String) async -> Result<Data, any Error> {
    await withCheckedContinuation { continuation in
        manager.submitBackgroundDownload(Transfer(path: path)) { result in
            continuation.resume(returning: result.flatMap { url in Result { try Data(contentsOf: url) } })
        }
    }
}

/// A retrying stack over libcurl: `RetryTransport(inner: CurlTransport())`, no backoff.
private func retryingCurl() throws -> RetryTransport {
    RetryTransport(inner: try CurlTransport(), policy: RetryPolicy(maxRetries: 2, baseDelay: 0, maxDelay: 0))
}

@Suite("Transfers go through the configured engine's transport stack: retries, refresh, pins")
struct TransferStackTests {
    @Test(
        "Over RetryTransport(inner: CurlTransport()), a download, an upload and an 11 MiB multipart upload are retried after a 503"
    )
    func retried() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/file", handler: LoopbackServer.sequence([.status(503), .text("payload")]))
        server.route("PUT", "/blob", handler: LoopbackServer.sequence([.status(503), .text("stored")]))
        server.route(
            "PUT", "/multipart", handler: LoopbackServer.sequence([.status(503), .json(#"{"id":1,"name":"big"}"#)]))
        let manager = makeManager(server: server, transport: try retryingCurl())

        #expect(try await download(manager, "file").get() == Data("payload".utf8))
        #expect(server.requests(path: "/file").count == 2)

        let source = try makePatternFile(size: 1 << 20)
        defer { try? FileManager.default.removeItem(at: source) }
        let uploaded: Result<Data, any Error> = await withCheckedContinuation { continuation in
            manager.submitBackgroundUpload(Transfer(path: "blob", method: .PUT), fromFile: source) {
                continuation.resume(returning: $0)
            }
        }
        #expect(try uploaded.get() == Data("stored".utf8))
        let blobs = server.requests(path: "/blob")
        #expect(blobs.count == 2)
        #expect(try blobs.allSatisfy { $0.body == (try Data(contentsOf: source)) })

        let big = try makePatternFile(size: 11 << 20)
        defer { try? FileManager.default.removeItem(at: big) }
        let form = MultipartForm(
            parts: ["file": .file(info: MultipartFileInfo(fileName: "f", fileURL: big, mimeType: "x/y"))],
            boundary: "stack")
        let user: User = try await manager.submit(BigUpload(multipart: form))
        #expect(user == User(id: 1, name: "big"))
        let parts = server.requests(path: "/multipart")
        #expect(parts.count == 2)
        #expect(parts.allSatisfy { parseMultipart($0.body, boundary: "stack")?.first?.body.count == 11 << 20 })
    }

    @Test(
        "With a SessionManager over the stack, a download answered 401 then 200 refreshes once; the retry has the new token"
    )
    func refreshed() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route(
            "GET", "/me",
            handler: LoopbackServer.sequence([.json(#"{"error":"expired"}"#, status: 401), .text("mine")]))
        let session = SwappingSession()
        let manager = makeManager(server: server, transport: try retryingCurl(), sessionManager: session)

        #expect(try await download(manager, "me").get() == Data("mine".utf8))
        #expect(session.refreshes.current == 1)
        #expect(server.requests(path: "/me").map(\.bearerToken) == ["expired", "fresh"])
    }

    @Test(
        "Over a PinningTransport whose pin does not match the server's key, a download fails with the pin error and writes no file"
    )
    func pinned() async throws {
        let pki = try SelfSignedCertificate()
        defer { pki.remove() }
        let nginx = try NginxServer(
            files: ["file.txt": Data("secret payload".utf8)],
            tls: NginxServer.TLS(certificatePath: pki.certificatePath, keyPath: pki.keyPath), serverName: "localhost")
        defer { nginx.stop() }
        let base = "https://localhost:\(nginx.port)"
        func manager(pinning hashes: Set<Data>) -> NetworkManager {
            let manager = NetworkManager()
            let transport = PinningTransport(pinnedDomains: [
                "localhost": PublicKeyPinningEvaluator(pinnedKeyHashes: hashes, performDefaultValidation: false)
            ])
            manager.configure(
                with: NetworkManagerConfiguration(basePath: base, networkEngine: URLNetworkEngine(transport: transport))
            )
            return manager
        }

        // The right pin connects: the setup is sound, so the failure below is the pin's.
        let matching = try CertificatePinning.publicKeyHash(ofCertificatePEM: pki.certificatePEM())
        #expect(try await download(manager(pinning: [matching]), "file.txt").get() == Data("secret payload".utf8))
        #expect(await nginx.accessLog(atLeast: 1).count == 1)

        let foreign = Data(repeating: 0xA5, count: 32)
        let failed = await download(manager(pinning: [foreign]), "file.txt")
        guard case .failure(let error) = failed, case .invalidSSL(let cause) = error as? YNetwork.NetworkError else {
            Issue.record("expected NetworkError.invalidSSL, got \(failed)")
            return
        }
        #expect((cause as? TransportError)?.code == .pinMismatch, "\(cause)")
        #expect(nginx.accessLog.count == 1, "no request reached nginx: \(nginx.accessLog)")

        // The engine itself, with a destination we can look at: nothing is written.
        let destination = FileManager.default.temporaryDirectory
            .appendingPathComponent("ynetwork-pinned-\(UUID().uuidString)")
        let engine = URLNetworkEngine(
            transport: PinningTransport(pinnedDomains: [
                "localhost": PublicKeyPinningEvaluator(pinnedKeyHashes: [foreign], performDefaultValidation: false)
            ]))
        let url = try #require(URL(string: base + "/file.txt"))
        await #expect {
            _ = try await engine.download(URLRequest(url: url), to: destination, progress: nil)
        } throws: { error in
            (error as? TransportError)?.code == .pinMismatch
        }
        #expect(!FileManager.default.fileExists(atPath: destination.path))
        #expect(nginx.accessLog.count == 1)
    }
}

/// A self-signed P-256 certificate for `localhost`, made with the openssl command-line tool.
private struct SelfSignedCertificate {
    let directory: URL
    var certificatePath: String { directory.appendingPathComponent("cert.pem").path }
    var keyPath: String { directory.appendingPathComponent("key.pem").path }

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ynetwork-pki-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", keyPath, "-out", certificatePath, "-days", "2", "-subj", "/CN=localhost",
            "-addext", "subjectAltName=DNS:localhost",
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try ProcessLauncher.run(process)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw CocoaError(.fileWriteUnknown)
        }
    }

    func certificatePEM() throws -> String {
        try String(contentsOfFile: certificatePath, encoding: .utf8)
    }

    func remove() {
        try? FileManager.default.removeItem(at: directory)
    }
}

@Suite("NetworkManagerConfiguration.maxDownloadBytes: a download to a file stops at the limit on every engine path")
struct DownloadLimitTests {
    @Test(
        "4 MiB of 200 against a 1 MiB limit: responseTooLarge; without a limit or under it, the whole body",
        arguments: ["curl", "pinning", "throughMemory"])
    func limited(path: String) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let body = Data(repeating: 0x42, count: 4 << 20)
        server.route("GET", "/big") { _ in LoopbackResponse(status: 200, body: body) }
        func manager(limit: Int64?) throws -> NetworkManager {
            let transport: any HTTPTransportProtocol =
                switch path {
                case "curl": try CurlTransport()
                case "pinning": PinningTransport(pinnedDomains: [:])
                default: try retryingCurl()  // not a file-transfer transport: through memory
                }
            var configuration = NetworkManagerConfiguration(
                basePath: server.baseURL.absoluteString, networkEngine: URLNetworkEngine(transport: transport))
            configuration.maxDownloadBytes = limit
            let manager = NetworkManager()
            manager.configure(with: configuration)
            return manager
        }
        let failed = await download(try manager(limit: 1 << 20), "big")
        guard case .failure(let error) = failed else {
            Issue.record("\(path): a 4 MiB body passed a 1 MiB limit")
            return
        }
        #expect((error as? TransportError)?.code == .responseTooLarge, "\(path): \(error)")
        #expect(try await download(try manager(limit: nil), "big").get() == body)
        #expect(try await download(try manager(limit: 8 << 20), "big").get() == body)
    }
}

@Suite("Y-Network transfers keep their temporary files in a directory of their own")
struct PrivateTemporaryFileTests {
    @Test("A file of the transfer's own: in a new 0700 directory, removed with it; a file elsewhere is removed alone")
    func privateDirectory() throws {
        let first = try PrivateTemporaryFile.url(named: "download")
        let second = try PrivateTemporaryFile.url(named: "download")
        let directory = first.deletingLastPathComponent()
        #expect(directory != second.deletingLastPathComponent())
        #expect(
            directory.deletingLastPathComponent().standardizedFileURL
                == FileManager.default.temporaryDirectory.standardizedFileURL)
        var info = stat()
        #expect(lstat(directory.path, &info) == 0 && info.st_mode & 0o777 == 0o700 && info.st_uid == geteuid())
        // Another user could not have put anything at the file's name: the directory is new.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
        try Data("x".utf8).write(to: first)
        PrivateTemporaryFile.remove(first)
        PrivateTemporaryFile.remove(second)
        #expect(!FileManager.default.fileExists(atPath: directory.path))
        #expect(!FileManager.default.fileExists(atPath: second.deletingLastPathComponent().path))
        let outside = FileManager.default.temporaryDirectory.appendingPathComponent("yn-outside-\(UUID())")
        try Data("y".utf8).write(to: outside)
        PrivateTemporaryFile.remove(outside)
        #expect(!FileManager.default.fileExists(atPath: outside.path))
        #expect(FileManager.default.fileExists(atPath: FileManager.default.temporaryDirectory.path))
    }
}

/// A `URLNetworkEngine` subclass that counts its own download override's calls.
private final class CountingEngine: URLNetworkEngine, @unchecked Sendable {
    let downloads = Locked(0)

    override func download(
        _ request: URLRequest, to destination: URL, progress: (@Sendable (TransferProgress) -> Void)?
    ) async throws -> URLResponse {
        downloads.withLock { $0 += 1 }
        return try await super.download(request, to: destination, progress: progress)
    }
}

@Suite("Download limits keep engines' own overrides and never raise the memory limit")
struct DownloadLimitContractTests {
    @Test("Without maxDownloadBytes, a URLNetworkEngine subclass's download(_:to:progress:) override still runs")
    func subclassOverrideRuns() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/file") { _ in .text("payload") }
        let engine = CountingEngine(transport: try CurlTransport())
        let manager = NetworkManager()
        manager.configure(
            with: NetworkManagerConfiguration(basePath: server.baseURL.absoluteString, networkEngine: engine))
        #expect(try await download(manager, "file").get() == Data("payload".utf8))
        // Before: the manager called the new four-argument method, which the subclass does not
        // override, and its override was skipped.
        #expect(engine.downloads.current == 1)
    }

    @Test("A download limit above the transport's in-memory limit does not raise it on the through-memory path")
    func limitNeverRaisesMemoryLimit() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/big") { _ in LoopbackResponse(status: 200, body: Data(repeating: 0x41, count: 4 << 20)) }
        let transport = try CurlTransport(
            configuration: CurlTransport.Configuration(limits: ResponseLimits(maxBodyBytes: 1 << 20)))
        let destination = FileManager.default.temporaryDirectory.appendingPathComponent("yn-cap-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: destination) }
        // The whole body would be held in memory here: the 1 MiB memory limit holds, whatever
        // the 2 GiB download limit says (before: the 4 MiB body was accepted).
        await #expect {
            _ = try await transport.downloadThroughMemory(
                for: URLRequest(url: server.url("/big")), to: destination, maxBytes: 2 << 30, progress: nil)
        } throws: { error in
            (error as? TransportError)?.code == .responseTooLarge
        }
        #expect(!FileManager.default.fileExists(atPath: destination.path))
        // A limit below it still applies, on a transport whose own limit would let the body in.
        await #expect {
            _ = try await CurlTransport().downloadThroughMemory(
                for: URLRequest(url: server.url("/big")), to: destination, maxBytes: 1 << 20, progress: nil)
        } throws: { error in
            (error as? TransportError)?.code == .responseTooLarge
        }
    }
}
