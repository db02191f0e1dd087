import Foundation
import Synchronization
import Testing
import YNetwork

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

private struct Trivia: Codable, Sendable, Equatable {
    let count: Int
    let category: String
}

private struct TriviaRequest: NetworkRequest {
    var path: PathRepresentable { "https://stubbed.example/api.php" }
}

private struct ImageDownload: NetworkRequest {
    var path: PathRepresentable { "https://stubbed.example/image.png" }
    var responseType: ResponseContentType { .binary }
}

private struct Upload: MultipartRequest {
    var path: PathRepresentable { "https://stubbed.example/upload" }
    var multipart: MultipartBuilder {
        MultipartForm(parts: ["note": .formField(value: "hi")], boundary: "stub-boundary")
    }
}

private struct Failure: Error, CustomNSError {
    static var errorDomain: String { "StubTests" }
    var errorCode: Int { -1200 }
}

/// The stub's queue is process-wide, so this suite runs its tests one at a time and no other
/// suite uses the stub.
@Suite("URLProtocolStub and URLProtocolStubNetworkEngine: canned results through a real URLSession", .serialized)
struct URLProtocolStubTests {
    init() {
        URLProtocolStub.reset()
    }

    private func configuredEngine() -> URLProtocolStubNetworkEngine {
        let engine = URLProtocolStubNetworkEngine()
        engine.configure(with: NetworkEngineConfiguration())
        return engine
    }

    private func stubbedManager() -> (NetworkManager, URLProtocolStubNetworkEngine) {
        let engine = URLProtocolStubNetworkEngine()
        let manager = NetworkManager()
        manager.configure(with: NetworkManagerConfiguration(networkEngine: engine))
        return (manager, engine)
    }

