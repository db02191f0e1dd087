import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing

@testable import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What a careless caller can hand the library: header names and values with CR/LF/NUL,
/// non-HTTP URLs, timeouts of any `Double`. Each is a typed error or a normal exchange, never a
/// crash, and an invalid request sends nothing.
@Suite("Careless callers: validation before sending, any Double as a timeout")
struct CarelessCallerTests {
    @Test(
        "A CR/LF header name or a CR/LF/NUL value is .invalidRequest naming the header; nothing is sent",
        arguments: TransportKind.all)
    func headerInjection(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let transport = try kind.make()
        // A name cannot be dropped by Foundation: the transport refuses it.
        var injected = URLRequest(url: server.url("/x"))
        injected.setValue("1", forHTTPHeaderField: "X-Note\r\nX-Injected: 1")
        do {
            _ = try await transport.data(for: injected)
            Issue.record("the injected header name was sent")
        } catch let error as TransportError {
            #expect(error.code == .invalidRequest)
            #expect(error.message.contains("X-Note\\r\\nX-Injected"))
        }
        // Values are checked before Foundation could drop them: through the service.
        let service = HTTPNetworkService(transport: transport, authService: InMemoryAuthService(token: "t"))
        let environment = DefaultAPIEnvironment(baseURL: server.baseURL)
        for (name, value) in [("Authorization", "Bearer a\r\nX-Evil: 1"), ("X-Trace", "a\nb"), ("X-Nul", "a\0b")] {
            do {
                try await service.requestVoid(
                    to: Endpoint(path: "/x", method: .get, headers: [name: value]), via: environment)
                Issue.record("\(name) was sent")
            } catch let error as NetworkError {
                #expect(error.kind == .invalidRequest)
                #expect(error.message.contains(name))
                #expect(!error.message.contains(value), "the value must never be echoed")
            }
        }
        do {
            try await service.requestVoid(
                to: Endpoint(path: "/x", method: .get, headers: ["Bad Name": "v"]), via: environment)
            Issue.record("a name with a space was sent")
        } catch let error as NetworkError {
            #expect(error.kind == .invalidRequest)
        }
        #expect(server.receivedRequests.isEmpty, "nothing reached the server: \(server.receivedRequests)")
        #expect(server.acceptedConnectionCount == 0, "no connection was even opened")
    }

    @Test(
        "A method that is not an RFC 9110 token is .invalidRequest on every kind of transfer; nothing is sent",
        arguments: TransportKind.all)
    func methodInjection(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let transport = try kind.make()
        let file = makeTemporaryDirectory().appendingPathComponent("upload.bin")
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        try Data("body".utf8).write(to: file)
        // Without the check, the first went out as two requests, the first carrying X-Injected.
        let methods = ["GET /x HTTP/1.1\r\nX-Injected: 1\r\n\r\nGET", "GE T", "GET\0", "PÜT", "GET\t", "getß"]
        for method in methods {
            var built = URLRequest(url: server.url("/x"))
            built.httpMethod = method
            let request = built
            var sends: [(String, @Sendable () async throws -> Void)] = [
                ("data", { _ = try await transport.data(for: request) }),
                ("stream", { _ = try await transport.stream(for: request) }),
            ]
            if let files = transport as? any FileTransferTransport {
                let destination = file.deletingLastPathComponent().appendingPathComponent("download.bin")
                sends.append(("upload", { _ = try await files.upload(for: request, fromFile: file, progress: nil) }))
                sends.append(
                    ("download", { _ = try await files.download(for: request, to: destination, progress: nil) }))
            }
            for (name, send) in sends {
                do {
                    try await send()
                    Issue.record("\(name) with the method \(method.debugDescription) was sent")
                } catch let error as TransportError {
                    #expect(error.code == .invalidRequest, "\(name), \(method.debugDescription): \(error)")
                    #expect(error.message.contains("is not a valid HTTP method"), "\(error.message)")
                }
            }
        }
        #expect(server.receivedRequests.isEmpty, "nothing reached the server: \(server.receivedRequests)")
        #expect(server.acceptedConnectionCount == 0, "no connection was even opened")
    }

