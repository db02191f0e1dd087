import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing

/// A loopback route that behaves like a real origin: a strong ETag from the body, 304 when
/// `If-None-Match` matches.
func etagRoute(_ server: LoopbackServer, path: String, body: Locked<String>, extraHeaders: [(String, String)] = []) {
    server.route("GET", path) { request in
        let current = body.current
        let etag = "\"\(SHA256Digest.hexHash(current).prefix(16))\""
        if request.header("If-None-Match") == etag {
            return LoopbackResponse.status(304).adding(header: "ETag", etag).adding(header: "X-Revalidated", "yes")
        }
        var response = LoopbackResponse.json(current).adding(header: "ETag", etag)
        for (name, value) in extraHeaders { response = response.adding(header: name, value) }
        return response
    }
}

@Suite("ETagTransport on the wire")
struct ETagTransportTests {
    func transport(store: any ETagStoreProtocol = InMemoryETagStore()) -> ETagTransport {
        ETagTransport(inner: URLSessionTransport(session: makeIsolatedSession()), store: store)
    }

    @Test("The second GET sends If-None-Match, the server answers 304, and the body is identical")
    func revalidates() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let body = Locked(#"{"id":1,"property":"expensive"}"#)
        etagRoute(server, path: "/doc", body: body)
        let transport = transport()
        let (first, firstResponse) = try await transport.data(for: URLRequest(url: server.url("/doc")))
        let (second, secondResponse) = try await transport.data(for: URLRequest(url: server.url("/doc")))
        #expect(second == first)
        #expect(firstResponse.statusCode == 200)
        #expect(secondResponse.statusCode == 200, "the caller sees the cached 2xx, not the 304")
        #expect(secondResponse.value(forHTTPHeaderField: "X-Revalidated") == "yes", "headers updated by the 304")
        #expect(secondResponse.value(forHTTPHeaderField: "Content-Type") == "application/json")
        let seen = server.requests(path: "/doc")
        #expect(seen.count == 2)
        #expect(seen[0].header("If-None-Match") == nil)
        #expect(seen[1].header("If-None-Match") == firstResponse.value(forHTTPHeaderField: "ETag"))

        body.withLock { $0 = #"{"id":1,"property":"changed"}"# }
        let (third, _) = try await transport.data(for: URLRequest(url: server.url("/doc")))
        #expect(String(decoding: third, as: UTF8.self).contains("changed"))
        let (fourth, _) = try await transport.data(for: URLRequest(url: server.url("/doc")))
        #expect(fourth == third)
        #expect(server.requests(path: "/doc").last?.header("If-None-Match") != seen[1].header("If-None-Match"))
    }

    @Test("One user's cached body is never served to another")
    func perCredential() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        etagRoute(server, path: "/me", body: Locked("{}"))
        let store = InMemoryETagStore()
        let transport = transport(store: store)
        var alice = URLRequest(url: server.url("/me"))
        alice.setValue("Bearer alice-token", forHTTPHeaderField: "Authorization")
        var bob = URLRequest(url: server.url("/me"))
        bob.setValue("Bearer bob-token", forHTTPHeaderField: "Authorization")
        _ = try await transport.data(for: alice)
        _ = try await transport.data(for: bob)
        _ = try await transport.data(for: alice)
        let conditional = server.requests(path: "/me").map { $0.header("If-None-Match") != nil }
        #expect(conditional == [false, false, true], "bob's first request was not revalidated against alice's entry")
        #expect(!ETagTransport.cacheKey(for: alice).contains("alice-token"), "the raw token is not part of the key")
        #expect(await store.count == 2)
    }

