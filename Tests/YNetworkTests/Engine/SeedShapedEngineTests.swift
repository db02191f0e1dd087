import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing
import YNetwork

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An engine written to Y-Network's protocol: `configure`, `submit` and the two delegate-driven
/// transfers, nothing else. Its transfers come from the protocol's defaults.
private final class SeedShapedEngine: NetworkEngine, @unchecked Sendable {
    // @unchecked: `submitted` is behind `lock`.
    private let lock = NSLock()
    private var submitted: [URLRequest] = []
    private let transport: any HTTPTransportProtocol

    init(transport: any HTTPTransportProtocol) { self.transport = transport }

    var requests: [URLRequest] { lock.withLock { submitted } }

    func configure(with configuration: NetworkEngineConfiguration) {}

    func submit(_ request: URLRequest) async throws -> (Data, URLResponse) {
        lock.withLock { submitted.append(request) }
        return try await transport.data(for: request)
    }

    func submitBackgroundDownload(_ request: URLRequest) throws -> Cancelable { throw NetworkError.noData }

    func submitBackgroundUpload(_ request: URLRequest, fileUrl: URL) throws -> Cancelable { throw NetworkError.noData }
}

private struct FileRequest: NetworkRequest {
    var path: PathRepresentable
    var method: HttpMethod = .GET
}

/// Records what a session delegate is told about its tasks.
private final class RecordingDelegate: NSObject, URLSessionDownloadDelegate, URLSessionDataDelegate, Sendable {
    let downloaded = Locked<Data?>(nil)
    let received = Locked(Data())
    let completions = Locked<[String]>([])
    let finished = AsyncStream<Void>.makeStream()

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        downloaded.withLock { $0 = try? Data(contentsOf: location) }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        received.withLock { $0.append(data) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        completions.withLock { $0.append(error.map { "\($0)" } ?? "ok: \(task.taskDescription ?? "")") }
        finished.continuation.yield()
    }
}

@Suite("NetworkEngine in Y-Network's shape: seed engines work, and the delegate-driven transfers run")
struct SeedShapedEngineTests {
    @Test("A seed-shaped engine carries NetworkManager's downloads and uploads through submit (the defaults)")
    func seedEngineTransfers() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let payload = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        server.route("GET", "/file") { _ in LoopbackResponse(status: 200, body: payload) }
        server.route("POST", "/upload") { request in
            LoopbackResponse(status: 200, body: Data("got \(request.body.count)".utf8))
        }
        let engine = SeedShapedEngine(transport: DefaultTransport.make())
        let manager = NetworkManager()
        manager.configure(
            with: NetworkManagerConfiguration(basePath: server.baseURL.absoluteString, networkEngine: engine))

        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("seed-engine-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: copy) }
        let downloaded: Result<URL, any Error> = await waitFor { done in
            manager.submitBackgroundDownload(FileRequest(path: "file")) { result in
                if case .success(let url) = result { try? FileManager.default.copyItem(at: url, to: copy) }
                done(result)
            }
        }
        _ = try downloaded.get()
        #expect(try Data(contentsOf: copy) == payload)

        let file = try makePatternFile(size: 50_000)
        defer { try? FileManager.default.removeItem(at: file) }
        let uploaded: Result<Data, any Error> = await waitFor { done in
            manager.submitBackgroundUpload(FileRequest(path: "upload", method: .POST), fromFile: file) { done($0) }
        }
        #expect(String(decoding: try uploaded.get(), as: UTF8.self) == "got 50000")
        #expect(server.requests(path: "/upload").first?.body == (try Data(contentsOf: file)))
        #expect(engine.requests.map { $0.url?.path } == ["/file", "/upload"], "both went through the engine's submit")

        // A request left at its default method (GET) uploads as a POST, as through
        // URLNetworkEngine: every transport refuses a GET with a body (it was .invalidRequest).
        server.clearRecordedRequests()
        let defaultMethod: Result<Data, any Error> = await waitFor { done in
            manager.submitBackgroundUpload(FileRequest(path: "upload"), fromFile: file) { done($0) }
        }
        #expect(String(decoding: try defaultMethod.get(), as: UTF8.self) == "got 50000")
        #expect(server.requests(path: "/upload").map(\.method) == ["POST"])
    }

