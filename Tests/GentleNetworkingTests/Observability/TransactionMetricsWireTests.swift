import Foundation
import GentleNetworkingTesting
import Testing

@testable import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Metrics and lifecycle events over real sockets, on both transports: each field is present
/// where the README's table says so, plausible (ordered, byte counts equal to what the server
/// sent and received), and `nil` where the table says so; retried, redirected, refreshed and
/// revalidated requests produce exactly the expected events; no secret reaches any record.
@Suite("Metrics and events on the wire")
struct TransactionMetricsWireTests {
    static let body = #"{"id":7,"property":"metrics"}"#

    /// The response the server sends for `/fixed`, and the exact bytes of its head.
    static func fixedResponse() -> (LoopbackResponse, head: Int) {
        let response = LoopbackResponse(
            status: 200, headers: [("Content-Type", "application/json")], body: Data(body.utf8))
        let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n"
        return (response, head.utf8.count)
    }

    /// The bytes of a request's line and headers as the server received them.
    static func headBytes(_ request: LoopbackRequest) -> Int {
        var head = "\(request.method) \(request.target) \(request.httpVersion)\r\n"
        for (name, value) in request.headers { head += "\(name): \(value)\r\n" }
        return (head + "\r\n").utf8.count
    }

    static func expectOrdered(_ transaction: TransactionMetrics, sourceLocation: SourceLocation = #_sourceLocation) {
        let offsets = transaction.orderedOffsets
        #expect(offsets == offsets.sorted(), "phases in order: \(transaction)", sourceLocation: sourceLocation)
        #expect(offsets.allSatisfy { $0 >= 0 && $0 < 60 }, "\(offsets)", sourceLocation: sourceLocation)
    }

    @Test(
        "A GET: every field the table lists for the transport, with the server's exact byte counts",
        arguments: TransportKind.all)
    func get(kind: TransportKind) async throws {
        let harness = try LoopbackHarness(kind: kind, token: nil)
        defer { harness.server.shutdown() }
        let (response, headBytes) = Self.fixedResponse()
        harness.server.route("GET", "/fixed") { _ in response }
        let before = Date()
        let (model, _, metrics): (Model, HTTPURLResponse, RequestMetrics) = try await harness.service
            .requestWithMetrics(to: Endpoint(path: "/fixed", method: .get), via: harness.environment)
        let after = Date()
        #expect(model.property == "metrics")
        #expect(metrics.transactions.count == 1 && metrics.steps.isEmpty && metrics.attempts == 1)
        let transaction = try #require(metrics.transactions.first)
        let sent = try #require(harness.server.receivedRequests.first)
        #expect(transaction.method == "GET" && transaction.statusCode == 200)
        #expect(transaction.url == harness.server.url("/fixed").absoluteString)
        #expect(transaction.attempt == 1 && transaction.hop == 0)
        #expect(transaction.fetchStart >= before.addingTimeInterval(-0.001) && transaction.fetchStart <= after)
        #expect(transaction.responseBodyDecodedBytes == Int64(Self.body.utf8.count))
        #expect(try #require(transaction.responseEnd) <= metrics.duration + 0.001)
        #expect(transaction.responseStart != nil && transaction.responseEnd != nil)
        Self.expectOrdered(transaction)
        switch kind {
        case .curl:
            #expect(transaction.source == .libcurl)
            #expect(transaction.responseHeaderBytes == Int64(headBytes))
            #expect(transaction.responseBodyWireBytes == Int64(Self.body.utf8.count))
            #expect(transaction.requestHeaderBytes == Int64(Self.headBytes(sent)))
            #expect(transaction.requestBodyBytes == 0)
            #expect(transaction.networkProtocol == "http/1.1")
            #expect(transaction.remoteAddress == "127.0.0.1" && transaction.remotePort == Int(harness.server.port))
            #expect(transaction.isReusedConnection == false)
            #expect(transaction.connectEnd != nil && transaction.requestStart != nil)
            #expect(transaction.secureConnectionEnd == nil, "no TLS on http")
            #expect(transaction.requestEnd == nil, "libcurl 7.88 reports no request-sent time")
        case .urlSession:
            #if canImport(FoundationNetworking)
                // corelibs reports no metrics: only what the transport measures itself.
                #expect(transaction.source == .transport)
                #expect(transaction.domainLookupEnd == nil && transaction.connectEnd == nil)
                #expect(transaction.secureConnectionEnd == nil && transaction.requestStart == nil)
                #expect(transaction.requestEnd == nil && transaction.requestHeaderBytes == nil)
                #expect(transaction.responseHeaderBytes == nil && transaction.responseBodyWireBytes == nil)
                #expect(transaction.networkProtocol == nil && transaction.isReusedConnection == nil)
                #expect(transaction.remoteAddress == nil && transaction.remotePort == nil)
            #endif
        }
    }

