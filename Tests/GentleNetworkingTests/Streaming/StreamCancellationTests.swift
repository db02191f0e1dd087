import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Cancelling while an error response's body is still arriving is a cancellation: the status
/// error (a 503 a caller's own logic retries) or a token refresh (for a 401) is for a caller
/// still waiting.
@Suite("Cancelled while an error body arrives")
struct StreamCancellationTests {
    /// Sends `head` and part of its body, then holds the connection open.
    private static func heldServer(_ head: String) throws -> HostileServer {
        let server = try HostileServer()
        server.route("/held", .rawThenHold(Data((head + "\r\nContent-Length: 1000\r\n\r\npartial").utf8)))
        return server
    }

    /// Runs `body` in a task cancelled 300 ms after `sent` holds, and returns what it threw.
    private static func cancelled(
        once sent: () -> Bool, _ body: @escaping @Sendable () async throws -> Void
    ) async -> (any Error)? {
        let task = Task {
            do {
                try await body()
                return nil as (any Error)?
            } catch {
                return error
            }
        }
        // Once the request is on the wire (up to 200 s for a starved run), and a moment more.
        let deadline = Date().addingTimeInterval(200)
        while !sent(), Date() < deadline { try? await Task.sleep(nanoseconds: 10_000_000) }
        try? await Task.sleep(nanoseconds: 300_000_000)
        task.cancel()
        return await task.value
    }

    @Test(
        "A streamed 503 whose body is held open: CancellationError, not the status error", arguments: TransportKind.all)
    func serviceStream(kind: TransportKind) async throws {
        let server = try Self.heldServer("HTTP/1.1 503 Service Unavailable")
        defer { server.shutdown() }
        let service = HTTPNetworkService(transport: try kind.make(), authService: InMemoryAuthService())
        let environment = DefaultAPIEnvironment(baseURL: server.baseURL)
        let error = await Self.cancelled(once: { !server.requests(path: "/held").isEmpty }) {
            _ = try await service.stream(to: Endpoint(path: "/held", method: .get), via: environment)
        }
        #expect(error is CancellationError, "\(String(describing: error))")
    }

    @Test("A streamed 401 whose body is held open: CancellationError, and no refresh", arguments: TransportKind.all)
    func reauthStream(kind: TransportKind) async throws {
        let server = try Self.heldServer("HTTP/1.1 401 Unauthorized")
        defer { server.shutdown() }
        let auth = InMemoryAuthService(token: "t0")
        let reauth = ReauthTransport(
            inner: try kind.make(), authService: auth, refreshToken: { try await auth.saveAccessToken("t1") })
        let request = try await auth.authorize(URLRequest(url: server.url("/held")))
        let error = await Self.cancelled(once: { !server.requests(path: "/held").isEmpty }) {
            _ = try await reauth.stream(for: request)
        }
        #expect(error is CancellationError, "\(String(describing: error))")
        #expect(reauth.refreshCount == 0)
        #expect(server.requests(path: "/held").count == 1)
    }
}