    @Test("no-store and Vary on other headers are not cached; non-GET is untouched")
    func notStored() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        etagRoute(server, path: "/private", body: Locked("{}"), extraHeaders: [("Cache-Control", "private, no-store")])
        etagRoute(server, path: "/varies", body: Locked("{}"), extraHeaders: [("Vary", "Accept, X-Tenant")])
        etagRoute(server, path: "/fine", body: Locked("{}"), extraHeaders: [("Vary", "Accept-Encoding, Authorization")])
        server.route("POST", "/fine") { _ in .json("{}").adding(header: "ETag", "\"p\"") }
        let transport = transport()
        for path in ["/private", "/varies", "/fine"] {
            _ = try await transport.data(for: URLRequest(url: server.url(path)))
            _ = try await transport.data(for: URLRequest(url: server.url(path)))
        }
        #expect(server.requests(path: "/private").compactMap { $0.header("If-None-Match") }.isEmpty)
        #expect(server.requests(path: "/varies").compactMap { $0.header("If-None-Match") }.isEmpty)
        #expect(server.requests(path: "/fine").compactMap { $0.header("If-None-Match") }.count == 1)
        var post = URLRequest(url: server.url("/fine"))
        post.httpMethod = "POST"
        _ = try await transport.data(for: post)
        _ = try await transport.data(for: post)
        #expect(
            server.receivedRequests.filter { $0.method == "POST" }.compactMap { $0.header("If-None-Match") }.isEmpty)
    }

    @Test("A 304 with no cached entry is an error, never an empty success")
    func unexpectedNotModified() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/odd") { _ in .status(304) }
        await #expect {
            try await transport().data(for: URLRequest(url: server.url("/odd")))
        } throws: { error in
            (error as? TransportError)?.code == .unexpectedNotModified
                && (error as? TransportError)?.response?.statusCode == 304
        }
        let service = HTTPNetworkService(transport: transport())
        await #expect {
            try await service.requestVoid(
                to: Endpoint(path: "/odd", method: .get), via: DefaultAPIEnvironment(baseURL: server.baseURL))
        } throws: { error in
            (error as? NetworkError)?.kind == .unexpectedNotModified && (error as? NetworkError)?.statusCode == 304
        }
        #expect(server.receivedRequests.count == 2)
    }

    @Test("A DiskETagStore serves revalidations across transport instances")
    func diskStoreOnTheWire() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        etagRoute(server, path: "/doc", body: Locked(#"{"big":true}"#))
        let directory = makeTemporaryDirectory().appendingPathComponent("etags")
        defer { try? FileManager.default.removeItem(at: directory.deletingLastPathComponent()) }
        let (first, _) = try await transport(store: DiskETagStore(directory: directory))
            .data(for: URLRequest(url: server.url("/doc")))
        let (second, _) = try await transport(store: DiskETagStore(directory: directory))
            .data(for: URLRequest(url: server.url("/doc")))
        #expect(first == second)
        #expect(server.requests(path: "/doc").last?.header("If-None-Match") != nil)
    }
}

@Suite("ETagTransport over a DiskETagStore: a 304 that renews only the Date writes nothing")
struct ETagDiskRenewalTests {
    /// The inode of the one entry file in `directory`: a rewrite (a new file renamed in place)
    /// changes it; a read, which only touches the file's time, does not.
    static func entryInode(in directory: URL) throws -> (count: Int, inode: UInt64) {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".etag") }
        var info = stat()
        guard let name = names.first, lstat(directory.appendingPathComponent(name).path, &info) == 0 else {
            return (names.count, 0)
        }
        return (names.count, UInt64(info.st_ino))
    }

    @Test("Three 304s with new Dates: the entry file is the same; a 304 with a new field: rewritten; each served fresh")
    func onlyDateNotRewritten() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let count = Locked(0)
        server.route("GET", "/doc") { request in
            let number = count.increment()
            let date = "Sun, 06 Dec 2026 10:00:0\(number) GMT"
            guard request.header("If-None-Match") == "\"v1\"" else {
                return LoopbackResponse.json(#"{"id":1}"#).adding(header: "ETag", "\"v1\"").adding(header: "Date", date)
            }
            let notModified = LoopbackResponse.status(304).adding(header: "ETag", "\"v1\"").adding(header: "Date", date)
            return number == 5 ? notModified.adding(header: "X-Version", "2") : notModified
        }
        let directory = makeTemporaryDirectory().appendingPathComponent("etags")
        defer { try? FileManager.default.removeItem(at: directory.deletingLastPathComponent()) }
        let transport = ETagTransport(
            inner: URLSessionTransport(session: makeIsolatedSession()), store: DiskETagStore(directory: directory))
        let request = URLRequest(url: server.url("/doc"))
        _ = try await transport.data(for: request)
        let written = try Self.entryInode(in: directory)
        #expect(written.count == 1)
        for number in 2...4 {
            let (body, response) = try await transport.data(for: request)
            #expect(response.statusCode == 200 && body == Data(#"{"id":1}"#.utf8))
            #expect(response.value(forHTTPHeaderField: "Date") == "Sun, 06 Dec 2026 10:00:0\(number) GMT")
            #expect(try Self.entryInode(in: directory) == written, "304 number \(number - 1) rewrote the entry")
        }
        let (_, changed) = try await transport.data(for: request)
        #expect(changed.value(forHTTPHeaderField: "X-Version") == "2")
        let rewritten = try Self.entryInode(in: directory)
        #expect(rewritten.count == 1 && rewritten.inode != written.inode, "a 304 with a new field is kept")
        #expect(server.requests(path: "/doc").count == 5)
        // The next transport (a restart) reads the renewed entry: the new field is there.
        let restarted = ETagTransport(
            inner: URLSessionTransport(session: makeIsolatedSession()), store: DiskETagStore(directory: directory))
        let (_, again) = try await restarted.data(for: request)
        #expect(again.value(forHTTPHeaderField: "X-Version") == "2")
    }
}

