import Foundation
import GentleNetworking
import GentleNetworkingTesting
import JustNetworking
import Testing

/// A self-signed certificate for localhost, made with the `openssl` command, and nginx serving
/// TLS with it.
struct SelfSignedNginx: Sendable {
    let directory: URL
    let nginx: NginxServer

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("gentle-selfsigned-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.currentDirectoryURL = directory
        process.arguments = [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", "key.pem",
            "-out", "cert.pem", "-days", "2", "-subj", "/CN=localhost",
            "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try ProcessLauncher.run(process)
        process.waitUntilExit()
        nginx = try NginxServer(
            files: ["x.json": Data("{}".utf8)],
            tls: NginxServer.TLS(
                certificatePath: directory.appendingPathComponent("cert.pem").path,
                keyPath: directory.appendingPathComponent("key.pem").path),
            serverName: "localhost")
    }

    func stop() {
        nginx.stop()
        try? FileManager.default.removeItem(at: directory)
    }
}

/// JustNetworking's two requesters on the wire: credentials set with `addHeaders` never follow a
/// redirect to another origin, and TLS is verified by default.
@Suite("JustNetworking: no credentials across origins, TLS verified by default")
struct JustNetworkingTransportSecurityTests {
    static let credentials = [
        "Authorization": "Bearer jn-token-secret", "Cookie": "session=jn-cookie-secret",
        "Proxy-Authorization": "Basic jn-proxy-secret", "PRIVATE-TOKEN": "jn-gitlab-secret",
    ]

    static func everything(_ requests: [LoopbackRequest]) -> String {
        requests.flatMap(\.headers).map { "\($0.name): \($0.value)" }.joined(separator: "\n")
    }

    @Test(
        "A redirect to another port or another host gets no Authorization, Cookie or Proxy-Authorization",
        arguments: RequesterKind.allCases, ["other port", "other host"])
    func crossOriginRedirect(kind: RequesterKind, target: String) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let other = try LoopbackServer()
        defer { other.shutdown() }
        let landing =
            target == "other port" ? other.url("/landing").absoluteString : "http://localhost:\(server.port)/landing"
        let landingServer = target == "other port" ? other : server
        landingServer.route("GET", "/landing") { _ in .status(204) }
        server.route("GET", "/start") { _ in .redirect(to: landing) }
        let marked = MarkedQueue()
        let factory = RequestFactory(
            router: FixedBaseRouter(server.baseURL, "start"), requestBuilder: addHeaders(Self.credentials))

        let delivery = await deliver(
            RequestType<Void>(responseQueue: marked.queue, requestFactory: factory), via: kind.make(), checking: marked)

        #expect(delivery.error == nil, "\(String(describing: delivery.error))")
        #expect(server.requests(path: "/start").first?.header("Authorization") == "Bearer jn-token-secret")
        let landed = try #require(landingServer.requests(path: "/landing").first)
        #expect(!Self.everything([landed]).contains("secret"), "\(Self.everything([landed]))")
    }

    @Test("A same-origin redirect keeps the credentials and is followed", arguments: RequesterKind.allCases)
    func sameOriginRedirect(kind: RequesterKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/old") { _ in .redirect(to: "/new", status: 301) }
        server.route("GET", "/new") { _ in .status(204) }
        let marked = MarkedQueue()
        let factory = RequestFactory(
            router: FixedBaseRouter(server.baseURL, "old"), requestBuilder: addHeaders(Self.credentials))

        let delivery = await deliver(
            RequestType<Void>(responseQueue: marked.queue, requestFactory: factory), via: kind.make(), checking: marked)

        #expect(delivery.error == nil, "\(String(describing: delivery.error))")
        let landed = try #require(server.requests(path: "/new").first)
        #expect(landed.header("Authorization") == "Bearer jn-token-secret")
        #expect(landed.header("Cookie") == "session=jn-cookie-secret")
    }

