import Foundation
import GentleNetworking

/// An in-process HTTP/1.1 server on a real loopback socket, for integration tests and demos.
///
/// ```swift
/// let server = try LoopbackServer()
/// defer { server.shutdown() }
/// server.route("GET", "/api/models") { _ in .json(#"[{"id": 1}]"#) }
/// // … point a client at server.baseURL …
/// #expect(server.requests(path: "/api/models").count == 1)
/// ```
///
/// - It binds `127.0.0.1` on a port the kernel picks and reports ``baseURL``.
/// - Each connection gets its own thread; handlers run on it and may block or sleep.
/// - Keep-alive, `Content-Length` and chunked request bodies, and `Expect: 100-continue`
///   are supported; many clients may connect at once.
/// - Every request is recorded (``receivedRequests``).
/// - Faults are injected through ``LoopbackResponse``: delays before headers or mid-body,
///   closing mid-body, raw bytes; ``LoopbackServer/sequence(_:)`` answers with a series.
/// - ``shutdown()`` closes every socket and waits for every thread it started; dropping the
///   last reference to the server does the same (its threads do not keep it alive).
public final class LoopbackServer: Sendable {
    /// Answers one request. Runs on the connection's thread.
    public typealias Handler = @Sendable (LoopbackRequest) -> LoopbackResponse

    /// The port the server listens on.
    public let port: UInt16
    /// `http://127.0.0.1:<port>`.
    public let baseURL: URL
    /// The socket, the recorded state and the threads. The server's threads hold only this,
    /// never the server, so dropping the last reference to the server runs `deinit`.
    private let core: LoopbackServerCore

    /// Starts a server.
    ///
    /// - Parameter fallback: Answers requests no route matches; a 404 naming the path by default.
    /// - Throws: When no loopback socket can be opened.
    public init(fallback: Handler? = nil) throws {
        let (descriptor, port) = try POSIXSocket.listenOnLoopback()
        self.port = port
        self.baseURL = URL(string: "http://127.0.0.1:\(port)")!  // A literal IPv4 host and a port always parse.
        self.core = LoopbackServerCore(
            listener: descriptor, threadNamePrefix: "LB\(port).",
            fallback: fallback ?? { request in .text("No route for \(request.method) \(request.path)", status: 404) })
        core.start()
    }

    /// Shuts the server down as ``shutdown()`` does (waiting for its threads) when the last
    /// reference to it goes away, so a server a test forgot to shut down leaves nothing behind.
    deinit {
        core.acceptor.shutdown()
    }

    /// The absolute URL for `path` (which may include a `?query`) on this server: always
    /// ``baseURL``'s scheme, host and port, whatever `path` holds.
    ///
    /// `path` is taken as path text: leading slashes are collapsed to one (`"x.json"` and
    /// `"//x.json"` both give `/x.json`), so `"//evil.example/x"` is the path `/evil.example/x`
    /// and `"http://evil.example/"` the path `/http://evil.example/`, both on this server. Bytes a
    /// path or query cannot hold (spaces, `#`, `\`, non-ASCII, control characters) are
    /// percent-encoded; valid escapes such as `%20` are kept. The empty string gives `/`.
    public func url(_ path: String) -> URL {
        ServerURL.url(path, on: baseURL)
    }

    /// The prefix of the names of this server's threads, `LB<port>.` (thread names are capped
    /// at 15 characters on Linux), so a test can check that none outlive ``shutdown()``.
    public var threadNamePrefix: String { core.acceptor.threadNamePrefix }

    /// Answers requests for exactly `path` (percent-decoded, without the query).
    ///
    /// - Parameters:
    ///   - method: The method to match, such as `"GET"`; `nil` matches any. Later routes win
    ///     over earlier ones for the same request, so a test can replace a route.
    ///   - path: The path to match.
    ///   - handler: Builds the response.
    public func route(_ method: String?, _ path: String, handler: @escaping Handler) {
        core.state.withLock {
            $0.routes.append(.init(method: method?.uppercased(), path: path, isPrefix: false, handler: handler))
        }
    }

    /// Answers requests whose path starts with `prefix`.
    public func route(_ method: String?, prefix: String, handler: @escaping Handler) {
        core.state.withLock {
            $0.routes.append(.init(method: method?.uppercased(), path: prefix, isPrefix: true, handler: handler))
        }
    }

    /// A handler that answers with `responses` in turn, then repeats the last one: such as
    /// `sequence([.status(503), .status(503), .json("{}")])`.
    public static func sequence(_ responses: [LoopbackResponse]) -> Handler {
        let next = Locked(0)
        return { _ in
            let index = next.withLock { value -> Int in
                defer { value += 1 }
                return value
            }
            guard !responses.isEmpty else { return .status(500) }
            return responses[min(index, responses.count - 1)]
        }
    }