    @Test(
        "A seed-shaped engine's default upload refuses /dev/zero at once (it read until memory ran out); nothing is sent"
    )
    func seedEngineUploadOfADevice() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let engine = SeedShapedEngine(transport: DefaultTransport.make())
        let request = URLRequest(url: server.url("/upload"))
        let started = ContinuousClock.now
        await #expect {
            _ = try await engine.upload(request, fromFile: URL(fileURLWithPath: "/dev/zero"), progress: nil)
        } throws: { error in
            (error as? TransportError)?.code == .invalidRequest
        }
        #expect(ContinuousClock.now - started < .seconds(60))  // /dev/zero never ends
        #expect(engine.requests.isEmpty)
        #expect(server.receivedRequests.isEmpty)
    }

    @Test("URLNetworkEngine.submitBackgroundDownload/Upload run on the delegate session and report to the delegate")
    func delegateDrivenTransfers() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let payload = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        server.route("GET", "/file") { _ in LoopbackResponse(status: 200, body: payload) }
        server.route("PUT", "/upload") { request in
            LoopbackResponse(status: 201, body: Data("\(request.body.count)".utf8))
        }
        let delegate = RecordingDelegate()
        let engine = URLNetworkEngine()
        engine.configure(with: NetworkEngineConfiguration(sessionDelegate: delegate))
        var iterator = delegate.finished.stream.makeAsyncIterator()

        var download = URLRequest(url: server.url("/file"))
        download.setValue("Bearer secret-token", forHTTPHeaderField: "Authorization")
        let task = try engine.submitBackgroundDownload(download)
        #expect(task is URLSessionDownloadTask)
        _ = await iterator.next()
        #expect(delegate.downloaded.current == payload)
        let description = try #require(delegate.completions.current.first)
        #expect(description.hasPrefix("ok: "), "\(description)")
        #expect(!description.contains("secret-token"), "the task description is redacted")

        let file = try makePatternFile(size: 30_000)
        defer { try? FileManager.default.removeItem(at: file) }
        var upload = URLRequest(url: server.url("/upload"))
        upload.httpMethod = "PUT"
        try engine.submitBackgroundUpload(upload, fileUrl: file)
        _ = await iterator.next()
        #expect(delegate.received.current == Data("30000".utf8))
        #expect(server.requests(path: "/upload").first?.body == (try Data(contentsOf: file)))
        #expect(server.requests(path: "/file").count == 1)
    }

    @Test("Without a delegate session, or with a transport given, they throw notConfigured and send nothing")
    func notConfigured() throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let request = URLRequest(url: server.url("/file"))
        let unconfigured = URLNetworkEngine()
        #expect(throws: NetworkError.notConfigured) { try unconfigured.submitBackgroundDownload(request) }
        let delegate = RecordingDelegate()
        let withTransport = URLNetworkEngine(transport: DefaultTransport.make())
        withTransport.configure(with: NetworkEngineConfiguration(sessionDelegate: delegate))
        #expect(throws: NetworkError.notConfigured) {
            try withTransport.submitBackgroundUpload(request, fileUrl: URL(fileURLWithPath: "/dev/null"))
        }
        #expect(throws: NetworkError.notConfigured) {
            try URLProtocolStubNetworkEngine().submitBackgroundDownload(request)
        }
        #expect(server.receivedRequests.isEmpty)
    }

    @Test("A header name with CR/LF, or a non-HTTP URL, is refused before a delegate-driven task is made")
    func validated() throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let delegate = RecordingDelegate()
        let engine = URLNetworkEngine()
        engine.configure(with: NetworkEngineConfiguration(sessionDelegate: delegate))
        var request = URLRequest(url: server.url("/file"))
        request.setValue("1", forHTTPHeaderField: "X-Note\r\nX-Injected")
        #expect(throws: TransportError.self) { try engine.submitBackgroundDownload(request) }
        let ftp = URLRequest(url: try #require(URL(string: "ftp://127.0.0.1:\(server.port)/file")))
        #expect(throws: TransportError.self) {
            try engine.submitBackgroundUpload(ftp, fileUrl: URL(fileURLWithPath: "/dev/null"))
        }
        #expect(server.receivedRequests.isEmpty)
    }
}