    @Test(
        "A reused connection is reported as reused, without lookup or connect times (curl)",
        arguments: TransportKind.all)
    func reuse(kind: TransportKind) async throws {
        let harness = try LoopbackHarness(kind: kind, token: nil)
        defer { harness.server.shutdown() }
        harness.server.route("GET", "/fixed") { _ in Self.fixedResponse().0 }
        // Off the shared pool: resumed two minutes late, the idle connection is closed (libcurl's
        // CURLOPT_MAXAGE_CONN, 118 s) and the second request rightly opens another.
        let transactions = try await onDedicatedThread {
            var transactions: [TransactionMetrics] = []
            for _ in 0..<2 {
                let (_, _, metrics): (Model, HTTPURLResponse, RequestMetrics) = try await harness.service
                    .requestWithMetrics(to: Endpoint(path: "/fixed", method: .get), via: harness.environment)
                transactions += metrics.transactions
            }
            return transactions
        }
        let connections = harness.server.receivedRequests.map(\.connectionID)
        #expect(connections.count == 2 && connections[0] == connections[1], "the server saw one connection")
        if kind == .curl {
            #expect(transactions.map(\.isReusedConnection) == [false, true])
            #expect(transactions[0].connectEnd != nil && transactions[1].connectEnd == nil)
            #expect(transactions[1].domainLookupEnd == nil)
        } else {
            #expect(transactions.allSatisfy { $0.isReusedConnection == nil })
        }
    }

    @Test(
        "A POST: the body and header bytes sent are the bytes the server received (small and large bodies)",
        arguments: TransportKind.all, [300, 100_000])
    func post(kind: TransportKind, size: Int) async throws {
        let harness = try LoopbackHarness(kind: kind, token: nil)
        defer { harness.server.shutdown() }
        harness.server.route("POST", "/items") { _ in .json(Self.body) }
        let endpoint = Endpoint(
            path: "/items", method: .post, body: ["name": EndpointAnyEncodable(String(repeating: "n", count: size))])
        let (_, _, metrics): (Model, HTTPURLResponse, RequestMetrics) = try await harness.service.requestWithMetrics(
            to: endpoint, via: harness.environment)
        let received = try #require(harness.server.receivedRequests.first)
        #expect(received.body.count > size)
        #expect(metrics.transactions.first?.requestBodyBytes == Int64(received.body.count))
        #expect(metrics.transactions.first?.method == "POST")
        if kind == .curl {
            #expect(metrics.transactions.first?.requestHeaderBytes == Int64(Self.headBytes(received)))
        }
    }

