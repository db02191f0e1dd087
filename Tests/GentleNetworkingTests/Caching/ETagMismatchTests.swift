import Foundation
import GentleNetworkingTesting
import Testing

@testable import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A 304 that names another representation (its `ETag` is not the one asked about) must not
/// update the entry (RFC 9111 §4.3.4). Used, it tied the old body to the new tag: every later
/// 304 for that tag, from an honest server, served the old body for good.
@Suite("ETagTransport: a 304 naming another ETag drops the entry and fetches the representation")
struct ETagMismatchTests {
    /// `/doc`: 200 `A` tagged `"v1"`, then one 304 tagged `"v2"` to `If-None-Match: "v1"`, then
    /// honest: 304 for `"v2"`, else 200 `B` tagged `"v2"`.
    private static func route(on server: LoopbackServer) {
        let hostileAnswered = Locked(false)
        server.route("GET", "/doc") { request in
            let condition = request.header("If-None-Match")
            if !hostileAnswered.withLock({ $0 }) {
                if condition == "\"v1\"" {
                    hostileAnswered.withLock { $0 = true }
                    return LoopbackResponse(status: 304, headers: [("ETag", "\"v2\"")])
                }
                return LoopbackResponse.text("A").adding(header: "ETag", "\"v1\"")
            }
            if condition == "\"v2\"" { return LoopbackResponse(status: 304, headers: [("ETag", "\"v2\"")]) }
            return LoopbackResponse.text("B").adding(header: "ETag", "\"v2\"")
        }
    }

    @Test("data(for:): the representation comes back, then honest 304s serve it", arguments: TransportKind.all)
    func dataPath(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        Self.route(on: server)
        let etag = ETagTransport(inner: try kind.make(), store: InMemoryETagStore())
        let request = URLRequest(url: server.url("/doc"))
        #expect(try await etag.data(for: request).0 == Data("A".utf8))
        // Before: "A" here and below, forever.
        #expect(try await etag.data(for: request).0 == Data("B".utf8))
        #expect(try await etag.data(for: request).0 == Data("B".utf8))
        #expect(
            server.requests(path: "/doc").map { $0.header("If-None-Match") } == [nil, "\"v1\"", nil, "\"v2\""])
    }

    @Test("Through the service (the deferred path): the same", arguments: TransportKind.all)
    func deferredPath(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        Self.route(on: server)
        let service = HTTPNetworkService(
            transport: ETagTransport(inner: try kind.make(), store: InMemoryETagStore()),
            authService: InMemoryAuthService())
        let environment = DefaultAPIEnvironment(baseURL: server.baseURL)
        let endpoint = Endpoint(path: "/doc", method: .get)
        #expect(try await service.requestData(to: endpoint, via: environment).data == Data("A".utf8))
        #expect(try await service.requestData(to: endpoint, via: environment).data == Data("B".utf8))
        #expect(try await service.requestData(to: endpoint, via: environment).data == Data("B".utf8))
        #expect(
            server.requests(path: "/doc").map { $0.header("If-None-Match") } == [nil, "\"v1\"", nil, "\"v2\""])
    }

    @Test("Weak and strong forms of one tag are the same representation; no tag names none")
    func comparison() {
        let cached = CachedResponse(
            body: Data(), statusCode: 200, headers: [:], url: nil, etag: "\"v1\"", storedAt: Date())
        #expect(!ETagTransport.namesAnotherRepresentation([("ETag", "W/\"v1\"")], than: cached))
        #expect(!ETagTransport.namesAnotherRepresentation([("etag", " \"v1\" ")], than: cached))
        #expect(!ETagTransport.namesAnotherRepresentation([("Date", "now")], than: cached))
        #expect(ETagTransport.namesAnotherRepresentation([("ETag", "\"v2\"")], than: cached))
    }
}

/// A request's own `Cache-Control: no-store` (RFC 9111 §5.2.1.5): its response is not stored,
/// in memory or on disk. Only the response's directive was read: the 200 was written.
@Suite("ETagTransport: a request that says no-store leaves nothing in the store")
struct ETagRequestNoStoreTests {
    @Test("Nothing stored, on disk or in memory; the next request goes out unconditional", arguments: TransportKind.all)
    func requestNoStore(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/doc") { _ in LoopbackResponse.text("private").adding(header: "ETag", "\"v1\"") }
        let directory = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for store in [DiskETagStore(directory: directory) as any ETagStoreProtocol, InMemoryETagStore()] {
            server.clearRecordedRequests()
            let etag = ETagTransport(inner: try kind.make(), store: store)
            var secret = URLRequest(url: server.url("/doc"))
            secret.setValue("no-store", forHTTPHeaderField: "Cache-Control")
            #expect(try await etag.data(for: secret).0 == Data("private".utf8))
            _ = try await etag.data(for: URLRequest(url: server.url("/doc")))
            // Before: the second went out with If-None-Match, from the stored entry.
            #expect(server.requests(path: "/doc").map { $0.header("If-None-Match") } == [nil, nil])
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        // The second request's response (no directive) is stored; the first was not.
        #expect(files.filter { $0.hasSuffix(".etag") }.count == 1, "\(files)")
    }
}

