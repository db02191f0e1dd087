import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing

@testable import JustNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

#if !canImport(Darwin)
    /// The `URLSession` requester against servers that a plain data task of corelibs' URLSession
    /// mishandles on Linux: it sends through a `URLSessionTransport` over the session.
    @Suite("The URLSession requester keeps the transport's guarantees")
    struct URLSessionRequesterTests {
        /// How long a callback may take before the test calls it a hang (without the fix the 401
        /// never completes at all). Generous: under ThreadSanitizer, with this group's other
        /// tests, every test here took 80 s and more to be delivered on CI (the cooperative pool
        /// of two threads is shared by all of them), and the suite's tests commonly take 90 s.
        static let hangLimit: TimeInterval = 180

        /// What `requester` delivers for `request`, or `nil` when nothing arrived within `seconds`
        /// (a hang is a failed expectation, not a stuck run).
        func delivery<T: Request>(
            _ request: T, via requester: any Requester, within seconds: TimeInterval
        ) async -> Delivery<T.Response>? where T.Response: Sendable {
            let marked = MarkedQueue()
            let once = Locked(false)
            return await withCheckedContinuation { (continuation: CheckedContinuation<Delivery<T.Response>?, Never>) in
                let finish: @Sendable (Delivery<T.Response>?) -> Void = { value in
                    let first = once.withLock { done -> Bool in
                        defer { done = true }
                        return !done
                    }
                    if first { continuation.resume(returning: value) }
                }
                requester.execute(request) { result in
                    finish(Delivery(result: result, onResponseQueue: marked.isCurrent))
                }
                DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { finish(nil) }
            }
        }

        @Test("A 401 with WWW-Authenticate is delivered as unacceptableStatusCode(401), not a hang")
        func challenge() async throws {
            let server = try HostileServer()
            defer { server.shutdown() }
            server.route("/fault", .challenge(body: Data("denied".utf8)))
            let request = RequestType<Void>(
                requestFactory: RequestFactory(router: FixedBaseRouter(server.baseURL, "fault")))

            let delivered = await delivery(request, via: makeIsolatedSession(), within: Self.hangLimit)

            let result = try #require(delivered, "no callback within \(Self.hangLimit) s")
            guard case .unacceptableStatusCode(401, _, let body) = result.error as? JustNetworkingError else {
                Issue.record("expected unacceptableStatusCode(401), got \(String(describing: result.error))")
                return
            }
            #expect(body == Data("denied".utf8))
            #expect(server.requests(path: "/fault").count == 1)
        }

        @Test("A 307 to a POST sends the body again, unchanged, to the new location")
        func temporaryRedirectKeepsBody() async throws {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            server.route("POST", "/old") { _ in .redirect(to: "/new", status: 307) }
            server.route("POST", "/new") { request in .json(#"{"id":"\#(request.body.count)","name":"moved"}"#) }
            let body = Data(repeating: 0x41, count: 4096)
            let factory = RequestFactory(router: FixedBaseRouter(server.baseURL, "old", .post)) { request in
                var request = request
                request.httpBody = body
                return request
            }
            let request = RequestType<User>(requestFactory: factory)

            let delivered = await delivery(request, via: makeIsolatedSession(), within: Self.hangLimit)

            #expect(try #require(delivered).value == User(id: "4096", name: "moved"))
            #expect(server.requests(path: "/new").map(\.method) == ["POST"])
            #expect(server.requests(path: "/new").first?.body == body)
        }

        @Test("A declared body above the 100 MiB default limit fails with responseTooLarge before it is read")
        func bodyLimit() async throws {
            let server = try HostileServer()
            defer { server.shutdown() }
            let head = "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: 209715200\r\n\r\n"
            server.route("/fault", .rawThenHold(Data(head.utf8)))
            let request = RequestType<Void>(
                requestFactory: RequestFactory(router: FixedBaseRouter(server.baseURL, "fault")))

            let delivered = await delivery(request, via: makeIsolatedSession(), within: Self.hangLimit)

            let error = try #require(delivered, "no callback within \(Self.hangLimit) s").error
            #expect((error as? TransportError)?.code == .responseTooLarge, "\(String(describing: error))")
        }

        @Test("A server that never answers: URLError(.timedOut) after the request's timeout, as a data task gives")
        func idleTimeout() async throws {
            let server = try HostileServer()
            defer { server.shutdown() }
            server.route("/fault", .acceptAndHang)
            let factory = RequestFactory(router: FixedBaseRouter(server.baseURL, "fault")) { request in
                var request = request
                request.timeoutInterval = 1
                return request
            }

            let delivered = await delivery(
                RequestType<Void>(requestFactory: factory), via: makeIsolatedSession(), within: Self.hangLimit)

            // The type is the point; the bound only says it did not hang.
            let error = try #require(delivered, "no callback within \(Self.hangLimit) s").error
            #expect((error as? URLError)?.code == .timedOut, "\(String(describing: error))")
        }

        @Test("The transport's errors map back to what a data task delivers")
        func deliverable() {
            let url = URL(string: "http://h/x")
            let timedOut = SessionRequesterTransports.deliverable(TransportError(.timedOut, url: url, message: "idle"))
            #expect((timedOut as? URLError)?.code == .timedOut)
            #expect((timedOut as? URLError)?.failingURL == url)
            let redirects = SessionRequesterTransports.deliverable(
                TransportError(.tooManyRedirects, url: url, message: "11"))
            #expect((redirects as? URLError)?.code == .httpTooManyRedirects)
            #expect((SessionRequesterTransports.deliverable(CancellationError()) as? URLError)?.code == .cancelled)
            let underlying = URLError(.cannotConnectToHost)
            let wrapped = TransportError(.cannotConnect, url: url, message: "refused", underlyingError: underlying)
            #expect((SessionRequesterTransports.deliverable(wrapped) as? URLError)?.code == .cannotConnectToHost)
            let notHTTP = TransportError(.badResponse, url: url, message: TransportError.notHTTPResponseMessage)
            #expect(SessionRequesterTransports.deliverable(notHTTP) as? JustNetworkingError == .notHTTPResponse)
            let tooLarge = TransportError(.responseTooLarge, url: url, message: "limit")
            #expect((SessionRequesterTransports.deliverable(tooLarge) as? TransportError)?.code == .responseTooLarge)
            struct Custom: Error {}
            let custom = TransportError(.other, url: url, message: "x", underlyingError: Custom())
            #expect(SessionRequesterTransports.deliverable(custom) is Custom)
        }

        @Test("The transports kept are the 8 most recently used sessions'")
        func cacheBound() {
            let sessions = (0..<10).map { _ in makeIsolatedSession() }
            let first = SessionRequesterTransports.transport(for: sessions[0])
            #expect(SessionRequesterTransports.transport(for: sessions[0]) === first)
            for session in sessions.dropFirst() { _ = SessionRequesterTransports.transport(for: session) }
            #expect(SessionRequesterTransports.transport(for: sessions[0]) !== first, "evicted after 9 others")
            #expect(
                SessionRequesterTransports.transport(for: sessions[9])
                    === SessionRequesterTransports.transport(for: sessions[9]))
        }
    }
#endif
