// The Y-Network README's "Using relative paths" samples (seed 004), compiled as written, with
// these deviations:
// - `static var current` is `nonisolated(unsafe) static var current`: Swift 6 rejects a
//   mutable global without it (the README predates Swift 6; in Swift 5 mode it compiles as is).
// - `MyApiEndpoints` and `GetUsersRequest` are `private`, because other samples declare their own.
import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing
import YNetwork

enum MyApiBasePath: String, PathRepresentable {
    case prod = "https://myendpoint.com/api/v1"

    // In a real app you'd probably have additional development endpoints
    // such as dev, qa, uat, sandbox, etc.
}

extension MyApiBasePath {
    // convenience property to point to the current environment
    nonisolated(unsafe) static var current: MyApiBasePath = .prod
}

private enum MyApiEndpoints: String, PathRepresentable {
    case users
}

// You can declare a new protocol for each major endpoint your app supports
protocol MyApiRequest: NetworkRequest {}

extension MyApiRequest {
    // All requests sharing the same base path
    var basePath: PathRepresentable? { MyApiBasePath.current }
}

private struct GetUsersRequest {}

extension GetUsersRequest: MyApiRequest {
    // which endpoint to hit
    var path: PathRepresentable { MyApiEndpoints.users }
}

@Suite("Y-Network README: relative path samples")
struct RelativePathSampleTests {
    @Test("GetUsersRequest resolves to https://myendpoint.com/api/v1/users and runs on the wire")
    func relativePathRuns() async throws {
        let url = try URLBuilder().url(for: GetUsersRequest(), configuration: nil)
        #expect(url.absoluteString == "https://myendpoint.com/api/v1/users")

        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/api/v1/users") { _ in .json(#"[{"id":3,"name":"Grace"}]"#) }
        let manager = NetworkManager()
        manager.configure(
            with: NetworkManagerConfiguration(
                basePath: "https://ignored.example",
                networkEngine: URLNetworkEngine(
                    transport: LoopbackRedirectingTransport(server: server))))
        let users: [User] = try await manager.submit(GetUsersRequest())
        #expect(users == [User(id: 3, name: "Grace")])
        // The request's base path wins over the configuration's.
        #expect(server.receivedRequests.map(\.target) == ["/api/v1/users"])
    }
}