    @Test(
        "A Content-Length that contradicts the body, or a Transfer-Encoding, is .invalidRequest; nothing is sent",
        arguments: TransportKind.all)
    func contradictoryFraming(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route(nil, "/x") { request in .text("\(request.method) \(request.body.count)") }
        let transport = try kind.make()
        // A shorter length would leave the rest of the body on the connection, read as the start
        // of the next request on it; a longer one holds the server waiting for bytes never sent.
        let contradictions: [(method: String, body: String?, name: String, value: String)] = [
            ("POST", "hello world", "Content-Length", "5"),
            ("PUT", "hello", "Content-Length", "50"),
            ("GET", nil, "Content-Length", "10"),
            ("POST", "hello", "Content-Length", "5, 5"),
            ("POST", "hello", "Content-Length", "-5"),
            ("POST", "hello", "content-length", "+5"),
            ("POST", "hello", "Transfer-Encoding", "chunked"),
            ("GET", nil, "Transfer-Encoding", "chunked"),
        ]
        for contradiction in contradictions {
            var request = URLRequest(url: server.url("/x"))
            request.httpMethod = contradiction.method
            request.httpBody = contradiction.body.map { Data($0.utf8) }
            request.setValue(contradiction.value, forHTTPHeaderField: contradiction.name)
            let label =
                "\(contradiction.method) \(contradiction.body ?? "<none>") \(contradiction.name): \(contradiction.value)"
            do {
                let (body, _) = try await transport.data(for: request)
                Issue.record("\(label) was sent; the server answered \(String(decoding: body, as: UTF8.self))")
            } catch let error as TransportError {
                #expect(error.code == .invalidRequest, "\(label): \(error)")
                #expect(
                    error.message.lowercased().contains(contradiction.name.lowercased()), "\(label): \(error.message)")
            }
        }
        #expect(server.acceptedConnectionCount == 0, "no connection was even opened")
        // An upload from a file: its length is the file's.
        if let files = transport as? any FileTransferTransport {
            let file = makeTemporaryDirectory().appendingPathComponent("upload.bin")
            defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
            try Data("hello".utf8).write(to: file)
            var upload = URLRequest(url: server.url("/x"))
            upload.httpMethod = "PUT"
            upload.setValue("4", forHTTPHeaderField: "Content-Length")
            await #expect(throws: TransportError.self) {
                _ = try await files.upload(for: upload, fromFile: file, progress: nil)
            }
            upload.setValue("5", forHTTPHeaderField: "Content-Length")
            let (answer, _) = try await files.upload(for: upload, fromFile: file, progress: nil)
            #expect(answer == Data("PUT 5".utf8))
            #expect(server.receivedRequests.count == 1)
            server.clearRecordedRequests()
        }
        #expect(server.receivedRequests.isEmpty, "nothing reached the server: \(server.receivedRequests)")

        // A length that agrees with the body is sent once, as the transport frames it.
        for (method, body, value) in [("POST", "hello", "5"), ("PUT", "hello", "005"), ("GET", "", "0")] {
            var request = URLRequest(url: server.url("/x"))
            request.httpMethod = method
            request.httpBody = body.isEmpty ? nil : Data(body.utf8)
            request.setValue(value, forHTTPHeaderField: "Content-Length")
            let (answer, response) = try await transport.data(for: request)
            #expect(response.statusCode == 200)
            #expect(answer == Data("\(method) \(body.utf8.count)".utf8))
        }
        let lengths = server.receivedRequests.map { request in
            request.headers.filter { $0.name.lowercased() == "content-length" }.map(\.value)
        }
        #expect(lengths == [["5"], ["5"], []] || lengths == [["5"], ["5"], ["0"]], "\(lengths)")
    }

    @Test(
        "A body stream is sent whole, and a redirect that keeps the body sends it again", arguments: TransportKind.all)
    func bodyStream(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route(nil, "/x") { request in .text("\(request.method) \(request.body.count)") }
        server.route(nil, "/moved") { _ in .redirect(to: "/x", status: 307) }
        let transport = try kind.make()
        let body = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0) })
        for path in ["/x", "/moved"] {
            var request = URLRequest(url: server.url(path))
            request.httpMethod = "POST"
            request.httpBodyStream = InputStream(data: body)
            let (answer, _) = try await transport.data(for: request)
            #expect(answer == Data("POST 100000".utf8), "\(path)")
        }
        #expect(server.receivedRequests.map(\.path) == ["/x", "/moved", "/x"])
        #expect(server.receivedRequests.map(\.body) == [body, body, body])
        server.clearRecordedRequests()

        // A stream that cannot be read is refused before anything is sent.
        let connectionsBefore = server.acceptedConnectionCount
        var unreadable = URLRequest(url: server.url("/x"))
        unreadable.httpMethod = "POST"
        unreadable.httpBodyStream = InputStream(url: makeTemporaryDirectory().appendingPathComponent("missing"))
        do {
            _ = try await transport.data(for: unreadable)
            Issue.record("a request with an unreadable body stream was sent")
        } catch let error as TransportError {
            #expect(error.code == .invalidRequest)
            #expect(error.message.contains("body stream failed"), "\(error.message)")
        }
        #expect(server.receivedRequests.isEmpty)
        #expect(server.acceptedConnectionCount == connectionsBefore, "no connection was opened for it")
    }

    @Test(
        "A stored token or an additional header that is not a valid field is refused, never sent without it",
        arguments: TransportKind.all)
    func invalidCredentialValues(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let environment = DefaultAPIEnvironment(baseURL: server.baseURL)
        // A refresh endpoint that hands out a token with a trailing newline: Foundation's
        // `setValue` dropped the whole header on Linux, and the request went out unauthenticated.
        for token in ["tok-123456\n", "tok-123456\r\n X-Evil: 1", "tok\u{0}123456"] {
            let service = HTTPNetworkService(transport: try kind.make(), authService: InMemoryAuthService(token: token))
            do {
                try await service.requestVoid(
                    to: Endpoint(path: "/x", method: .get, requiresAuth: true), via: environment)
                Issue.record("sent with the token \(token.debugDescription)")
            } catch let error as NetworkError {
                #expect(error.kind == .authorizationFailed, "\(error)")
                #expect((error.underlyingError as? TransportError)?.code == .invalidRequest, "\(error)")
                #expect(error.message.contains("Authorization") && !error.message.contains("123456"), "\(error)")
            }
        }
        #if canImport(CCurl)
            // PinningTransport adds the configuration's `httpAdditionalHeaders` itself on Linux.
            let configuration = URLSessionConfiguration.ephemeral
            configuration.httpAdditionalHeaders = ["X-Client": "app\n1.0"]
            let pinning = PinningTransport(pinnedDomains: [:], configuration: configuration)
            do {
                _ = try await pinning.data(for: URLRequest(url: server.url("/x")))
                Issue.record("sent without its additional header")
            } catch let error as TransportError {
                #expect(error.code == .invalidRequest && error.message.contains("X-Client"), "\(error)")
            }
        #endif
        #expect(server.receivedRequests.isEmpty, "nothing reached the server: \(server.receivedRequests)")
        #expect(server.acceptedConnectionCount == 0, "no connection was even opened")
    }

    @Test("A body stream whose read claims more bytes than the buffer holds is .invalidRequest, not a trap")
    func overReportingBodyStream() throws {
        let result = RequestBodyStream.readAll(EndlessStream(claimFactor: 2), limit: 1_000_000, url: nil)
        guard case .failure(let error) = result else {
            Issue.record("an over-reporting stream was read")
            return
        }
        #expect(error.code == .invalidRequest)
    }

    @Test("A mock service's latency of Int64.max seconds waits (cancellable), never traps")
    func hugeMockLatency() async throws {
        let service = MockNetworkService(responseJSON: "{}", duration: .seconds(Int64.max))
        let task = Task {
            try await service.requestVoid(
                to: Endpoint(path: "/x", method: .get), via: DefaultAPIEnvironment(baseURL: URL(fileURLWithPath: "/")))
        }
        try await Task.sleep(nanoseconds: 100_000_000)
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
    }

    @Test("An endless body stream stops at the limit with .invalidRequest")
    func endlessBodyStream() throws {
        let result = RequestBodyStream.readAll(EndlessStream(), limit: 1_000_000, url: nil)
        guard case .failure(let error) = result else {
            Issue.record("an endless stream was read whole")
            return
        }
        #expect(error.code == .invalidRequest)
        #expect(error.message.contains("more than 1000000 bytes"), "\(error.message)")
        let exact = RequestBodyStream.readAll(InputStream(data: Data(count: 1_000_000)), limit: 1_000_000, url: nil)
        #expect((try? exact.get())?.count == 1_000_000)
    }

    @Test("Only http and https URLs are sent, on every transport", arguments: TransportKind.all)
    func schemes(kind: TransportKind) async throws {
        let transport = try kind.make()
        // The last two parse as URLs but libcurl refuses their host (CURLE_URL_MALFORMAT), which
        // both transports reported as `.other`.
        for text in [
            "ftp://127.0.0.1/x", "file:///etc/passwd", "gopher://127.0.0.1/", "http:///nohost", "http://a$b/",
            "http://a%20b/",
        ] {
            let url = try #require(URL(string: text))
            do {
                _ = try await transport.data(for: URLRequest(url: url))
                Issue.record("\(text) was sent")
            } catch let error as TransportError {
                #expect(error.code == .invalidRequest, "\(text): \(error)")
            }
        }
    }

    @Test("The byte-level URL check agrees with URL's own scheme and host")
    func fastURLCheck() {
        let accepted = ["http://a", "HTTPS://a.b:1/x", "http://u:p@h/", "http://[::1]:8/", "https://h?q", "http://h#f"]
        let refused = [
            "http://", "http:///x", "https://:80/", "http://@/", "http://[]/", "httpx://h", "ftp://h", "http:/h",
            "file:///etc", "htt://h",
        ]
        for text in accepted { #expect(RequestValidator.isHTTPURLWithHost(text), "\(text)") }
        for text in refused { #expect(!RequestValidator.isHTTPURLWithHost(text), "\(text)") }
    }

    @Test(
        "A timeout of infinity, NaN, a huge or a negative value never crashes: the request is sent",
        arguments: TransportKind.all)
    func anyDoubleAsTimeout(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/t") { _ in .json(#"{"id":1,"property":"ok"}"#) }
        let transport = try kind.make()
        let service = HTTPNetworkService(transport: transport)
        let environment = DefaultAPIEnvironment(baseURL: server.baseURL)
        let values: [Double] = [
            .infinity, -.infinity, .nan, .greatestFiniteMagnitude, -1, 0, 1e300, -.leastNonzeroMagnitude,
        ]
        for value in values {
            let model: Model = try await service.request(
                to: Endpoint(path: "/t", method: .get, timeoutInterval: value), via: environment)
            #expect(model.property == "ok", "\(value)")
            var raw = URLRequest(url: server.url("/t"))
            raw.timeoutInterval = value
            let (_, response) = try await transport.data(for: raw)
            #expect(response.statusCode == 200, "\(value)")
        }
        #expect(server.requests(path: "/t").count == values.count * 2)
    }

    /// A transport of `kind` whose fallbacks are set: libcurl's connect timeout, or the
    /// session's request timeout (60 s, its default, unless given), on a session that keeps no
    /// cookies and no cache.
    private static func transport(
        _ kind: TransportKind, connectTimeout: TimeInterval, sessionRequestTimeout: TimeInterval = 60
    ) throws -> any HTTPTransportProtocol {
        switch kind {
        case .urlSession:
            let configuration = URLSessionConfiguration.ephemeral
            configuration.httpCookieStorage = nil
            configuration.urlCache = nil
            configuration.timeoutIntervalForRequest = sessionRequestTimeout
            return URLSessionTransport(session: URLSession(configuration: configuration))
        case .curl:
            #if canImport(CCurl)
                return try CurlTransport(configuration: CurlTransport.Configuration(connectTimeout: connectTimeout))
            #else
                throw TransportError(.other, url: nil, message: "CurlTransport is Linux-only")
            #endif
        }
    }

    @Test(
        "A raw request with no usable timeout (0, NaN, negative) waits 60 s for a byte on every transport, not the connect timeout",
        arguments: TransportKind.all)
    func unusableTimeoutFallsBackToSixtySeconds(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/late") { _ in .text("late").with { $0.delayBeforeHeaders = 2 } }
        // A connect timeout of 0.5 s: CurlTransport used it as the idle timeout of such a
        // request, so a head 2 s away was `.timedOut` there (checked at libcurl's ~1 s ticks)
        // and a 200 on URLSessionTransport.
        let transport = try Self.transport(kind, connectTimeout: 0.5)
        for value in [0, .nan, -5] as [Double] {
            var request = URLRequest(url: server.url("/late"))
            request.timeoutInterval = value
            let (body, response) = try await transport.data(for: request)
            #expect(response.statusCode == 200 && body == Data("late".utf8), "\(value)")
        }
        #expect(server.requests(path: "/late").count == 3)
    }

    @Test(
        "A timeout under a second is that long: a 0.1 s wait for the head fits in 0.9 s (corelibs made it 1 ms)",
        arguments: TransportKind.all)
    func subSecondTimeout(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/slow") { _ in .text("late").with { $0.delayBeforeHeaders = 0.1 } }
        // Shutdown interrupts the wait: a long one, so a late timer still ends before it.
        server.route("GET", "/slower") { _ in .text("too late").with { $0.delayBeforeHeaders = 300 } }
        // Fallbacks of 600 s (the session's request timeout, libcurl's connect timeout): a
        // transport that ignored the request's timeout would end there, far above the bound
        // below, which a starved run needs (over 20 s once, under ThreadSanitizer).
        let transport = try Self.transport(kind, connectTimeout: 600, sessionRequestTimeout: 600)
        var request = URLRequest(url: server.url("/slow"))
        request.timeoutInterval = 0.9
        // The first of up to three tries that succeeds counts: a starved run can stall past
        // 0.8 s of headroom once; a 1 ms timer fails all three, every time.
        var answer: (Data, HTTPURLResponse)?
        for _ in 0..<3 where answer == nil { answer = try? await transport.data(for: request) }
        let (body, response) = try #require(answer, "three tries of 0.9 s for a head sent after 0.1 s all failed")
        #expect(response.statusCode == 200)
        #expect(String(decoding: body, as: UTF8.self) == "late")

        // And it is still enforced: 0.5 s of silence fails after about 0.5 s (up to ~1 s on
        // CurlTransport, which checks at libcurl's progress ticks; the server waits 300 s). The
        // upper bound only rules out a timeout that was not applied: under ThreadSanitizer with
        // the whole suite in parallel, the failure took over 5 s to reach the test.
        var silent = URLRequest(url: server.url("/slower"))
        silent.timeoutInterval = 0.5
        let started = Date()
        do {
            _ = try await transport.data(for: silent)
            Issue.record("no timeout")
        } catch let error as TransportError {
            #expect(error.code == .timedOut)
        }
        let elapsed = Date().timeIntervalSince(started)
        #expect(elapsed >= 0.45 && elapsed < 200, "\(elapsed) s")
    }

    @Test(
        "A body stream whose producer stalls (a FIFO nobody writes to) is cancellable: CancellationError at once",
        arguments: TransportKind.all)
    func stalledBodyStreamCancels(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let directory = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fifo = directory.appendingPathComponent("body")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        // A writer that never writes: the stream's open returns, its read blocks.
        let writer = Locked(open(fifo.path, O_RDWR | O_CLOEXEC))
        #expect(writer.current >= 0)
        // Closed once: by the watchdog below, or at the end.
        let closeWriter: @Sendable () -> Void = {
            writer.withLock { descriptor in
                if descriptor >= 0 { close(descriptor) }
                descriptor = -1
            }
        }
        defer { closeWriter() }
        var request = URLRequest(url: server.url("/up"))
        request.httpMethod = "POST"
        request.httpBodyStream = InputStream(fileAtPath: fifo.path)
        let sent = request
        let transport = try kind.make()
        let task = Task { try await transport.data(for: sent) }
        try await Task.sleep(nanoseconds: 200_000_000)
        let cancelledAt = Date()
        task.cancel()
        let ended = Locked(false)
        let watchdog = Task {
            try await Task.sleep(nanoseconds: 60_000_000_000)
            // Ends a reader that ignored the cancellation (end of file), so the test fails
            // rather than hangs.
            if !ended.current { closeWriter() }
        }
        let result = await task.result
        ended.withLock { $0 = true }
        watchdog.cancel()
        let elapsed = Date().timeIntervalSince(cancelledAt)
        guard case .failure(let error) = result else {
            Issue.record("the request completed")
            return
        }
        // Without the fix the read ignores the cancellation: the request goes on when the
        // watchdog ends the stream after 60 s, and completes. The bound is loose: under
        // ThreadSanitizer with the whole suite in parallel, the cancellation took 7.6 s to reach
        // the test (0.1 s alone).
        #expect(error is CancellationError, "\(error)")
        #expect(elapsed < 55, "\(elapsed) s after the cancellation")
        #expect(server.acceptedConnectionCount == 0, "nothing was sent")
    }

    @Test(
        "A body stream that gives nothing for the request's timeout is .timedOut, not sent; a GET with one is .invalidRequest before reading",
        arguments: TransportKind.all)
    func stalledBodyStreamTimesOut(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let directory = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fifo = directory.appendingPathComponent("body")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        // A writer that writes a few bytes, then nothing: the stream's reads block after them.
        let writer = open(fifo.path, O_RDWR | O_CLOEXEC)
        #expect(writer >= 0)
        defer { close(writer) }
        #expect(write(writer, "first", 5) == 5)
        let transport = try kind.make()
        for method in ["GET", "POST"] {
            var request = URLRequest(url: server.url("/up"))
            request.httpMethod = method
            request.timeoutInterval = 1
            request.httpBodyStream = InputStream(fileAtPath: fifo.path)
            let sent = request
            let started = Date()
            // Without the fix a POST waited for the stream for ever (the task below would be
            // cancelled by the test's own bound), and a GET read it all before it was refused.
            // The bound is loose: under ThreadSanitizer the first half minute of the suite starves
            // every task (27.9 s measured for this one).
            let task = Task { try await transport.data(for: sent) }
            let bound = Task {
                try await Task.sleep(nanoseconds: 150_000_000_000)
                task.cancel()
            }
            let result = await task.result
            bound.cancel()
            let elapsed = Date().timeIntervalSince(started)
            guard case .failure(let error) = result else {
                Issue.record("\(method): the request completed")
                continue
            }
            let expected: TransportError.Code = method == "GET" ? .invalidRequest : .timedOut
            #expect((error as? TransportError)?.code == expected, "\(method): \(error)")
            // Loose, as above. Without the fixes the test's own 150 s bound ends both
            // (CancellationError, a different kind).
            #expect(elapsed < 140, "\(method): \(elapsed) s")
        }
        #expect(server.acceptedConnectionCount == 0, "nothing was sent")
    }

    @Test(
        "A body stream's idle watchdog is gone once the read ends, whichever way (read whole, timed out, cancelled), even with an infinite timeout"
    )
    func bodyStreamWatchdogIsReleased() async throws {
        let watch = ObjectWatch()
        let directory = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fifo = directory.appendingPathComponent("body")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        // Held open (the readers block, no end of file) until the readers are let go below.
        var writer: Int32 = open(fifo.path, O_RDWR | O_CLOEXEC)
        defer { if writer >= 0 { close(writer) } }
        func request(_ stream: InputStream, timeout: TimeInterval) throws -> URLRequest {
            var request = URLRequest(url: try #require(URL(string: "https://api.example.com/up")))
            request.httpMethod = "POST"
            request.timeoutInterval = timeout
            request.httpBodyStream = stream
            return request
        }
        try await ObjectWatch.$current.withValue(watch) {
            // Read whole, with a timeout of 31 years (what `.infinity` becomes).
            for _ in 0..<20 {
                let read = try await RequestBodyStream.reading(
                    try request(InputStream(data: Data("abc".utf8)), timeout: .infinity))
                #expect(read.httpBody == Data("abc".utf8))
            }
            // Timed out: a stream that gives nothing.
            await #expect(throws: TransportError.self) {
                _ = try await RequestBodyStream.reading(try request(InputStream(fileAtPath: fifo.path)!, timeout: 0.3))
            }
            // Cancelled while waiting, with an infinite timeout.
            let stalled = try request(InputStream(fileAtPath: fifo.path)!, timeout: .infinity)
            let task = Task { try await RequestBodyStream.reading(stalled) }
            try await Task.sleep(nanoseconds: 100_000_000)
            task.cancel()
            await #expect(throws: CancellationError.self) { _ = try await task.value }
        }
        #expect(watch.registered["RequestBodyStream.WatchdogTimer"] == 22, "\(watch.registered)")
        // The two readers still blocked in the FIFO hold their reads' state until the stream
        // gives them something (documented): an end of file lets them go.
        close(writer)
        writer = -1
        // Before: each read left a dispatch timer pending for its whole timeout, 31 years here.
        // Up to a minute: a starved ThreadSanitizer run delays the readers' ends by seconds.
        for _ in 0..<6000 where !watch.alive.isEmpty { try await Task.sleep(nanoseconds: 10_000_000) }
        #expect(watch.alive.isEmpty, "still alive: \(watch.alive)")
    }

    @Test("Transport settings take any Double without trapping")
    func anyDoubleInSettings() throws {
        for value in [Double.infinity, .nan, -1, .greatestFiniteMagnitude] {
            _ = URLSessionTransport(totalTimeout: value)
            #if canImport(CCurl)
                _ = CurlTransport.Configuration(connectTimeout: value, totalTimeout: value)
            #endif
            #expect(Clamp.milliseconds(value) >= 1)
            #expect(Clamp.wholeSeconds(value) >= 1)
            #expect(Clamp.nanoseconds(value) <= UInt64(Clamp.maxSeconds * 1e9))
        }
    }

    #if canImport(CCurl)
        @Test("Finished streams free their transfer: no request outlives its stream")
        func streamsDoNotLeak() async throws {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            server.route("GET", "/s") { _ in LoopbackResponse.text(String(repeating: "x", count: 200_000)) }
            let transport = try CurlTransport()
            let before = CurlEasyRequest.liveCount
            for _ in 0..<20 {
                let (stream, _) = try await transport.stream(for: URLRequest(url: server.url("/s")), bufferSize: 16_384)
                var count = 0
                for try await chunk in stream { count += chunk.count }
                #expect(count == 200_000)
            }
            // Streams abandoned after the head, too.
            for _ in 0..<5 {
                let (stream, _) = try await transport.stream(for: URLRequest(url: server.url("/s")), bufferSize: 1024)
                stream.cancel()
            }
            // The loop releases each request when libcurl is done with it.
            try await waitUntil { CurlEasyRequest.liveCount <= before }
            #expect(CurlEasyRequest.liveCount <= before, "\(CurlEasyRequest.liveCount - before) requests leaked")
        }
    #endif
}

/// A stream of zeros that never ends; its `read` reports `claimFactor` times the bytes it was
/// given room for (1: honest; 2: a subclass that over-reports).
private final class EndlessStream: InputStream {
    private var claimFactor = 1
    override init(data: Data) { super.init(data: data) }
    convenience init(claimFactor: Int = 1) {
        self.init(data: Data())
        self.claimFactor = claimFactor
    }
    override var hasBytesAvailable: Bool { true }
    override func open() {}
    override func close() {}
    override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength length: Int) -> Int {
        buffer.update(repeating: 0, count: length)
        return length * claimFactor
    }
}