    @Test(
        "A self-signed server is refused by both requesters before any request byte", arguments: RequesterKind.allCases)
    func selfSigned(kind: RequesterKind) async throws {
        let server = try SelfSignedNginx()
        defer { server.stop() }
        let requester: any Requester = kind == .urlSession ? URLSession.shared : TransportRequester()
        let marked = MarkedQueue()
        let factory = RequestFactory(router: FixedBaseRouter(server.nginx.baseURL, "x.json"))

        let delivery = await deliver(
            RequestType<Void>(responseQueue: marked.queue, requestFactory: factory), via: requester, checking: marked)

        let error = try #require(delivery.error)
        switch kind {
        case .urlSession:
            // The URLError is delivered unchanged, as documented. corelibs types it `.unknown`
            // and says why; Apple platforms type it as a certificate error.
            let urlError = try #require(error as? URLError, "\(error)")
            #expect(
                [.serverCertificateUntrusted, .serverCertificateHasUnknownRoot, .secureConnectionFailed]
                    .contains(urlError.code)
                    || (urlError.code == .unknown && urlError.localizedDescription.contains("SSL certificate problem")),
                "\(error)")
        case .transport:
            #expect((error as? TransportError)?.code == .tlsFailure, "\(error)")
        }
        #expect(server.nginx.accessLog.isEmpty, "\(server.nginx.accessLog)")
    }
}

/// A router that builds its URL itself and does not use its route's path.
private struct OwnURLRouter: Router {
    let completeURL: URL
    var route: Route { Route(path: "../not-used", method: .get) }
}

/// A route path built from a value (`files/\(name)`) must not leave the base URL's path: libcurl,
/// URLSession and servers resolve `.` and `..` segments, and the request would take the headers
/// meant for the base path with it.
@Suite("JustNetworking: a route path with a dot segment is refused before anything is sent")
struct JustNetworkingDotSegmentTests {
    @Test(
        "files/../../admin (and ..\\, ..;) is .invalidRequest on both requesters; /admin gets nothing",
        arguments: RequesterKind.allCases)
    func dotSegments(kind: RequesterKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route(nil, prefix: "/") { _ in .status(204) }
        let base = server.url("/api/v1")
        for path in ["files/../../admin", "files/..\\..\\admin", "files/..;/x", "./admin"] {
            let marked = MarkedQueue()
            let factory = RequestFactory(
                router: FixedBaseRouter(base, path), requestBuilder: addHeaders(["Authorization": "Bearer jn-secret"]))
            #expect(throws: JustNetworkingError.self, "\(path)") { try factory.makeURLRequest() }
            let delivery = await deliver(
                RequestType<Void>(responseQueue: marked.queue, requestFactory: factory), via: kind.make(),
                checking: marked)
            guard case .invalidRequest(let reason)? = delivery.error as? JustNetworkingError else {
                Issue.record("\(path): \(String(describing: delivery.error))")
                continue
            }
            #expect(reason.contains("segment"), "\(reason)")
        }
        #expect(server.receivedRequests.isEmpty, "sent: \(server.receivedRequests.map(\.path))")
        // Dots inside a name are an ordinary path; `%` is encoded (the route's path is all path),
        // so `%2E%2E` is a name the server reads as the text "%2E%2E", never as dots.
        for path in ["files/v1..2/.profile", "files/%2E%2E"] {
            let marked = MarkedQueue()
            let fine = RequestFactory(router: FixedBaseRouter(base, path))
            let delivery = await deliver(
                RequestType<Void>(responseQueue: marked.queue, requestFactory: fine), via: kind.make(), checking: marked
            )
            #expect(delivery.error == nil, "\(path): \(String(describing: delivery.error))")
        }
        #expect(server.receivedRequests.map(\.path) == ["/api/v1/files/v1..2/.profile", "/api/v1/files/%2E%2E"])
        // The URL that is sent is checked, not a route path the router does not use.
        let own = RequestFactory(router: OwnURLRouter(completeURL: server.url("/own")))
        #expect(throws: Never.self) { try own.makeURLRequest() }
        #expect(throws: JustNetworkingError.self) {
            try RequestFactory(
                router: OwnURLRouter(completeURL: URL(string: server.baseURL.absoluteString + "/a/../b")!)
            )
            .makeURLRequest()
        }
    }
}
