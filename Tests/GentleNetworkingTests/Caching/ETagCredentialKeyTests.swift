import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing

/// A route whose ETag names the resource version, the same for every caller, while the body is
/// per caller (identified by `identity`): what a server does that forgets to put the identity
/// in its ETag. It answers 304 to any matching `If-None-Match`.
private func perUserRoute(
    _ server: LoopbackServer, path: String, identity: @escaping @Sendable (LoopbackRequest) -> String?
) {
    server.route("GET", path) { request in
        let etag = "\"v1\""
        if request.header("If-None-Match") == etag {
            return LoopbackResponse.status(304).adding(header: "ETag", etag)
        }
        let user = identity(request) ?? "nobody"
        return LoopbackResponse.json(#"{"user":"\#(user)"}"#).adding(header: "ETag", etag)
    }
}

@Suite("ETagTransport keys on every credential")
struct ETagCredentialKeyTests {
    private func get(
        _ transport: ETagTransport, _ url: URL, header name: String, _ value: String
    ) async throws -> String {
        var request = URLRequest(url: url)
        request.setValue(value, forHTTPHeaderField: name)
        let (data, response) = try await transport.data(for: request)
        #expect(response.statusCode == 200)
        return String(decoding: data, as: UTF8.self)
    }

    private func checkTwoIdentities(
        header name: String, alice: String, bob: String, credentialHeaders: Set<String>? = nil,
        identity: @escaping @Sendable (LoopbackRequest) -> String?
    ) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        perUserRoute(server, path: "/me", identity: identity)
        let inner = URLSessionTransport(session: makeIsolatedSession())
        let transport =
            credentialHeaders.map { ETagTransport(inner: inner, credentialHeaders: $0) } ?? ETagTransport(inner: inner)
        let url = server.url("/me")

        #expect(try await get(transport, url, header: name, alice) == #"{"user":"alice"}"#)
        #expect(try await get(transport, url, header: name, alice) == #"{"user":"alice"}"#)
        let bobsFirst = try await get(transport, url, header: name, bob)
        #expect(bobsFirst == #"{"user":"bob"}"#, "bob must never get alice's body")
        #expect(try await get(transport, url, header: name, bob) == #"{"user":"bob"}"#)

        let seen = server.requests(path: "/me")
        #expect(seen.count == 4)
        guard seen.count == 4 else { return }
        #expect(seen[0].header("If-None-Match") == nil)
        #expect(seen[1].header("If-None-Match") == "\"v1\"", "alice revalidates her own entry")
        #expect(seen[2].header("If-None-Match") == nil, "bob's first request must not revalidate alice's entry")
        #expect(seen[3].header("If-None-Match") == "\"v1\"", "bob revalidates his own entry")
    }

    @Test("Two X-Api-Key values get separate entries on the wire")
    func apiKey() async throws {
        try await checkTwoIdentities(header: "X-Api-Key", alice: "key-alice", bob: "key-bob") { request in
            request.header("X-Api-Key").map { $0.replacingOccurrences(of: "key-", with: "") }
        }
    }

    @Test("Two Cookie values get separate entries on the wire")
    func cookie() async throws {
        try await checkTwoIdentities(header: "Cookie", alice: "sid=alice", bob: "sid=bob") { request in
            request.header("Cookie").map { $0.replacingOccurrences(of: "sid=", with: "") }
        }
    }

    @Test("Two Proxy-Authorization values get separate entries on the wire")
    func proxyAuthorization() async throws {
        try await checkTwoIdentities(header: "Proxy-Authorization", alice: "Basic alice", bob: "Basic bob") {
            request in
            request.header("Proxy-Authorization").map { $0.replacingOccurrences(of: "Basic ", with: "") }
        }
    }

    @Test("A header named like a credential on no list (GitLab's PRIVATE-TOKEN) is keyed without naming it")
    func namedLikeCredential() async throws {
        try await checkTwoIdentities(header: "PRIVATE-TOKEN", alice: "glpat-alice", bob: "glpat-bob") { request in
            request.header("PRIVATE-TOKEN").map { $0.replacingOccurrences(of: "glpat-", with: "") }
        }
        var request = URLRequest(url: URL(string: "https://h.example/x")!)
        request.setValue("cf-alice-0123456789", forHTTPHeaderField: "X-Auth-Key")
        let alice = ETagTransport.cacheKey(for: request)
        request.setValue("cf-bob-0123456789", forHTTPHeaderField: "X-Auth-Key")
        #expect(ETagTransport.cacheKey(for: request) != alice)
        #expect(!alice.contains("cf-alice"), "never the raw value")
    }

    @Test("A custom credential header given at init (any case) is keyed too")
    func customHeader() async throws {
        try await checkTwoIdentities(
            header: "X-Tenant-Secret", alice: "alice", bob: "bob", credentialHeaders: ["x-TENANT-secret"]
        ) { request in
            request.header("X-Tenant-Secret")
        }
    }

    @Test("The key hashes credentials: no raw value, independent of header case, stable, distinct per value")
    func keyShape() {
        let url = URL(string: "https://api.example.com/me")!
        var first = URLRequest(url: url)
        first.setValue("secret-key-1", forHTTPHeaderField: "X-Api-Key")
        first.setValue("sid=s1", forHTTPHeaderField: "Cookie")
        var second = URLRequest(url: url)
        second.setValue("sid=s1", forHTTPHeaderField: "cookie")
        second.setValue("secret-key-1", forHTTPHeaderField: "x-api-key")
        let key = ETagTransport.cacheKey(for: first)
        #expect(key == ETagTransport.cacheKey(for: second))
        #expect(!key.contains("secret-key-1") && !key.contains("s1"))
        var third = second
        third.setValue("secret-key-2", forHTTPHeaderField: "X-Api-Key")
        #expect(ETagTransport.cacheKey(for: third) != key)

        // An Authorization-only key keeps its earlier format, so stored entries stay valid.
        var bearer = URLRequest(url: url)
        bearer.setValue("Bearer t", forHTTPHeaderField: "Authorization")
        #expect(ETagTransport.cacheKey(for: bearer).hasSuffix("auth:" + SHA256Digest.hexHash("Bearer t")))
        #expect(ETagTransport.cacheKey(for: URLRequest(url: url)).hasSuffix(" anonymous"))

        // A header only an instance knows about changes only that instance's key.
        var custom = URLRequest(url: url)
        // (A name no list holds and not named like a secret: a `…-Secret` one is keyed anyway.)
        custom.setValue("tenant", forHTTPHeaderField: "X-Tenant")
        let transport = ETagTransport(inner: FailingTestTransport(), credentialHeaders: ["X-Tenant"])
        #expect(transport.cacheKey(for: custom) != transport.cacheKey(for: URLRequest(url: url)))
        #expect(ETagTransport.cacheKey(for: custom) == ETagTransport.cacheKey(for: URLRequest(url: url)))
        #expect(transport.credentialHeaders.isSuperset(of: ETagTransport.alwaysKeyedCredentialHeaders))
    }

    @Test("Vary: Cookie is stored only when the request carries its own Cookie")
    func varyCookie() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/v") { request in
            if request.header("If-None-Match") == "\"c\"" { return .status(304) }
            return LoopbackResponse.json("{}").adding(header: "ETag", "\"c\"").adding(header: "Vary", "Cookie")
        }
        let transport = ETagTransport(inner: URLSessionTransport(session: makeIsolatedSession()))
        _ = try await transport.data(for: URLRequest(url: server.url("/v")))
        _ = try await transport.data(for: URLRequest(url: server.url("/v")))
        var withCookie = URLRequest(url: server.url("/v"))
        withCookie.setValue("sid=1", forHTTPHeaderField: "Cookie")
        _ = try await transport.data(for: withCookie)
        _ = try await transport.data(for: withCookie)
        let seen = server.requests(path: "/v").map { $0.header("If-None-Match") }
        #expect(seen == [nil, nil, nil, "\"c\""], "no Cookie on the request: a Vary: Cookie response is not stored")
        #expect(ETagTransport.storableVaryHeaders.isSuperset(of: ["cookie", "x-api-key", "proxy-authorization"]))
        #expect(!ETagTransport.isStorable(["Vary": "Origin"]))
    }
}

/// A transport that is never called.
struct FailingTestTransport: HTTPTransportProtocol {
    func data(for request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        throw CancellationError()
    }
}
