import Foundation
import GentleNetworkingTesting

@testable import GentleNetworking

/// A loopback API with token rotation: `GET /data` wants the current token, `POST /auth/refresh`
/// issues the next one. The server counts refreshes itself, so tests assert on the wire.
final class AuthAPI: Sendable {
    let server: LoopbackServer
    let acceptedToken: Locked<String>
    /// With `keepsToken`: whether the server-side session of the token is alive.
    let sessionAlive = Locked(false)
    private let issued = Locked(1)

    /// - Parameters:
    ///   - refreshDelay: How long `/auth/refresh` takes.
    ///   - refreshStatus: The status `/auth/refresh` answers with (200 rotates the token).
    ///   - acceptsAnyToken: `false` makes `/data` reject every token, to provoke refresh loops.
    ///   - refreshAfterDataRequests: `/auth/refresh` answers only once `/data` has been asked this
    ///     many times (at most 120 s), then after `refreshDelay`: so every concurrent request's
    ///     401 arrives while the refresh is running, however slowly the tests run (ThreadSanitizer
    ///     on a loaded machine).
    ///   - keepsToken: `true` makes the server renew a session instead of rotating tokens: `/data`
    ///     accepts `t1` while ``sessionAlive`` (initially not, see ``expireSession()``), and
    ///     `/auth/refresh` revives the session and answers `t1` again.
    init(
        refreshDelay: TimeInterval = 0, refreshStatus: Int = 200, acceptsAnyToken: Bool = true,
        refreshAfterDataRequests: Int = 0, keepsToken: Bool = false
    ) throws {
        let server = try LoopbackServer()
        let acceptedToken = Locked("t1")
        let issued = self.issued
        let sessionAlive = self.sessionAlive
        self.server = server
        self.acceptedToken = acceptedToken
        server.route("GET", "/data") { request in
            guard acceptsAnyToken, request.bearerToken == acceptedToken.current, !keepsToken || sessionAlive.current
            else {
                return .json(#"{"error":"token expired"}"#, status: 401)
            }
            return .json(#"{"id":1,"property":"\#(request.bearerToken ?? "")"}"#)
        }
        server.route("POST", "/auth/refresh") { [weak server] _ in
            // Each connection has a thread of its own: waiting here holds this one only. (Weak: the
            // server keeps this route.)
            let deadline = Date().addingTimeInterval(120)
            while let server, server.requests(path: "/data").count < refreshAfterDataRequests, Date() < deadline {
                Thread.sleep(forTimeInterval: 0.01)
            }
            guard refreshStatus == 200 else {
                return LoopbackResponse.json(#"{"error":"refresh denied"}"#, status: refreshStatus).with {
                    $0.delayBeforeHeaders = refreshDelay
                }
            }
            let token = issued.withLock { count -> String in
                if keepsToken { return "t1" }
                count += 1
                return "t\(count)"
            }
            sessionAlive.withLock { $0 = true }
            acceptedToken.withLock { $0 = token }
            return LoopbackResponse.json(#"{"token":"\#(token)"}"#).with { $0.delayBeforeHeaders = refreshDelay }
        }
    }

    /// Ends the server-side session (with `keepsToken`): `/data` answers 401 until a refresh.
    func expireSession() { sessionAlive.withLock { $0 = false } }

    var refreshCount: Int { server.requests(path: "/auth/refresh").count }
    var dataRequests: [LoopbackRequest] { server.requests(path: "/data") }
    var environment: DefaultAPIEnvironment { DefaultAPIEnvironment(baseURL: server.baseURL) }

    /// The refresh closure an app would write: call the refresh endpoint, save the new token.
    func refreshClosure(saving auth: any AuthServiceProtocol, session: URLSession) -> @Sendable () async throws -> Void
    {
        let environment = self.environment
        return {
            struct TokenResponse: Decodable { let token: String }
            let plain = HTTPNetworkService(
                transport: URLSessionTransport(session: session), authService: InMemoryAuthService())
            let response: TokenResponse = try await plain.request(
                to: Endpoint(path: "/auth/refresh", method: .post), via: environment)
            try await auth.saveAccessToken(response.token)
        }
    }
}