@Suite("NetworkManager is an NSObject and a URLSession delegate, as in Y-Network")
struct NetworkManagerDelegateTests {
    @Test("A manager passed as its own session delegate sends through the delegate session, and tasks end")
    func managerAsDelegate() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/users") { _ in LoopbackResponse(status: 200, body: Data(#"["ada"]"#.utf8)) }
        server.route("GET", "/file") { _ in LoopbackResponse(status: 200, body: Data(count: 10_000)) }
        let manager = NetworkManager()
        let object: NSObject = manager
        #expect(object is URLSessionDelegate)
        let engine = URLNetworkEngine()
        manager.configure(
            with: NetworkManagerConfiguration(
                basePath: server.baseURL.absoluteString, sessionDelegate: manager, networkEngine: engine))
        let users: [String] = try await manager.submit(FileRequest(path: "users"))
        #expect(users == ["ada"])

        let task = try engine.submitBackgroundDownload(URLRequest(url: server.url("/file")))
        let download = try #require(task as? URLSessionDownloadTask)
        let deadline = Date().addingTimeInterval(200)  // loose for a starved run
        while download.state != .completed, Date() < deadline { try await Task.sleep(nanoseconds: 20_000_000) }
        #expect(download.state == .completed)
        #expect(download.error == nil)
        #expect(server.requests(path: "/users").count == 1)
        #expect(server.requests(path: "/file").count == 1)
    }

    @Test("A subclass overrides the delegate callbacks, as Y-Network's spies do, and its session calls them")
    func subclassOverridesCallbacks() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let payload = Data((0..<60_000).map { UInt8(truncatingIfNeeded: $0 &* 5) })
        server.route("GET", "/file") { _ in LoopbackResponse(status: 200, body: payload) }
        server.route("PUT", "/upload") { request in
            LoopbackResponse(status: 201, body: Data("stored \(request.body.count)".utf8))
        }
        let spy = CallbackSpy()
        let engine = URLNetworkEngine()
        spy.configure(with: NetworkManagerConfiguration(sessionDelegate: spy, networkEngine: engine))
        var completions = spy.completed.stream.makeAsyncIterator()

        try engine.submitBackgroundDownload(URLRequest(url: server.url("/file")))
        _ = await completions.next()
        #expect(spy.downloaded.current == payload)
        #expect(spy.totalWritten.current == Int64(payload.count))

        let file = try makePatternFile(size: 20_000)
        defer { try? FileManager.default.removeItem(at: file) }
        var upload = URLRequest(url: server.url("/upload"))
        upload.httpMethod = "PUT"
        try engine.submitBackgroundUpload(upload, fileUrl: file)
        _ = await completions.next()
        #expect(spy.totalSent.current == 20_000)
        #expect(spy.received.current == Data("stored 20000".utf8))
        #expect(spy.calls.values.filter { $0 == "complete" }.count == 2)
    }
}

/// A subclass in the style of Y-Network's download and upload spies: it overrides the delegate
/// callbacks, calls `super`, and records what it saw.
private final class CallbackSpy: NetworkManager, @unchecked Sendable {
    let calls = Recorder<String>()
    let downloaded = Locked<Data?>(nil)
    let totalWritten = Locked<Int64>(0)
    let totalSent = Locked<Int64>(0)
    let received = Locked(Data())
    let completed = AsyncStream<Void>.makeStream()

    override func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL
    ) {
        super.urlSession(session, downloadTask: downloadTask, didFinishDownloadingTo: location)
        calls.append("finish")
        downloaded.withLock { $0 = try? Data(contentsOf: location) }
    }

    override func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
        totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64
    ) {
        super.urlSession(
            session, downloadTask: downloadTask, didWriteData: bytesWritten, totalBytesWritten: totalBytesWritten,
            totalBytesExpectedToWrite: totalBytesExpectedToWrite)
        totalWritten.withLock { $0 = totalBytesWritten }
    }

    override func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        super.urlSession(
            session, task: task, didSendBodyData: bytesSent, totalBytesSent: totalBytesSent,
            totalBytesExpectedToSend: totalBytesExpectedToSend)
        totalSent.withLock { $0 = totalBytesSent }
    }

    override func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        super.urlSession(session, dataTask: dataTask, didReceive: data)
        received.withLock { $0.append(data) }
    }

    override func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        super.urlSession(session, task: task, didCompleteWithError: error)
        calls.append("complete")
        completed.continuation.yield()
    }
}
