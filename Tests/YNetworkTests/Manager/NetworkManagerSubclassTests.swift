import Foundation
import GentleNetworkingTesting
import Testing
import YNetwork

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

private struct Fetch: NetworkRequest {
    var path: PathRepresentable = "users"
    var headers: HttpHeaders? = nil
    var responseType: ResponseContentType = .JSON
}

private struct Upload: MultipartRequest {
    var path: PathRepresentable { "upload" }
    var multipart: MultipartBuilder { MultipartForm(parts: ["note": .formField(value: "hi")], boundary: "sub-b") }
}

/// A subclass in the style of Y-Network's test spies: it overrides `open` members, keeps
/// mutable state (behind a lock) and restates the inherited `@unchecked Sendable`.
private final class TaggingManager: NetworkManager, @unchecked Sendable {
    let calls = Recorder<String>()

    override func submit<Response: Decodable>(_ request: NetworkRequest) async throws -> Response {
        calls.append("submit")
        var tagged = Fetch(path: request.path, responseType: request.responseType)
        tagged.headers = (request.headers ?? [:]).merging(["X-Subclass": "tagged"]) { $1 }
        return try await super.submit(tagged)
    }

    @discardableResult
    override func submitBackgroundDownload(
        _ request: NetworkRequest, progress: ProgressHandler? = nil, completionHandler: @escaping FileDownloadHandler
    ) -> Cancelable? {
        calls.append("download")
        return super.submitBackgroundDownload(request, progress: progress, completionHandler: completionHandler)
    }

    @discardableResult
    override func submitBackgroundUpload(
        _ request: NetworkRequest, progress: ProgressHandler? = nil, completionHandler: FileUploadHandler? = nil
    ) -> Cancelable? {
        calls.append("upload")
        return super.submitBackgroundUpload(request, progress: progress, completionHandler: completionHandler)
    }
}

@Suite("NetworkManager subclasses: open members, the configuration property, Y-Network's call shapes")
struct NetworkManagerSubclassTests {
    private func makeSubclass(server: LoopbackServer) -> TaggingManager {
        let manager = TaggingManager()
        manager.configure(with: NetworkManagerConfiguration(basePath: server.baseURL.absoluteString))
        return manager
    }

    @Test("An overridden submit changes what the server receives; the completion variant goes through it")
    func overriddenSubmit() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/users") { _ in .json(#"{"id":1,"name":"Ada"}"#) }
        let manager = makeSubclass(server: server)

        let user: User = try await manager.submit(Fetch())
        let viaCompletion: Result<User, any Error> = await waitFor { done in
            manager.submit(Fetch(), completion: done)
        }

        #expect(user == User(id: 1, name: "Ada"))
        #expect(try viaCompletion.get() == user)
        #expect(server.requests(path: "/users").map { $0.header("X-Subclass") } == ["tagged", "tagged"])
        #expect(manager.calls.values == ["submit", "submit"])
    }

    @Test("Overridden transfers run, with Y-Network's trailing-closure shapes, and reach the server")
    func overriddenTransfers() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/file") { _ in .text("file body") }
        server.route("POST", "/upload") { _ in .text("Success") }
        let manager = makeSubclass(server: server)
        let progress = Recorder<Double>()

        let downloaded: Data? = await waitFor { done in
            manager.submitBackgroundDownload(Fetch(path: "file", responseType: .binary)) { percent in
                progress.append(percent)
            } completionHandler: { result in
                done(try? result.flatMap { url in Result { try Data(contentsOf: url) } }.get())
            }
        }
        let uploadProgress = Recorder<Double>()
        let uploaded: Data = await waitFor { done in
            manager.submitBackgroundUpload(Upload(), progress: { uploadProgress.append($0) }, completionHandler: done)
        }
        let progressOnly: Void = await waitFor { done in
            _ = manager.submitBackgroundUpload(Upload()) { percent in
                if percent == 1 { done(()) }
            }
        }

        #expect(downloaded == Data("file body".utf8))
        #expect(progress.values.last == 1)
        #expect(uploaded == Data("Success".utf8))
        #expect(uploadProgress.values.last == 1)
        _ = progressOnly
        #expect(manager.calls.values == ["download", "upload", "upload"])
        #expect(server.requests(path: "/upload").count == 2)
    }

    @Test("configuration reads as Y-Network declares it: implicitly unwrapped, never nil")
    func configurationProperty() {
        let manager = NetworkManager()
        #expect(manager.configuration?.networkEngine is URLNetworkEngine)
        #expect(manager.configuration.basePath == nil)
        let engine = URLProtocolStubNetworkEngine()
        manager.configure(with: NetworkManagerConfiguration(basePath: "https://api.example.com", networkEngine: engine))
        #expect(manager.configuration?.networkEngine as? URLProtocolStubNetworkEngine === engine)
        #expect(manager.configuration.basePath?.pathValue == "https://api.example.com")
    }
}

private final class Delegate: NSObject, URLSessionDelegate {}

@Suite("Configurations: sessionDelegate is settable and held weakly, as in Y-Network")
struct SessionDelegatePropertyTests {
    @Test("Setting sessionDelegate on either configuration keeps it weakly")
    func settable() {
        var configuration = NetworkManagerConfiguration()
        var engineConfiguration = NetworkEngineConfiguration()
        var delegate: Delegate? = Delegate()
        configuration.sessionDelegate = delegate
        engineConfiguration.sessionDelegate = delegate
        #expect(configuration.sessionDelegate === delegate)
        #expect(engineConfiguration.sessionDelegate === delegate)
        #expect(configuration.engineConfiguration.sessionDelegate === delegate)
        delegate = nil
        #expect(configuration.sessionDelegate == nil)
        #expect(engineConfiguration.sessionDelegate == nil)
    }
}