    /// Every request received so far, in arrival order.
    public var receivedRequests: [LoopbackRequest] { core.state.current.requests }

    /// The requests received for `path`.
    public func requests(path: String) -> [LoopbackRequest] {
        core.state.current.requests.filter { $0.path == path }
    }

    /// How many TCP connections were accepted so far.
    public var acceptedConnectionCount: Int { core.acceptor.acceptedConnectionCount }

    /// How many times a client closed its connection while a response was held back by a
    /// delay: what a cancelled request looks like from the server.
    public var clientHangUpCount: Int { core.state.current.clientHangUps }

    /// How many responses were written completely (the last byte handed to the socket).
    public var completedResponseCount: Int { core.state.current.completedResponses }

    /// Forgets the recorded requests.
    public func clearRecordedRequests() {
        core.state.withLock { $0.requests.removeAll() }
    }

    /// Stops accepting, closes every connection and waits (up to 10 s) for every server thread.
    /// Safe to call more than once.
    public func shutdown() {
        core.acceptor.shutdown()
    }
}

/// A ``LoopbackServer``'s socket, state and threads: everything its threads need, and nothing
/// that keeps the server itself alive.
private final class LoopbackServerCore: Sendable {
    typealias Handler = LoopbackServer.Handler

    struct Route {
        let method: String?
        let path: String
        let isPrefix: Bool
        let handler: Handler
    }

    struct State {
        var routes: [Route] = []
        var requests: [LoopbackRequest] = []
        var clientHangUps = 0
        var completedResponses = 0
    }

    let state = Locked(State())
    /// The listener, the connections, their threads and the stop flag.
    let acceptor: ConnectionAcceptor
    private let fallback: Handler

    init(listener: Int32, threadNamePrefix: String, fallback: @escaping Handler) {
        self.acceptor = ConnectionAcceptor(listener: listener, threadNamePrefix: threadNamePrefix)
        self.fallback = fallback
    }

    /// Starts accepting; each connection is served on its own thread, then closed.
    func start() {
        acceptor.start { [self] descriptor, id in
            serve(connection: descriptor, id: id)
            return { POSIXSocket.closeDescriptor(descriptor) }
        }
    }

    private var isStopped: Bool { acceptor.isStopped }

    // MARK: Serving