    @Test("The engine delivers a stubbed body and response, and takes it off the queue")
    func deliversData() async throws {
        let engine = configuredEngine()
        let body = Data("hello".utf8)
        let response = try #require(URLProtocolStub.makeHTTPURLResponse(statusCode: 200, expectedLength: body.count))
        URLProtocolStub.appendStub(.success((body, response)))
        #expect(URLProtocolStub.messages.count == 1)

        let (data, received) = try await engine.submit(URLRequest(url: try #require(URL(string: "https://x.test/a"))))

        #expect(data == body)
        #expect((received as? HTTPURLResponse)?.statusCode == 200)
        #expect((received as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Length") == "5")
        #expect(URLProtocolStub.messages.isEmpty)
    }

    @Test("Results are taken oldest first, whatever the URL")
    func fifo() async throws {
        let engine = configuredEngine()
        URLProtocolStub.appendStub(withData: Data("first".utf8), statusCode: 200)
        URLProtocolStub.appendStub(withData: Data("second".utf8), statusCode: 201)
        let url = try #require(URL(string: "https://x.test/same"))
        let first = try await engine.submit(URLRequest(url: url))
        let second = try await engine.submit(URLRequest(url: url))
        #expect(String(decoding: first.0, as: UTF8.self) == "first")
        #expect(String(decoding: second.0, as: UTF8.self) == "second")
        #expect((second.1 as? HTTPURLResponse)?.statusCode == 201)
    }

    @Test("An empty queue fails the request with invalidResponse; a stubbed error is delivered as it is")
    func failures() async throws {
        let engine = configuredEngine()
        let url = try #require(URL(string: "https://x.test/a"))
        await #expect(throws: (any Error).self) { _ = try await engine.submit(URLRequest(url: url)) }

        URLProtocolStub.appendStub(.failure(Failure()))
        do {
            _ = try await engine.submit(URLRequest(url: url))
            Issue.record("expected the stubbed error")
        } catch {
            #expect(error.code == -1200)
            #expect(error.domain == "StubTests")
        }
    }

    @Test("Unconfigured, the engine throws notConfigured; configured, its session has the protocol classes")
    func configuration() async throws {
        let engine = URLProtocolStubNetworkEngine()
        #expect(engine.session == nil)
        let url = try #require(URL(string: "https://x.test/a"))
        await #expect(throws: NetworkError.notConfigured) { _ = try await engine.submit(URLRequest(url: url)) }
        #expect(URLProtocolStubNetworkEngine(protocolClasses: []).protocolClasses.isEmpty)
        engine.configure(with: NetworkEngineConfiguration())
        #expect(engine.session?.configuration.protocolClasses?.count == 1)
        #expect(engine.protocolClasses.count == 1)
    }

    @Test("A JSON object stub decodes through NetworkManager; an invalid JSON object queues nothing")
    func jsonThroughManager() async throws {
        let (manager, _) = stubbedManager()
        URLProtocolStub.appendStub(withJSONObject: ["count": 2, "category": "science"], statusCode: 200)
        let trivia: Trivia = try await manager.submit(TriviaRequest())
        #expect(trivia == Trivia(count: 2, category: "science"))

        URLProtocolStub.appendStub(withJSONObject: Date(), statusCode: 200)
        #expect(URLProtocolStub.messages.isEmpty)
    }

    @Test("Stubbed statuses map as the manager maps them: 401 unauthenticated, 5xx HttpError with the body")
    func statuses() async throws {
        let (manager, _) = stubbedManager()
        URLProtocolStub.appendStub(withData: Data(), statusCode: 401)
        await #expect(throws: NetworkError.unauthenticated) {
            let _: Trivia = try await manager.submit(TriviaRequest())
        }
        URLProtocolStub.appendStub(withData: Data(#"{"error":"down"}"#.utf8), statusCode: 503)
        do {
            let _: Trivia = try await manager.submit(TriviaRequest())
            Issue.record("expected an HttpError")
        } catch let error as HttpError {
            #expect(error.statusCode == 503)
            #expect(error.data == Data(#"{"error":"down"}"#.utf8))
        }
    }

    @Test("A download stub lands in a file, byte for byte; progress ends at 1.0 on the main queue")
    func download() async throws {
        let (manager, _) = stubbedManager()
        let payload = Data((0..<1000).map { UInt8(truncatingIfNeeded: $0) })
        URLProtocolStub.appendStub(withData: payload, statusCode: 200, type: .download)
        let progress = Recorder<Double>()
        let received: Result<Data, any Error> = await waitFor { done in
            manager.submitBackgroundDownload(ImageDownload(), progress: { progress.append($0) }) { result in
                done(result.flatMap { url in Result { try Data(contentsOf: url) } })
            }
        }
        let got = try received.get()
        #expect(got.count == payload.count)
        #expect(got == payload)
        #expect(progress.values.last == 1)
    }

    @Test("A download stubbed 500 fails with HttpError, one stubbed 401 with unauthenticated")
    func downloadFailures() async throws {
        let (manager, _) = stubbedManager()
        URLProtocolStub.appendStub(
            .success((Data(), try #require(URLProtocolStub.makeHTTPURLResponse(statusCode: 500)))))
        let failed: Result<URL, any Error> = await waitFor { done in
            manager.submitBackgroundDownload(ImageDownload()) { done($0) }
        }
        #expect(throws: HttpError.self) { try failed.get() }
        URLProtocolStub.appendStub(withData: Data(), statusCode: 401, type: .download)
        let unauthorized: Result<URL, any Error> = await waitFor { done in
            manager.submitBackgroundDownload(ImageDownload()) { done($0) }
        }
        #expect(throws: NetworkError.unauthenticated) { try unauthorized.get() }
    }

    @Test(
        "A stubbed 401 refreshes a SessionManager and the request is sent again, as in Y-Network's session tests"
    )
    func stubbedRefresh() async throws {
        let engine = URLProtocolStubNetworkEngine()
        let session = CountingSession()
        let manager = NetworkManager()
        manager.configure(
            with: NetworkManagerConfiguration(basePath: "https://stubbed.example", networkEngine: engine),
            sessionManager: session)
        URLProtocolStub.appendStub(withData: Data(), statusCode: 401)
        URLProtocolStub.appendStub(withData: Data(#"{"count":3,"category":"x"}"#.utf8), statusCode: 200)
        // Before: the stub's placeholder URL (`https://any-url.com`) made the 401 look like
        // another origin's, so there was no refresh and the 200 stayed in the queue.
        let trivia: Trivia = try await manager.submit(TriviaRequest())
        #expect(trivia == Trivia(count: 3, category: "x"))
        #expect(session.refreshes.withLock { $0 } == 1)
        #expect(URLProtocolStub.messages.isEmpty)
    }

    @Test("An upload stub returns its body to the completion handler, progress ending at 1.0")
    func upload() async throws {
        let (manager, _) = stubbedManager()
        URLProtocolStub.appendStub(withData: Data("Success".utf8), statusCode: 200, type: .upload)
        let progress = Recorder<Double>()
        let data: Data = await waitFor { done in
            manager.submitBackgroundUpload(Upload(), progress: { progress.append($0) }, completionHandler: done)
        }
        #expect(data == Data("Success".utf8))
        #expect(progress.values.last == 1)
        #expect(URLProtocolStub.messages.isEmpty)
    }

    @Test("With autoResumesBackgroundTasks off a transfer waits, sends nothing, and cancelling it fails it")
    func heldTransferCancels() async throws {
        let (manager, engine) = stubbedManager()
        engine.autoResumesBackgroundTasks = false
        #expect(engine.autoResumesBackgroundTasks == false)
        URLProtocolStub.appendStub(withData: Data("x".utf8), statusCode: 200, type: .download)
        let result: Result<URL, any Error> = await waitFor { done in
            let handle = manager.submitBackgroundDownload(ImageDownload()) { done($0) }
            DispatchQueue.global().asyncAfter(deadline: .now() + 0.2) { handle?.cancel() }
        }
        #expect(throws: URLError(.cancelled)) { try result.get() }
        #expect(URLProtocolStub.messages.count == 1, "the held transfer must not have taken the stub")
    }

    @Test("Stubs can be queued from many tasks at once (Swift 6: no global-state error, no lost stub)")
    func concurrentAppends() async throws {
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<200 {
                group.addTask { URLProtocolStub.appendStub(withData: Data([UInt8(index % 256)]), statusCode: 200) }
            }
        }
        #expect(URLProtocolStub.messages.count == 200)
        URLProtocolStub.reset()
        #expect(URLProtocolStub.messages.isEmpty)
    }
}

/// Adds a bearer token and counts refreshes.
private final class CountingSession: SessionManager, Sendable {
    let refreshes = Mutex(0)

    func apply(_ request: inout URLRequest) {
        request.setValue("Bearer t", forHTTPHeaderField: "Authorization")
    }

    func refresh(networkManager: NetworkManager) async -> Bool {
        refreshes.withLock { $0 += 1 }
        return true
    }
}
