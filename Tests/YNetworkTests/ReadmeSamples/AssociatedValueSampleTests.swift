// The Y-Network README's "Using associated values in paths" samples (seed 004), compiled as
// written, with these deviations:
// - The README declares `enum MyApiEndpoints` but extends `MockApiEndpoints` (a typo); the
//   typealias below makes the extension compile unchanged.
// - `MyApiEndpoints` is `private`, because the relative-path sample declares another one.
import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing
import YNetwork

private typealias MockApiEndpoints = MyApiEndpoints

private enum MyApiEndpoints {
    case users
    case user(id: String)
}

extension MockApiEndpoints: PathRepresentable {
    var pathValue: String {
        switch self {
        case .users:
            return "users"
        case .user(let id):
            return "users/\(id)"
        }
    }
}

struct GetUserRequest {
    /// Id of the user to fetch
    let userId: String
}

extension GetUserRequest: MyApiRequest {
    // which endpoint to hit
    var path: PathRepresentable { MyApiEndpoints.user(id: userId) }
}

@Suite("Y-Network README: associated values in paths")
struct AssociatedValueSampleTests {
    @Test("GetUserRequest(userId:) hits users/<id> under the base path, on the wire")
    func associatedValuePathRuns() async throws {
        #expect(MyApiEndpoints.users.pathValue == "users")
        let url = try URLBuilder().url(for: GetUserRequest(userId: "42"), configuration: nil)
        #expect(url.absoluteString == "https://myendpoint.com/api/v1/users/42")

        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/api/v1/users/42") { _ in .json(#"{"id":42,"name":"Ada"}"#) }
        let manager = NetworkManager()
        manager.configure(
            with: NetworkManagerConfiguration(
                networkEngine: URLNetworkEngine(transport: LoopbackRedirectingTransport(server: server))))
        let user: User = try await manager.submit(GetUserRequest(userId: "42"))
        #expect(user == User(id: 42, name: "Ada"))
        #expect(server.receivedRequests.map(\.target) == ["/api/v1/users/42"])
    }
}