    private func serve(connection descriptor: Int32, id: Int) {
        var parser = HTTPRequestParser()
        var readBuffer = [UInt8](repeating: 0, count: 64 * 1024)
        func readMore() -> Bool {
            let count = POSIXSocket.receive(descriptor, into: &readBuffer)
            guard count > 0 else { return false }
            parser.append(readBuffer[0..<count])
            return true
        }
        while !isStopped {
            let head: HTTPRequestParser.Head
            do {
                var parsed = try parser.nextHead()
                while parsed == nil {
                    guard readMore() else { return }
                    parsed = try parser.nextHead()
                }
                guard let parsed else { return }
                head = parsed
            } catch {
                POSIXSocket.sendAll(
                    descriptor, Array("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8)
                )
                return
            }
            if head.header("Expect")?.lowercased() == "100-continue" {
                POSIXSocket.sendAll(descriptor, Array("HTTP/1.1 100 Continue\r\n\r\n".utf8))
            }
            let isChunked = head.header("Transfer-Encoding")?.lowercased().contains("chunked") ?? false
            var body = Data()
            do {
                if isChunked {
                    while true {
                        if let chunked = try parser.nextChunkedBody() {
                            body = chunked
                            break
                        }
                        guard readMore() else { return }
                    }
                } else if let lengthText = head.header("Content-Length") {
                    guard let length = Int(lengthText), length >= 0 else { return }
                    while true {
                        if let bytes = parser.nextBytes(length) {
                            body = bytes
                            break
                        }
                        guard readMore() else { return }
                    }
                }
            } catch {
                return
            }
            let request = LoopbackRequest(
                method: head.method, target: head.target, headers: head.headers, body: body,
                httpVersion: head.version, connectionID: id, wasChunked: isChunked)
            let handler = state.withLock { state -> Handler in
                state.requests.append(request)
                return state.routes.last { route in
                    (route.method == nil || route.method == request.method.uppercased())
                        && (route.isPrefix ? request.path.hasPrefix(route.path) : request.path == route.path)
                }?.handler ?? fallback
            }
            let response = handler(request)
            let clientWantsClose =
                head.header("Connection")?.lowercased() == "close"
                || (head.version == "HTTP/1.0" && head.header("Connection")?.lowercased() != "keep-alive")
            let keepOpen = write(
                response, to: descriptor, for: request, closing: clientWantsClose || response.closeConnection)
            if keepOpen { state.withLock { $0.completedResponses += 1 } }
            if !keepOpen || clientWantsClose || response.closeConnection { return }
        }
    }

    /// Writes `response` with its faults; returns whether the connection may be reused.
    private func write(
        _ response: LoopbackResponse, to descriptor: Int32, for request: LoopbackRequest, closing: Bool
    )
        -> Bool
    {
        if response.delayBeforeHeaders > 0, !pause(response.delayBeforeHeaders, watching: descriptor) {
            return false
        }
        if let raw = response.rawBytes {
            POSIXSocket.sendAll(descriptor, raw)
            return false
        }
        var head = "HTTP/1.1 \(response.status) \(Self.reason(response.status))\r\n"
        for header in response.headers {
            head += "\(header.name): \(header.value)\r\n"
        }
        let sendsBody = request.method != "HEAD" && response.status != 204 && response.status != 304
        if response.chunked {
            head += "Transfer-Encoding: chunked\r\n"
        } else if response.status != 204 && response.status != 304 {
            let length = response.segments.map { $0.reduce(0) { $0 + $1.count } } ?? response.body.count
            head += "Content-Length: \(length)\r\n"
        }
        if closing || response.closeMidBody || response.closeAfterSegments != nil { head += "Connection: close\r\n" }
        head += "\r\n"
        guard POSIXSocket.sendAll(descriptor, Array(head.utf8)) else { return false }
        guard sendsBody else { return true }
        if let segments = response.segments {
            for (index, segment) in segments.enumerated() {
                if index == response.closeAfterSegments { return false }
                if index > 0, response.segmentDelay > 0, !pause(response.segmentDelay, watching: descriptor) {
                    return false
                }
                guard send([UInt8](segment)[...], chunked: response.chunked, to: descriptor) else { return false }
            }
            if response.closeAfterSegments == segments.count { return false }
            if response.chunked {
                guard POSIXSocket.sendAll(descriptor, Array("0\r\n\r\n".utf8)) else { return false }
            }
            return true
        }

        let body = [UInt8](response.body)
        let pausesMidBody = response.delayMidBody > 0 || response.closeMidBody
        let firstPart = pausesMidBody ? body.count / 2 : body.count
        guard send(body[0..<firstPart], pacedBy: response, to: descriptor) else { return false }
        if pausesMidBody {
            if response.delayMidBody > 0, !pause(response.delayMidBody, watching: descriptor) { return false }
            if response.closeMidBody { return false }
            guard send(body[firstPart...], pacedBy: response, to: descriptor) else { return false }
        }
        if response.chunked {
            guard POSIXSocket.sendAll(descriptor, Array("0\r\n\r\n".utf8)) else { return false }
        }
        return true
    }

    /// Sends `bytes` in pieces of the response's chunk size, framed when it is chunked.
    private func send(_ bytes: ArraySlice<UInt8>, pacedBy response: LoopbackResponse, to descriptor: Int32) -> Bool {
        var offset = bytes.startIndex
        let step = max(1, response.chunkSize)
        while offset < bytes.endIndex {
            // `step` may be as large as Int.max ("don't chunk"): compare it with what is left
            // rather than adding it to `offset`.
            let end = bytes.endIndex - offset > step ? offset + step : bytes.endIndex
            guard send(bytes[offset..<end], chunked: response.chunked, to: descriptor) else { return false }
            offset = end
        }
        return true
    }

    private func send(_ bytes: ArraySlice<UInt8>, chunked: Bool, to descriptor: Int32) -> Bool {
        guard chunked else { return POSIXSocket.sendAll(descriptor, bytes) }
        guard !bytes.isEmpty else { return true }
        var frame = Array((String(bytes.count, radix: 16) + "\r\n").utf8)
        frame.append(contentsOf: bytes)
        frame.append(contentsOf: Array("\r\n".utf8))
        return POSIXSocket.sendAll(descriptor, frame)
    }

    /// Sleeps for `seconds`, waking early when the server stops or the client hangs up.
    ///
    /// - Returns: `false` when the client closed the connection during the pause (the hang-up
    ///   is counted in ``clientHangUpCount``), `true` otherwise.
    private func pause(_ seconds: TimeInterval, watching descriptor: Int32) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline && !isStopped {
            if POSIXSocket.peerHasClosed(descriptor) {
                state.withLock { $0.clientHangUps += 1 }
                return false
            }
            Thread.sleep(forTimeInterval: min(0.01, max(0, deadline.timeIntervalSinceNow)))
        }
        return true
    }

    private static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 304: "Not Modified"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 408: "Request Timeout"
        case 429: "Too Many Requests"
        case 500: "Internal Server Error"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        default: "Status"
        }
    }
}