/// A 304 whose `Cache-Control` says `no-store` (or whose `Vary` names what the key does not
/// hold) answers its request from the entry, and the entry is dropped. Before, the entry was
/// stored again, renewed with the `no-store` among its headers, and revalidated forever.
@Suite("ETagTransport: a 304 that makes the entry unstorable drops it")
struct ETagNotModifiedNoStoreTests {
    /// `/doc`: 200 `A` tagged `"v1"`; to `If-None-Match: "v1"`, a 304 with `field`.
    private static func route(on server: LoopbackServer, field: (String, String)) {
        server.route("GET", "/doc") { request in
            if request.header("If-None-Match") == "\"v1\"" {
                return LoopbackResponse(status: 304, headers: [("ETag", "\"v1\""), field])
            }
            return LoopbackResponse.text("A").adding(header: "ETag", "\"v1\"")
        }
    }

    @Test(
        "Served once from the entry, then the entry is gone: the next request is unconditional",
        arguments: TransportKind.all)
    func dropped(kind: TransportKind) async throws {
        let directory = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for field in [("Cache-Control", "private, no-store"), ("Vary", "*")] {
            for store in [DiskETagStore(directory: directory) as any ETagStoreProtocol, InMemoryETagStore()] {
                let server = try LoopbackServer()
                defer { server.shutdown() }
                Self.route(on: server, field: field)
                let etag = ETagTransport(inner: try kind.make(), store: store)
                let request = URLRequest(url: server.url("/doc"))
                #expect(try await etag.data(for: request).0 == Data("A".utf8))
                #expect(try await etag.data(for: request).0 == Data("A".utf8))  // the 304, from the entry
                #expect(try await etag.data(for: request).0 == Data("A".utf8))
                // Before: [nil, "v1", "v1"], the entry kept and renewed.
                #expect(
                    server.requests(path: "/doc").map { $0.header("If-None-Match") } == [nil, "\"v1\"", nil],
                    "\(field)")
                server.shutdown()
            }
        }
    }

    @Test("Through the service (the deferred path): the same", arguments: TransportKind.all)
    func deferredPath(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        Self.route(on: server, field: ("Cache-Control", "no-store"))
        let service = HTTPNetworkService(
            transport: ETagTransport(inner: try kind.make(), store: InMemoryETagStore()),
            authService: InMemoryAuthService())
        let environment = DefaultAPIEnvironment(baseURL: server.baseURL)
        let endpoint = Endpoint(path: "/doc", method: .get)
        for _ in 0..<3 {
            #expect(try await service.requestData(to: endpoint, via: environment).data == Data("A".utf8))
        }
        #expect(server.requests(path: "/doc").map { $0.header("If-None-Match") } == [nil, "\"v1\"", nil])
    }

    @Test("A 304 with an ordinary Cache-Control keeps the entry")
    func ordinaryKept() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        Self.route(on: server, field: ("Cache-Control", "max-age=60"))
        let etag = ETagTransport(inner: try TransportKind.curl.make(), store: InMemoryETagStore())
        let request = URLRequest(url: server.url("/doc"))
        for _ in 0..<3 { #expect(try await etag.data(for: request).0 == Data("A".utf8)) }
        #expect(server.requests(path: "/doc").map { $0.header("If-None-Match") } == [nil, "\"v1\"", "\"v1\""])
    }
}

/// Hostile and careless 304s found by the stop-44 review: a 304 with two `ETag` fields, a
/// renewal for a request that says `no-store`, a refetch of a request with a body stream.
@Suite("ETagTransport: a 304 with two ETags, a no-store request's 304, a body stream's refetch")
struct ETagNotModifiedEdgeTests {
    /// `/doc`: 200 `A` tagged `"v1"`; to `If-None-Match: "v1"`, once, a 304 with `ETag: "v1"` and
    /// a second `ETag` of 9,000 bytes; after that honest: 304 for `"v2"`, else 200 `B` tagged
    /// `"v2"`.
    private static func routeTwoETags(on server: LoopbackServer) {
        let hostileAnswered = Locked(false)
        let long = "\"" + String(repeating: "x", count: 9_000) + "\""
        server.route("GET", "/doc") { request in
            let condition = request.header("If-None-Match")
            if !hostileAnswered.withLock({ $0 }) {
                if condition == "\"v1\"" {
                    hostileAnswered.withLock { $0 = true }
                    return LoopbackResponse(status: 304, headers: [("ETag", "\"v1\""), ("ETag", long)])
                }
                return LoopbackResponse.text("A").adding(header: "ETag", "\"v1\"")
            }
            if condition == "\"v2\"" { return LoopbackResponse(status: 304, headers: [("ETag", "\"v2\"")]) }
            return LoopbackResponse.text("B").adding(header: "ETag", "\"v2\"")
        }
    }

