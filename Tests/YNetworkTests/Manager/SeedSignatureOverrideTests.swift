import Foundation
import GentleNetworkingTesting
import Testing
import YNetwork

private struct Fetch: NetworkRequest {
    var path: PathRepresentable = "users"
}

/// Overrides written exactly as a Y-Network subclass writes them. That this file compiles is half
/// the test: before, `path(for:configuration:)` took an optional configuration and
/// `submit(_:completion:)` returned a handle, so neither override compiled.
private final class SeedStyleManager: NetworkManager, @unchecked Sendable {
    let calls = Recorder<String>()

    override func submit<Response: Decodable>(_ request: NetworkRequest, completion: @escaping APICompletion<Response>)
    {
        calls.append("submit(_:completion:)")
        super.submit(request, completion: completion)
    }
}

private final class SeedStyleBuilder: URLBuilder, @unchecked Sendable {
    override func path(for request: NetworkRequest, configuration: NetworkManagerConfiguration) throws -> String {
        try super.path(for: request, configuration: configuration) + "/v2"
    }

    override func url(for request: NetworkRequest, configuration: NetworkManagerConfiguration!) throws -> URL {
        try super.url(for: request, configuration: configuration)
    }
}

@Suite("Subclasses with Y-Network's exact signatures compile and are called")
struct SeedSignatureOverrideTests {
    @Test("submit(_:completion:) returning Void overrides ours; the request reaches the server once")
    func completionOverride() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/users") { _ in .json(#"{"id":1,"name":"Ada"}"#) }
        let manager = SeedStyleManager()
        manager.configure(with: NetworkManagerConfiguration(basePath: server.baseURL.absoluteString))
        let result: Result<User, any Error> = await withCheckedContinuation { continuation in
            manager.submit(Fetch()) { (result: Result<User, any Error>) in continuation.resume(returning: result) }
        }
        #expect(try result.get() == User(id: 1, name: "Ada"))
        #expect(manager.calls.values == ["submit(_:completion:)"])
        #expect(server.requests(path: "/users").count == 1)
    }

    @Test("path(for:configuration:) with a non-optional configuration overrides ours and builds the URL")
    func pathOverride() throws {
        let configuration = NetworkManagerConfiguration(basePath: "https://api.example.com")
        let url = try SeedStyleBuilder().url(for: Fetch(), configuration: configuration)
        #expect(url.absoluteString == "https://api.example.com/users/v2")
        // Without a configuration, only the request's own path can give a URL.
        #expect(throws: NetworkError.noBasePath) { try SeedStyleBuilder().url(for: Fetch(), configuration: nil) }
    }
}