@Suite("ETagTransport against nginx")
struct ETagNginxTests {
    @Test("nginx's own ETag is revalidated: 304 in its access log, identical body, then a change is seen")
    func nginxStaticFile() async throws {
        let original = Data(#"{"id":7,"property":"from nginx"}"#.utf8)
        let nginx = try NginxServer(files: ["model.json": original])
        defer { nginx.stop() }
        let transport = ETagTransport(inner: URLSessionTransport(session: makeIsolatedSession()))
        let service = HTTPNetworkService(transport: transport, authService: InMemoryAuthService())
        let environment = DefaultAPIEnvironment(baseURL: nginx.baseURL)
        let endpoint = Endpoint(path: "/model.json", method: .get)

        let (first, firstResponse): (Model, HTTPURLResponse) = try await service.requestWithResponse(
            to: endpoint, via: environment)
        let (second, secondResponse): (Model, HTTPURLResponse) = try await service.requestWithResponse(
            to: endpoint, via: environment)
        #expect(first == Model(id: 7, property: "from nginx"))
        #expect(second == first)
        let etag = try #require(firstResponse.value(forHTTPHeaderField: "ETag"))
        #expect(!etag.hasPrefix("W/"), "gzip is off, so nginx sends a strong ETag")
        #expect(secondResponse.value(forHTTPHeaderField: "ETag") == etag)
        let statuses = await nginx.accessLog(atLeast: 2).map {
            $0.components(separatedBy: "\" ").dropFirst().first?.prefix(3) ?? ""
        }
        #expect(statuses == ["200", "304"], "nginx log: \(nginx.accessLog)")

        try await Task.sleep(nanoseconds: 1_100_000_000)  // nginx ETags include the mtime in seconds
        try nginx.write(Data(#"{"id":7,"property":"edited"}"#.utf8), to: "model.json")
        let third: Model = try await service.request(to: endpoint, via: environment)
        #expect(third.property == "edited")
        let log = await nginx.accessLog(atLeast: 3)
        #expect(log.count == 3)
        #expect(log.last?.contains("\" 200 ") == true)
    }
}

@Suite("ETagTransport and hostile ETags")
struct ETagHostileValueTests {
    /// An origin whose every response carries an ETag with CR LF in it; records what it receives.
    final class InjectingOrigin: HTTPTransportProtocol, Sendable {
        let seen = Locked<[URLRequest]>([])

        func data(for request: URLRequest) async throws -> (Data, HTTPURLResponse) {
            seen.withLock { $0.append(request) }
            guard
                let url = request.url,
                let response = HTTPURLResponse(
                    url: url, statusCode: 200, httpVersion: "HTTP/1.1",
                    headerFields: ["ETag": "\"a\r\nX-Injected: 1\"", "Content-Type": "application/json"])
            else { throw TransportError(.badResponse, url: request.url, message: "no response") }
            return (Data(#"{"id":1,"property":"p"}"#.utf8), response)
        }
    }

    @Test(
        "An ETag of 9 KiB, `*` or a list is not stored nor sent back; a quoted, weak or lax unquoted one is",
        arguments: TransportKind.all)
    func unusableETags(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let cases: [(String, Bool)] = [
            ("\"" + String(repeating: "e", count: 9 * 1024) + "\"", false), ("*", false), ("W/*", false),
            (#""a", "b""#, false), ("a,b", false), (#""v1""#, true), (#"W/"v1""#, true), ("v1-lax", true),
        ]
        for (index, (etag, _)) in cases.enumerated() {
            server.route("GET", "/doc\(index)") { _ in .json(#"{"id":1,"property":"p"}"#).adding(header: "ETag", etag) }
        }
        let transport = ETagTransport(inner: try kind.make())
        for (index, (etag, usable)) in cases.enumerated() {
            let url = server.url("/doc\(index)")
            _ = try await transport.data(for: URLRequest(url: url))
            _ = try await transport.data(for: URLRequest(url: url))
            let second = try #require(server.requests(path: "/doc\(index)").last)
            #expect(
                (second.header("If-None-Match") == etag) == usable,
                "\(etag.prefix(12)): \(second.header("If-None-Match")?.prefix(12) ?? "none")")
        }
    }

    @Test("An ETag with CR LF is never sent back as If-None-Match, through data(for:) or the service")
    func crlfETag() async throws {
        let origin = InjectingOrigin()
        let transport = ETagTransport(inner: origin)
        let url = try #require(URL(string: "http://h.example/doc"))
        _ = try await transport.data(for: URLRequest(url: url))
        _ = try await transport.data(for: URLRequest(url: url))
        let service = HTTPNetworkService(transport: transport, authService: InMemoryAuthService())
        let _: Model = try await service.request(
            to: Endpoint(path: "/doc", method: .get),
            via: DefaultAPIEnvironment(baseURL: URL(string: "http://h.example")))
        let sent = origin.seen.withLock { $0 }
        #expect(sent.count == 3)
        for request in sent {
            #expect(request.value(forHTTPHeaderField: "If-None-Match") == nil)
            #expect(!(request.allHTTPHeaderFields ?? [:]).values.contains { $0.contains("\r") || $0.contains("\n") })
        }
    }
}

@Suite("ETagTransport keys an auth service's own credential header")
struct ETagCustomCredentialHeaderTests {
    @Test(
        "Two users whose token goes in the auth service's X-User-Token never share an entry (bob got alice's body on a 304)",
        arguments: TransportKind.all)
    func customHeaderIdentities(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/me") { request in
            // A version-style ETag, the same for everyone, and no Vary: the server leaves telling
            // users apart to the client.
            if request.header("If-None-Match") == #""v1""# { return .status(304).adding(header: "ETag", #""v1""#) }
            let user = request.header("X-User-Token") ?? "nobody"
            return .json(#"{"id":1,"property":"\#(user)"}"#).adding(header: "ETag", #""v1""#)
        }
        let etag = ETagTransport(inner: try kind.make())
        let environment = DefaultAPIEnvironment(baseURL: server.baseURL)
        let endpoint = Endpoint(path: "/me", method: .get, requiresAuth: true)
        let alice = HTTPNetworkService(
            transport: etag, authService: APIKeyAuthService(key: "alice-token", headerField: "X-User-Token"))
        let bob = HTTPNetworkService(
            transport: etag, authService: APIKeyAuthService(key: "bob-token", headerField: "X-User-Token"))

        let first: Model = try await alice.request(to: endpoint, via: environment)
        let second: Model = try await bob.request(to: endpoint, via: environment)
        let again: Model = try await alice.request(to: endpoint, via: environment)

        #expect(first.property == "alice-token")
        #expect(second.property == "bob-token", "bob was served alice's entry")
        #expect(again.property == "alice-token")
        let requests = server.requests(path: "/me")
        #expect(requests.count == 3)
        #expect(requests[1].header("If-None-Match") == nil, "bob's request carried alice's ETag")
        #expect(requests[2].header("If-None-Match") == #""v1""#, "alice's own entry is revalidated")
    }
}
