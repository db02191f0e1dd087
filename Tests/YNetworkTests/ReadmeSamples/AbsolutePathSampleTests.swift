// The Y-Network README's first samples (seed 004: "NetworkManager", "NetworkRequest"), compiled
// as written, with these deviations, each needed for the code to compile at all:
// - `User` is not declared by the README; Support/Fixtures.swift declares it.
// - `let users = try await networkManager.submit(request)` cannot infer the generic result
//   type in any Swift version; it reads `let users: [User]`.
// - `// handle success` / `// handle failure` are replaced by recording the outcome (an unused
//   `users` would be a warning, and warnings are errors here).
// - `GetUsersRequest` is `private`, because the relative-path sample declares another one.
// The sample runs for real: its `https://myendpoint.com` requests go to the loopback server.
import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing
import YNetwork

// Declare an instance of the network manager, so that it can be injected where needed.
private let networkManager = NetworkManager()

private struct GetUsersRequest {}

extension GetUsersRequest: NetworkRequest {
    // which endpoint to hit
    var path: PathRepresentable { "https://myendpoint.com/api/v1/users" }
}

private let outcomes = Recorder<Result<[User], YNetworkSampleError>>()

private struct YNetworkSampleError: Error, Equatable {
    let text: String
}

private func fetchUsers() async {
    let request = GetUsersRequest()

    do {
        let users: [User] = try await networkManager.submit(request)
        outcomes.append(.success(users))
    } catch {
        outcomes.append(.failure(YNetworkSampleError(text: "\(error)")))
    }
}

@Suite("Y-Network README: NetworkManager and NetworkRequest samples")
struct AbsolutePathSampleTests {
    @Test("fetchUsers() as written: GET /api/v1/users, decoded")
    func fetchUsersRuns() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/api/v1/users") { _ in .json(#"[{"id":1,"name":"Ada"},{"id":2,"name":"Linus"}]"#) }
        // The README's manager is unconfigured; only the engine is pointed at the loopback server.
        networkManager.configure(
            with: NetworkManagerConfiguration(
                networkEngine: URLNetworkEngine(transport: LoopbackRedirectingTransport(server: server))))

        await fetchUsers()

        #expect(outcomes.values == [.success([User(id: 1, name: "Ada"), User(id: 2, name: "Linus")])])
        let received = try #require(server.receivedRequests.first)
        #expect(server.receivedRequests.count == 1)
        #expect(received.method == "GET")
        #expect(received.target == "/api/v1/users")
        #expect(received.header("Accept") != "application/json")
        #expect(received.header("Content-Type") == "application/json", "as Y-Network sets it on every request")
    }

    @Test("An unconfigured NetworkManager() sends an absolute-path request with no setup at all")
    func unconfiguredManagerWorks() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/ping") { _ in .json(#"{"id":7,"name":"pong"}"#) }
        struct Ping: NetworkRequest {
            let url: String
            var path: PathRepresentable { url }
        }
        let user: User = try await NetworkManager().submit(Ping(url: server.url("/ping").absoluteString))
        #expect(user == User(id: 7, name: "pong"))
        #expect(server.requests(path: "/ping").count == 1)
    }
}