    @Test(
        "A compressed body: wire bytes are what the server sent, decoded bytes what the caller got",
        arguments: TransportKind.all)
    func compressed(kind: TransportKind) async throws {
        let harness = try LoopbackHarness(kind: kind, token: nil)
        defer { harness.server.shutdown() }
        let array = "[" + Array(repeating: Self.body, count: 200).joined(separator: ",") + "]"
        let gzipped = try await compress(Data(array.utf8), with: ["gzip", "-c"])
        harness.server.route("GET", "/many") { _ in
            LoopbackResponse(
                status: 200, headers: [("Content-Type", "application/json"), ("Content-Encoding", "gzip")],
                body: gzipped)
        }
        let (models, _, metrics): ([Model], HTTPURLResponse, RequestMetrics) = try await harness.service
            .requestWithMetrics(to: Endpoint(path: "/many", method: .get), via: harness.environment)
        #expect(models.count == 200)
        let transaction = try #require(metrics.transactions.first)
        #expect(transaction.responseBodyDecodedBytes == Int64(array.utf8.count))
        if kind == .curl {
            #expect(transaction.responseBodyWireBytes == Int64(gzipped.count))
            #expect(gzipped.count < array.utf8.count / 5)
        }
    }

    @Test(
        "Redirects: one transaction per hop, a redirect record per hop, credentials stripped across origins",
        arguments: TransportKind.all)
    func redirects(kind: TransportKind) async throws {
        let (logger, harness, other) = try Self.redirectChain(kind: kind, method: "GET", statuses: (301, 302))
        defer {
            harness.server.shutdown()
            other.shutdown()
        }
        let (_, _, metrics): (Model, HTTPURLResponse, RequestMetrics) = try await harness.service.requestWithMetrics(
            to: Endpoint(path: "/a", method: .get, requiresAuth: true), via: harness.environment)

        let expectedSteps: [ExchangeStep] = [
            .redirected(statusCode: 301, to: harness.server.url("/b").absoluteString, credentialsStripped: false),
            .redirected(statusCode: 302, to: other.url("/land").absoluteString, credentialsStripped: true),
        ]
        #expect(metrics.steps == expectedSteps)
        #expect(metrics.redirectCount == 2)
        #expect(metrics.transactions.map(\.statusCode) == [301, 302, 200])
        #expect(metrics.transactions.map(\.hop) == [0, 1, 2])
        #expect(
            metrics.transactions.map(\.url) == [
                harness.server.url("/a").absoluteString, harness.server.url("/b").absoluteString,
                other.url("/land").absoluteString,
            ])
        metrics.transactions.forEach { Self.expectOrdered($0) }
        // On the wire: the credential went to the first origin only.
        #expect(
            harness.server.receivedRequests.map(\.bearerToken) == ["redirect-secret-token", "redirect-secret-token"])
        #expect(other.receivedRequests.count == 1 && other.receivedRequests[0].header("Authorization") == nil)
        let records = logger.records
        #expect(records.map(\.event) == [.request, .redirect, .redirect, .response])
        #expect(records.compactMap(\.step) == expectedSteps)
        #expect(!ExchangeEventTests.allText(records).contains("redirect-secret-token"))
    }

    @Test(
        "Redirects that keep the body: the body on every hop, one transaction and one redirect record per hop",
        arguments: TransportKind.all)
    func bodyKeepingRedirects(kind: TransportKind) async throws {
        let (logger, harness, other) = try Self.redirectChain(kind: kind, method: "POST", statuses: (307, 308))
        defer {
            harness.server.shutdown()
            other.shutdown()
        }
        let endpoint = Endpoint(
            path: "/a", method: .post, body: ["note": EndpointAnyEncodable("kept")], requiresAuth: true)
        let (_, _, metrics): (Model, HTTPURLResponse, RequestMetrics) = try await harness.service.requestWithMetrics(
            to: endpoint, via: harness.environment)

        let expectedSteps: [ExchangeStep] = [
            .redirected(statusCode: 307, to: harness.server.url("/b").absoluteString, credentialsStripped: false),
            .redirected(statusCode: 308, to: other.url("/land").absoluteString, credentialsStripped: true),
        ]
        #expect(metrics.steps == expectedSteps)
        #expect(metrics.transactions.map(\.statusCode) == [307, 308, 200])
        #expect(metrics.transactions.map(\.hop) == [0, 1, 2])
        #expect(metrics.transactions.map(\.method) == ["POST", "POST", "POST"])
        let sent = harness.server.receivedRequests + other.receivedRequests
        #expect(sent.map(\.method) == ["POST", "POST", "POST"])
        #expect(
            sent.map { String(decoding: $0.body, as: UTF8.self) } == Array(repeating: #"{"note":"kept"}"#, count: 3))
        #expect(sent.map(\.bearerToken) == ["redirect-secret-token", "redirect-secret-token", nil])
        #expect(logger.records.map(\.event) == [.request, .redirect, .redirect, .response])
        #expect(logger.records.compactMap(\.step) == expectedSteps)
    }

    /// A harness (bearer token `redirect-secret-token`, a recording logger) whose server
    /// redirects `method /a` to `/b` with the first status, and `/b` with the second to `/land`
    /// on another origin, which answers the model. The caller shuts both servers down.
    static func redirectChain(
        kind: TransportKind, method: String, statuses: (Int, Int)
    ) throws -> (RecordingLogger, LoopbackHarness, LoopbackServer) {
        let other = try LoopbackServer()
        let logger = RecordingLogger()
        let harness: LoopbackHarness
        do {
            harness = try LoopbackHarness(kind: kind, token: "redirect-secret-token", logger: logger)
        } catch {
            other.shutdown()
            throw error
        }
        harness.server.route(method, "/a") { _ in .redirect(to: "/b", status: statuses.0) }
        harness.server.route(method, "/b") { _ in .redirect(to: other.url("/land").absoluteString, status: statuses.1) }
        other.route(method, "/land") { _ in .json(Self.body) }
        return (logger, harness, other)
    }

    @Test(
        "requestWithMetrics' errors carry the metrics: a retried 503, a decoding failure, a refused connection; request's carry none",
        arguments: TransportKind.all)
    func metricsOnErrors(kind: TransportKind) async throws {
        let harness = try LoopbackHarness(
            kind: kind, token: nil,
            transport: RetryTransport(
                inner: try kind.make(),
                policy: RetryPolicy(maxRetries: 1, baseDelay: 0.01, maxDelay: 0.01, jitter: nil),
                budget: .unlimited()))
        defer { harness.server.shutdown() }
        harness.server.route("GET", "/busy") { _ in .json(#"{"error":"busy"}"#, status: 503) }
        harness.server.route("GET", "/not-a-model") { _ in .json(#"{"unexpected":true}"#) }

        do {
            let _: (Model, HTTPURLResponse, RequestMetrics) = try await harness.service.requestWithMetrics(
                to: Endpoint(path: "/busy", method: .get), via: harness.environment)
            Issue.record("a 503 succeeded")
        } catch let error as NetworkError {
            #expect(error.statusCode == 503)
            let metrics = try #require(error.metrics, "the status error carries the metrics")
            #expect(harness.server.requests(path: "/busy").count == 2)
            #expect(metrics.transactions.map(\.statusCode) == [503, 503])
            #expect(metrics.transactions.map(\.attempt) == [1, 2])
            #expect(metrics.attempts == 2)
            #expect(metrics.steps.count == 1)
        }

        do {
            let _: (Model, HTTPURLResponse, RequestMetrics) = try await harness.service.requestWithMetrics(
                to: Endpoint(path: "/not-a-model", method: .get), via: harness.environment)
            Issue.record("a body that is not a Model decoded")
        } catch let error as NetworkError {
            #expect(error.kind == .decodingFailed)
            #expect(try #require(error.metrics).transactions.map(\.statusCode) == [200])
        }

        // The same 503 through request(to:via:): no metrics were asked for, none are attached.
        do {
            let _: Model = try await harness.service.request(
                to: Endpoint(path: "/busy", method: .get), via: harness.environment)
            Issue.record("a 503 succeeded")
        } catch let error as NetworkError {
            #expect(error.statusCode == 503 && error.metrics == nil)
        }

        let port = try RefusingPort()
        let refusing = HTTPNetworkService(transport: try kind.make(), authService: InMemoryAuthService())
        do {
            let _: (Model, HTTPURLResponse, RequestMetrics) = try await refusing.requestWithMetrics(
                to: Endpoint(path: "/x", method: .get), via: DefaultAPIEnvironment(baseURL: port.baseURL))
            Issue.record("a closed port answered")
        } catch let error as NetworkError {
            let transaction = try #require(error.metrics?.transactions.first, "the refused attempt's metrics")
            #expect(transaction.statusCode == nil && transaction.responseStart == nil)
        }
    }

    @Test("A refused connection: the failure record carries the metrics of the attempt", arguments: TransportKind.all)
    func refused(kind: TransportKind) async throws {
        let port = try RefusingPort()
        let logger = RecordingLogger()
        let service = HTTPNetworkService(
            transport: try kind.make(), authService: InMemoryAuthService(token: "refused-secret"), logger: logger)
        await #expect(throws: NetworkError.self) {
            try await service.requestVoid(
                to: Endpoint(path: "/x", method: .get, requiresAuth: true),
                via: DefaultAPIEnvironment(baseURL: port.baseURL))
        }
        let records = logger.records
        #expect(records.map(\.event) == [.request, .failure])
        let transaction = try #require(records.last?.metrics?.transactions.first)
        #expect(transaction.statusCode == nil && transaction.responseStart == nil)
        #expect(transaction.responseBodyDecodedBytes == nil)
        #expect(transaction.responseEnd != nil)
        #expect(!ExchangeEventTests.allText(records).contains("refused-secret"))
    }

    @Test(
        "The whole stack on the wire: a 503, a 401 and its refresh, then a 304: exactly these events and requests",
        arguments: TransportKind.all)
    func wholeStack(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let calls = Locked(0)
        server.route("GET", "/doc") { request in
            let call = calls.increment()
            switch call {
            case 1: return .status(503)
            case 2: return .status(401)
            case 3: return .json(Self.body).adding(header: "ETag", "\"e1\"")
            default:
                return request.header("If-None-Match") == "\"e1\""
                    ? LoopbackResponse(status: 304, headers: [("ETag", "\"e1\"")]) : .status(500)
            }
        }
        server.route("POST", "/refresh") { _ in .json(#"{"token":"stack-new-secret"}"#) }
        let auth = InMemoryAuthService(token: "stack-old-secret")
        let logger = RecordingLogger()
        // The refresh sends a request of its own, through a service nobody observes: it must not
        // count as one of the observed request's exchanges (a refresh task inherits task-locals).
        let refreshService = HTTPNetworkService(transport: try kind.make(), authService: InMemoryAuthService())
        let clock = RecordingClock(randomUnit: 0.5)
        let transport = ReauthTransport(
            inner: RetryTransport(
                inner: ETagTransport(inner: try kind.make()),
                policy: RetryPolicy(maxRetries: 2, baseDelay: 0.1, maxDelay: 1, jitter: nil), clock: clock.clock,
                budget: .unlimited()),
            authService: auth,
            refreshToken: {
                struct Token: Decodable { let token: String }
                let fresh: Token = try await refreshService.request(
                    to: Endpoint(path: "/refresh", method: .post), via: DefaultAPIEnvironment(baseURL: server.baseURL))
                try await auth.saveAccessToken(fresh.token)
            })
        let service = HTTPNetworkService(transport: transport, authService: auth, logger: logger)
        let endpoint = Endpoint(path: "/doc", method: .get, requiresAuth: true)
        let environment = DefaultAPIEnvironment(baseURL: server.baseURL)

        let first: Model = try await service.request(to: endpoint, via: environment)
        let second: Model = try await service.request(to: endpoint, via: environment)
        #expect(first == second && first.property == "metrics")

        let records = logger.records
        let ids = Array(Set(records.map(\.requestID))).sorted()
        #expect(ids.count == 2)
        let firstRecords = records.filter { $0.requestID == ids[0] }
        let secondRecords = records.filter { $0.requestID == ids[1] }
        #expect(firstRecords.map(\.event) == [.request, .retry, .refresh, .refresh, .refresh, .response])
        #expect(
            firstRecords.compactMap(\.step) == [
                .retrying(attempt: 1, delay: 0.1, reason: "HTTP 503"), .refreshStarted, .refreshFinished,
                .reauthorized,
            ])
        let firstMetrics = try #require(firstRecords.last?.metrics)
        #expect(firstMetrics.transactions.map(\.statusCode) == [503, 401, 200])
        #expect(firstMetrics.transactions.map(\.method) == ["GET", "GET", "GET"], "the refresh's POST is not counted")
        #expect(firstMetrics.transactions.map(\.attempt) == [1, 2, 3])
        #expect(firstMetrics.attempts == 3)
        #expect(secondRecords.map(\.event) == [.request, .cache, .cache, .response])
        #expect(secondRecords.compactMap(\.step) == [.revalidating, .servedFromCache])
        #expect(secondRecords.last?.metrics?.transactions.map(\.statusCode) == [304])
        #expect(secondRecords.last?.statusCode == 200)

        // What the server saw: four requests, the credential each carried, the conditional one.
        let seen = server.requests(path: "/doc")
        #expect(server.requests(path: "/refresh").count == 1)
        #expect(
            seen.map(\.bearerToken) == ["stack-old-secret", "stack-old-secret", "stack-new-secret", "stack-new-secret"])
        #expect(seen.map { $0.header("If-None-Match") } == [nil, nil, nil, "\"e1\""])
        let text = ExchangeEventTests.allText(records)
        #expect(!text.contains("stack-old-secret") && !text.contains("stack-new-secret"))
    }
}

#if canImport(CCurl)
    @Suite("Metrics against nginx: TLS and HTTP/2")
    struct TLSMetricsTests {
        @Test("Over TLS with HTTP/2: the TLS phase, h2, nginx's port; a second request reuses the connection")
        func tlsAndHTTP2() async throws {
            let fixture = try await PinningTransportTests.Fixture()
            defer { fixture.stop() }
            let transport = PinningTransport(pinnedDomains: [
                "localhost": PublicKeyPinningEvaluator(
                    pinnedKeyHashes: [try fixture.keyHash(fixture.pki.leafPath)], performDefaultValidation: false)
            ])
            let service = HTTPNetworkService(transport: transport, authService: InMemoryAuthService())
            let environment = DefaultAPIEnvironment(baseURL: URL(string: "https://localhost:\(fixture.nginx.port)"))
            var transactions: [TransactionMetrics] = []
            for _ in 0..<2 {
                let (model, _, metrics): (Model, HTTPURLResponse, RequestMetrics) =
                    try await service
                    .requestWithMetrics(to: Endpoint(path: "/pinned.json", method: .get), via: environment)
                #expect(model.property == "pinned")
                transactions += metrics.transactions
            }
            let first = transactions[0]
            #expect(first.networkProtocol == "h2")
            #expect(first.remotePort == Int(fixture.nginx.port) && first.remoteAddress == "127.0.0.1")
            let connect = try #require(first.connectEnd)
            let tls = try #require(first.secureConnectionEnd)
            #expect(tls > connect, "the TLS handshake comes after the TCP connect")
            #expect(try #require(first.secureConnection) > 0)
            #expect(first.responseBodyDecodedBytes == Int64(#"{"id":1,"property":"pinned"}"#.utf8.count))
            TransactionMetricsWireTests.expectOrdered(first)
            #expect(transactions[1].isReusedConnection == true && transactions[1].secureConnectionEnd == nil)
            #expect(transactions[1].networkProtocol == "h2")
            let log = await fixture.nginx.accessLog(atLeast: 2)
            #expect(log.count == 2 && log.allSatisfy { $0.contains("HTTP/2.0\"") }, "\(log)")
        }
    }
#endif
