import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing

@testable import JustNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

#if !canImport(Darwin)
    /// A session delegate that answers redirects itself: it records what it was asked (the
    /// request it was offered, and whether it ran on the session's delegate queue), refuses a
    /// hop to a path ending in `/refused` and answers a hop to `/tampered` with a `file:` URL.
    private final class DecidingDelegate: NSObject, URLSessionTaskDelegate, Sendable {
        let offered = Locked<[URLRequest]>([])
        let onDelegateQueue = Locked<[Bool]>([])
        let queue: OperationQueue

        init(queue: OperationQueue) {
            self.queue = queue
        }

        func urlSession(
            _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
            newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
        ) {
            offered.withLock { $0.append(request) }
            onDelegateQueue.withLock { $0.append(OperationQueue.current === queue) }
            switch request.url?.path {
            case let path? where path.hasSuffix("/refused"): completionHandler(nil)
            case let path? where path.hasSuffix("/tampered"):
                completionHandler(URLRequest(url: URL(fileURLWithPath: "/etc/hostname")))
            default: completionHandler(request)
            }
        }
    }

    /// The `URLSession` requester over a session with a delegate of its own, on Linux: it sends
    /// through a `URLSessionTransport` made from the session (as for a session without one) and
    /// asks the delegate about redirects. It used the session's own data task, which held the
    /// body out of sight until it ended and never completed on a 401 challenge its delegate
    /// did not answer.
    @Suite("JustNetworking: a session with its own delegate gets the transport's limits and deadlines (Linux)")
    struct OwnDelegateSessionTransportTests {
        static func session(delegate: (any URLSessionDelegate)? = nil, queue: OperationQueue? = nil) -> URLSession {
            final class PlainDelegate: NSObject, URLSessionTaskDelegate, Sendable {}
            let configuration = URLSessionConfiguration.ephemeral
            configuration.urlCache = nil
            return URLSession(
                configuration: configuration, delegate: delegate ?? PlainDelegate(), delegateQueue: queue)
        }

        /// Runs `request` and waits at most `seconds` for its callback: `nil` if none came.
        static func deliver<T: Request>(
            _ request: T, via session: URLSession, within seconds: Double
        ) async -> Result<T.Response, any Error>? where T.Response: Sendable {
            let waiting = Locked<CheckedContinuation<Result<T.Response, any Error>?, Never>?>(nil)
            return await withCheckedContinuation { continuation in
                waiting.withLock { $0 = continuation }
                DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
                    waiting.withLock { state in
                        defer { state = nil }
                        return state
                    }?.resume(returning: nil)
                }
                session.execute(request) { result in
                    waiting.withLock { state in
                        defer { state = nil }
                        return state
                    }?.resume(returning: result)
                }
            }
        }

        @Test("A 401 with WWW-Authenticate is delivered with its body, within the timeout (it never completed)")
        func challenge() async throws {
            let server = try HostileServer()
            defer { server.shutdown() }
            server.route("/private", .challenge(body: Data("sign in".utf8)))
            let session = Self.session()
            defer { session.invalidateAndCancel() }
            let factory = RequestFactory(
                router: FixedBaseRouter(server.baseURL, "private"), requestBuilder: set(to: \.timeoutInterval, 600))
            // Below the 600 s timeout, above a starved TSan run's stalls (one took over 45 s).
            let result = await Self.deliver(RequestType<Void>(requestFactory: factory), via: session, within: 200)
            guard case .failure(let error)? = result,
                case .unacceptableStatusCode(let status, _, let body)? = error as? JustNetworkingError
            else {
                Issue.record("\(String(describing: result))")
                return
            }
            #expect(status == 401)
            #expect(body == Data("sign in".utf8))
            #expect(server.requests(path: "/private").count == 1)
        }

        @Test("A body of no declared length past 100 MiB ends with .responseTooLarge (it was held whole)")
        func undeclaredLengthPastTheLimit() async throws {
            let server = try HostileServer()
            defer { server.shutdown() }
            let head = Data(
                "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nConnection: close\r\n\r\n".utf8)
            server.route("/big", .raw(head + Data(repeating: 0x61, count: 101 << 20), thenClose: true))
            let session = Self.session()
            defer { session.invalidateAndCancel() }
            let factory = RequestFactory(router: FixedBaseRouter(server.baseURL, "big"))
            let result = await Self.deliver(RequestType<Void>(requestFactory: factory), via: session, within: 150)
            guard case .failure(let error)? = result else {
                Issue.record("expected .responseTooLarge, got \(String(describing: result))")
                return
            }
            #expect((error as? TransportError)?.code == .responseTooLarge, "\(error)")
        }

        @Test("The delegate decides each redirect the rules allow, on its queue, offered without the credentials")
        func delegateDecides() async throws {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            let other = try LoopbackServer()
            defer { other.shutdown() }
            other.route("GET", "/landing") { _ in .status(204) }
            other.route("GET", "/refused") { _ in .status(204) }
            server.route("GET", "/away") { _ in .redirect(to: other.url("/landing").absoluteString) }
            server.route("GET", "/no") { _ in .redirect(to: other.url("/refused").absoluteString) }
            let queue = OperationQueue()
            queue.maxConcurrentOperationCount = 1
            let delegate = DecidingDelegate(queue: queue)
            let session = Self.session(delegate: delegate, queue: queue)
            defer { session.invalidateAndCancel() }
            let credentials = addHeaders(["Authorization": "Bearer request-secret", "X-Api-Key": "key-secret"])

            let away = await Self.deliver(
                RequestType<Void>(
                    requestFactory: RequestFactory(
                        router: FixedBaseRouter(server.baseURL, "away"), requestBuilder: credentials)),
                via: session, within: 150)
            guard case .success? = away else {
                Issue.record("\(String(describing: away))")
                return
            }
            let landed = try #require(other.requests(path: "/landing").first)
            #expect(landed.header("Authorization") == nil && landed.header("X-Api-Key") == nil)
            let offered = try #require(delegate.offered.current.first)
            #expect(offered.url?.path == "/landing")
            #expect(offered.value(forHTTPHeaderField: "Authorization") == nil, "offered as it would be sent")
            #expect(offered.value(forHTTPHeaderField: "X-Api-Key") == nil)

            let refused = await Self.deliver(
                RequestType<Void>(requestFactory: RequestFactory(router: FixedBaseRouter(server.baseURL, "no"))),
                via: session, within: 150)
            guard case .failure(let error)? = refused,
                case .unacceptableStatusCode(let status, _, _)? = error as? JustNetworkingError
            else {
                Issue.record("\(String(describing: refused))")
                return
            }
            #expect(status == 302, "the refused redirect is the response")
            #expect(other.requests(path: "/refused").isEmpty)

            // An answer that could not be sent as a request of the caller's: a typed error.
            server.route("GET", "/swap") { _ in .redirect(to: other.url("/tampered").absoluteString) }
            let swapped = await Self.deliver(
                RequestType<Void>(requestFactory: RequestFactory(router: FixedBaseRouter(server.baseURL, "swap"))),
                via: session, within: 150)
            guard case .failure(let swapError)? = swapped else {
                Issue.record("\(String(describing: swapped))")
                return
            }
            #expect((swapError as? TransportError)?.code == .invalidRequest, "\(swapError)")
            #expect(other.receivedRequests.count == 1, "only /landing: \(other.receivedRequests.map(\.path))")
            #expect(delegate.offered.current.count == 3)
            #expect(delegate.onDelegateQueue.current == [true, true, true])
        }

        /// A 307 that keeps a POST's body is sent again by the transport itself (corelibs would
        /// send it empty): the delegate is asked about that hop as well.
        @Test("A 307 that keeps the body is decided by the delegate too: followed with the body, or the response")
        func delegateDecidesBodyRedirects() async throws {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            server.route("POST", "/send") { _ in .redirect(to: "/landing", status: 307) }
            server.route("POST", "/landing") { _ in .status(204) }
            server.route("POST", "/kept") { _ in .redirect(to: "/refused", status: 307) }
            server.route("POST", "/refused") { _ in .status(204) }
            let queue = OperationQueue()
            queue.maxConcurrentOperationCount = 1
            let delegate = DecidingDelegate(queue: queue)
            let session = Self.session(delegate: delegate, queue: queue)
            defer { session.invalidateAndCancel() }
            let body = set(to: \.httpBody, Data("payload".utf8))

            let sent = await Self.deliver(
                RequestType<Void>(
                    requestFactory: RequestFactory(
                        router: FixedBaseRouter(server.baseURL, "send", .post), requestBuilder: body)),
                via: session, within: 150)
            guard case .success? = sent else {
                Issue.record("\(String(describing: sent))")
                return
            }
            #expect(server.requests(path: "/landing").first?.body == Data("payload".utf8))
            #expect(delegate.offered.current.map { $0.url?.path } == ["/landing"])

            let kept = await Self.deliver(
                RequestType<Void>(
                    requestFactory: RequestFactory(
                        router: FixedBaseRouter(server.baseURL, "kept", .post), requestBuilder: body)),
                via: session, within: 150)
            guard case .failure(let error)? = kept,
                case .unacceptableStatusCode(let status, _, _)? = error as? JustNetworkingError
            else {
                Issue.record("\(String(describing: kept))")
                return
            }
            #expect(status == 307, "the refused redirect is the response")
            #expect(server.requests(path: "/refused").isEmpty)
            #expect(delegate.onDelegateQueue.current == [true, true])
        }
    }
#endif