    @Test(
        "A 304 with two ETag fields names another representation: refetched, and no list is ever sent back",
        arguments: TransportKind.all)
    func twoETags(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        // The deferred path (what `HTTPNetworkService.request` takes), whose fields come as
        // received from CurlTransport; and `data(for:)`, whose come merged.
        for deferred in [true, false] {
            server.clearRecordedRequests()
            Self.routeTwoETags(on: server)
            let etag = ETagTransport(inner: try kind.make(), store: InMemoryETagStore())
            let request = URLRequest(url: server.url("/doc"))
            for expected in ["A", "B", "B"] {
                let body = deferred ? try await etag.deferredData(for: request).0 : try await etag.data(for: request).0
                #expect(body == Data(expected.utf8), "deferred: \(deferred)")
            }
            // Before (deferred, CurlTransport): the two were merged into the entry's tag, the
            // second call answered "A" from the entry, and the third sent `"v1", "xxx…"` (9 KB)
            // as If-None-Match.
            #expect(
                server.requests(path: "/doc").map { $0.header("If-None-Match") } == [nil, "\"v1\"", nil, "\"v2\""],
                "deferred: \(deferred)")
        }
    }

    @Test(
        "A request that says no-store, answered 304: served from the entry, which is dropped, not renewed",
        arguments: TransportKind.all)
    func noStoreRequestNotModified(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/doc") { request in
            if request.header("If-None-Match") == "\"v1\"" {
                return LoopbackResponse(status: 304, headers: [("ETag", "\"v1\"")])
            }
            return LoopbackResponse.text("A").adding(header: "ETag", "\"v1\"")
        }
        for deferred in [false, true] {
            server.clearRecordedRequests()
            let etag = ETagTransport(inner: try kind.make(), store: InMemoryETagStore())
            let plain = URLRequest(url: server.url("/doc"))
            var noStore = plain
            noStore.setValue("no-store", forHTTPHeaderField: "Cache-Control")
            for request in [plain, noStore, plain] {
                let body = deferred ? try await etag.deferredData(for: request).0 : try await etag.data(for: request).0
                #expect(body == Data("A".utf8))
            }
            // Before: [nil, "v1", "v1"], the entry renewed by the no-store request's 304.
            #expect(
                server.requests(path: "/doc").map { $0.header("If-None-Match") } == [nil, "\"v1\"", nil],
                "deferred: \(deferred)")
        }
    }

    @Test("A GET with a body stream is refused through ETagTransport as without it: .invalidRequest, nothing sent")
    func bodyStreamRefused() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        Self.routeTwoETags(on: server)
        let etag = ETagTransport(inner: try TransportKind.curl.make(), store: InMemoryETagStore())
        // It was sent by CurlTransport (and refetched with its body after a 304 naming another
        // representation); URLSession refuses a GET with a body on every platform, so no
        // transport sends one now.
        var request = URLRequest(url: server.url("/doc"))
        request.httpBodyStream = InputStream(data: Data("q".utf8))
        do {
            _ = try await etag.data(for: request)
            Issue.record("sent")
        } catch let error as TransportError {
            #expect(error.code == .invalidRequest, "\(error)")
        }
        #expect(server.requests(path: "/doc").isEmpty)
    }
}

@Suite("Which ETags are kept and sent back: one tag, by its bytes")
struct UsableETagTests {
    @Test(
        "One strong or weak tag, or a lax unquoted one; never a list, *, or a quote or comma hidden by a combining mark"
    )
    func usable() {
        for etag in ["\"abc\"", "W/\"abc\"", " \"abc\" ", "abc123", "\"\"", "\"é\""] {
            #expect(ETagTransport.isUsableETag(etag), "\(etag)")
        }
        // As `Character`s, `"` + U+0301 is no quote and `,` + U+0301 no comma: these were lists
        // or broken quotes that passed.
        for etag in [
            "\"a\", \"b\"", "*", "", "W/", "\"a", "a,b", "a\"b", "\"a\"\u{301}, \"\u{301}b\"", "a,\u{301}b",
            "a\"\u{301}b", "\"a\"\u{301}",
        ] {
            #expect(!ETagTransport.isUsableETag(etag), "\(etag)")
        }
    }
}
