import Foundation
import GentleNetworkingTesting
import Testing

@testable import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `ReauthTransport` at two edges found by review: a body stream (which can be read once) and a
/// 401 that comes from another origin. Both on the wire, for every transport.
@Suite("ReauthTransport: a body stream after a refresh, a 401 from another origin", .serialized)
struct ReauthEdgeTests {
    @Test(
        "A POST with a body stream: after the refresh, the retry sends the body whole (it crashed the process)",
        arguments: TransportKind.all)
    func bodyStreamRetried(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route(
            "POST", "/upload",
            handler: LoopbackServer.sequence([LoopbackResponse(status: 401), LoopbackResponse.text("stored")]))
        let auth = InMemoryAuthService(token: "t0")
        let reauth = ReauthTransport(
            inner: try kind.make(), authService: auth, refreshToken: { try await auth.saveAccessToken("t1") })
        var request = URLRequest(url: server.url("/upload"))
        request.httpMethod = "POST"
        request.httpBodyStream = InputStream(data: Data("payload".utf8))
        let (body, response) = try await reauth.data(for: try await auth.authorize(request))
        #expect(response.statusCode == 200)
        #expect(body == Data("stored".utf8))
        let received = server.requests(path: "/upload")
        #expect(received.map(\.bodyText) == ["payload", "payload"])
        #expect(received.map { $0.header("Authorization") } == ["Bearer t0", "Bearer t1"])
        #expect(reauth.refreshCount == 1)
    }

    @Test("A body stream already read is a typed error, never a trap")
    func consumedStream() {
        let stream = InputStream(data: Data("x".utf8))
        stream.open()
        var buffer = [UInt8](repeating: 0, count: 8)
        _ = stream.read(&buffer, maxLength: buffer.count)
        stream.close()
        guard case .failure(let error) = RequestBodyStream.readAll(stream, limit: 1 << 20, url: nil) else {
            Issue.record("a closed stream read as a body")
            return
        }
        #expect(error.code == .invalidRequest)
        #expect(error.message.contains("already read"))
    }

    @Test(
        "A 401 from another origin after a redirect is returned as it is: no refresh, the loop guard kept",
        arguments: TransportKind.all)
    func foreign401(kind: TransportKind) async throws {
        let api = try LoopbackServer()
        defer { api.shutdown() }
        let other = try LoopbackServer()
        defer { other.shutdown() }
        let elsewhere = other.url("/x").absoluteString
        api.route("GET", "/go") { _ in LoopbackResponse(status: 302, headers: [("Location", elsewhere)]) }
        api.route(
            "GET", "/data",
            handler: LoopbackServer.sequence([LoopbackResponse(status: 401), LoopbackResponse.text("ok")]))
        other.route("GET", "/x") { _ in LoopbackResponse(status: 401) }
        let auth = InMemoryAuthService(token: "t0")
        let refreshes = Locked(0)
        let reauth = ReauthTransport(
            inner: try kind.make(), authService: auth,
            refreshToken: {
                refreshes.withLock { $0 += 1 }
                try await auth.saveAccessToken("t\(refreshes.current)")
            })
        for _ in 0..<4 {
            let (_, response) = try await reauth.data(for: try await auth.authorize(URLRequest(url: api.url("/go"))))
            #expect(response.statusCode == 401)
        }
        #expect(reauth.refreshCount == 0)
        #expect(other.receivedRequests.allSatisfy { $0.header("Authorization") == nil })
        // The API's own 401 still refreshes: the guard was not spent by the other host.
        let (body, response) = try await reauth.data(for: try await auth.authorize(URLRequest(url: api.url("/data"))))
        #expect(response.statusCode == 200)
        #expect(body == Data("ok".utf8))
        #expect(refreshes.current == 1)
    }
}
