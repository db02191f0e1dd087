import Foundation
import GentleNetworking

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A misbehaving HTTP/1.1 server on a real loopback socket that writes raw bytes, for testing
/// how a client copes with endless bodies, compression bombs, slow drips, floods, resets and
/// malformed framing.
///
/// ```swift
/// let server = try HostileServer()
/// defer { server.shutdown() }
/// server.route("/feed", .endlessBody(chunked: false))
/// server.route("/bomb", .compressionBomb(decodedBytes: 10 << 30))
/// // … point a client at server.url("/feed"), cancel it …
/// #expect(server.clientHangUpCount == 1)
/// ```
///
/// - It binds `127.0.0.1` on a port the kernel picks; each connection gets its own thread,
///   named ``threadNamePrefix`` + `c<n>`.
/// - Every request is read in full (head and `Content-Length` or chunked body) and recorded
///   (``receivedRequests``) before the route's ``HostileBehavior`` runs.
/// - Writes never block for long and never raise SIGPIPE: between writes and while holding,
///   the server watches for the client going away (within about 25 ms) and then stops,
///   counting it in ``clientHangUpCount``. ``bytesSentCount`` shows how much it wrote.
/// - ``shutdown()`` closes every socket and waits for every thread it started; dropping the
///   last reference to the server does the same (its threads do not keep it alive).
public final class HostileServer: Sendable {
    /// How a connection's socket is let go.
    fileprivate enum Ending {
        /// Close at once.
        case close
        /// Half-close, let the client read what was sent and close first (up to 200 ms), then close.
        case linger
        /// Close with a TCP RST.
        case reset
    }

    /// The port the server listens on.
    public let port: UInt16
    /// `http://127.0.0.1:<port>`.
    public let baseURL: URL
    /// The socket, the recorded state and the threads. The server's threads hold only this,
    /// never the server, so dropping the last reference to the server runs `deinit`.
    private let core: HostileServerCore

    /// Starts a server with no routes: every path answers `404` with a short text body.
    ///
    /// - Throws: When no loopback socket can be opened.
    public init() throws {
        let (descriptor, port) = try POSIXSocket.listenOnLoopback()
        self.port = port
        self.baseURL = URL(string: "http://127.0.0.1:\(port)")!  // A literal IPv4 host and a port always parse.
        self.core = HostileServerCore(listener: descriptor, threadNamePrefix: "H\(port).", requestReadRate: nil)
        core.start()
    }

    /// A server that reads every request at about `bytesPerSecond` (at least 1,024), in 16 KiB
    /// reads with a pause after each, from a socket whose receive buffer is kept at 32 KiB: a
    /// client's upload then takes about its size over that rate (less what the client's own
    /// send buffer holds), bytes going out all along, as to a slow or distant server.
    public init(requestReadRate bytesPerSecond: Int) throws {
        let (descriptor, port) = try POSIXSocket.listenOnLoopback()
        var size: Int32 = 32 * 1024
        setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        self.port = port
        self.baseURL = URL(string: "http://127.0.0.1:\(port)")!  // A literal IPv4 host and a port always parse.
        self.core = HostileServerCore(
            listener: descriptor, threadNamePrefix: "H\(port).", requestReadRate: max(1024, bytesPerSecond))
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

    /// The prefix of the names of this server's threads, `H<port>.` (thread names are capped at
    /// 15 characters on Linux), so a test can check that none outlive ``shutdown()``.
    public var threadNamePrefix: String { core.acceptor.threadNamePrefix }

    /// Answers requests for exactly `path` (the request target's path, percent-decoded, without
    /// the query) with `behavior`. A later route for the same path replaces an earlier one (and
    /// starts its own ``HostileBehavior/sequence(_:)`` count).
    public func route(_ path: String, _ behavior: HostileBehavior) {
        core.state.withLock { state in
            state.routes.append(.init(path: path, behavior: behavior, id: state.routes.count))
        }
    }

    /// Every request received so far, in arrival order.
    public var receivedRequests: [LoopbackRequest] { core.state.current.requests }

    /// The requests received for `path`.
    public func requests(path: String) -> [LoopbackRequest] {
        core.state.current.requests.filter { $0.path == path }
    }

    /// Forgets the recorded requests (the counters and byte counts stay).
    public func clearRecordedRequests() {
        core.state.withLock { $0.requests.removeAll() }
    }

    /// How many TCP connections were accepted so far.
    public var acceptedConnectionCount: Int { core.acceptor.acceptedConnectionCount }

    /// How many times a client went away (closed or reset its connection) while the server was
    /// still sending or holding a response: what a cancelled or size-limited client looks like
    /// from here. A close after a complete answer, or during ``shutdown()``, does not count.
    public var clientHangUpCount: Int { core.state.current.clientHangUps }

    /// The bytes written to sockets so far for every response, heads included.
    public var bytesSentCount: Int64 { core.state.current.bytesSent }

    /// The bytes written so far in answer to requests for `path`, heads included.
    public func bytesSent(path: String) -> Int64 {
        core.state.current.bytesSentByPath[path] ?? 0
    }

    /// Stops accepting, closes every connection (ending every behaviour) and waits (up to 10 s)
    /// for every server thread. Safe to call more than once.
    public func shutdown() {
        core.acceptor.shutdown()
    }
}

/// A ``HostileServer``'s socket, state and threads: everything its threads need, and nothing
/// that keeps the server itself alive.
private final class HostileServerCore: Sendable {
    struct Route {
        let path: String
        let behavior: HostileBehavior
        let id: Int
    }

    struct State {
        var routes: [Route] = []
        var answeredByRoute: [Int: Int] = [:]
        var requests: [LoopbackRequest] = []
        var clientHangUps = 0
        var bytesSentByPath: [String: Int64] = [:]
        var bytesSent: Int64 = 0
    }

    let state = Locked(State())
    /// The listener, the connections, their threads and the stop flag.
    let acceptor: ConnectionAcceptor
    /// Bytes per second a request is read at; `nil`: as fast as it comes.
    let requestReadRate: Int?

    init(listener: Int32, threadNamePrefix: String, requestReadRate: Int?) {
        self.acceptor = ConnectionAcceptor(listener: listener, threadNamePrefix: threadNamePrefix)
        self.requestReadRate = requestReadRate
    }

    /// Starts accepting; each connection acts out behaviours on its own thread, then is let go
    /// the way its last behaviour asked (closed, lingered over or reset).
    func start() {
        acceptor.start { [self] descriptor, id in
            let connection = HostileConnection(descriptor: descriptor, id: id, server: self)
            let ending = connection.serve()
            return { connection.finish(ending) }
        }
    }

    fileprivate var isStopped: Bool { acceptor.isStopped }

    fileprivate func noteHangUp() {
        state.withLock { $0.clientHangUps += 1 }
    }

    fileprivate func noteSent(_ count: Int, path: String) {
        state.withLock { state in
            state.bytesSent += Int64(count)
            state.bytesSentByPath[path, default: 0] += Int64(count)
        }
    }

    /// Records `request` and picks the behaviour that answers it.
    fileprivate func behavior(recording request: LoopbackRequest) -> HostileBehavior? {
        state.withLock { state -> HostileBehavior? in
            state.requests.append(request)
            guard let route = state.routes.last(where: { $0.path == request.path }) else { return nil }
            let index = state.answeredByRoute[route.id, default: 0]
            state.answeredByRoute[route.id] = index + 1
            return Self.resolve(route.behavior, index: index)
        }
    }

    private static func resolve(_ behavior: HostileBehavior, index: Int) -> HostileBehavior {
        guard case .sequence(let steps) = behavior else { return behavior }
        guard let last = steps.last else { return .status(500) }
        return resolve(index < steps.count ? steps[index] : last, index: index)
    }
}

/// One accepted connection, confined to its thread: reads requests and acts out behaviours.
private final class HostileConnection {
    private let descriptor: Int32
    private let id: Int
    private let server: HostileServerCore
    private var parser = HTTPRequestParser()
    private var readBuffer = [UInt8](repeating: 0, count: 64 * 1024)
    private var path = ""
    private var hungUp = false
    private static let writeSize = 64 * 1024
    private static let watchMilliseconds: Int32 = 25

    init(descriptor: Int32, id: Int, server: HostileServerCore) {
        self.descriptor = descriptor
        self.id = id
        self.server = server
    }

    // MARK: Requests

    /// Serves requests until a behaviour ends the connection; returns how to close it.
    func serve() -> HostileServer.Ending {
        while !server.isStopped {
            let request: LoopbackRequest
            switch readRequest() {
            case .request(let received): request = received
            case .gone: return .close
            case .malformed:
                _ = send(Array("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8))
                return .linger
            }
            path = request.path
            let clientWantsClose =
                request.header("Connection")?.lowercased() == "close"
                || (request.httpVersion == "HTTP/1.0" && request.header("Connection")?.lowercased() != "keep-alive")
            let behavior =
                server.behavior(recording: request)
                ?? .status(404, body: Data("No route for \(request.method) \(request.path)".utf8))
            if let ending = perform(behavior, for: request) { return ending }
            if clientWantsClose { return .linger }
        }
        return .close
    }

    private enum ReadResult {
        case request(LoopbackRequest)
        case gone
        case malformed
    }

    private func readRequest() -> ReadResult {
        do {
            var head = try parser.nextHead()
            while head == nil {
                guard readMore() else { return .gone }
                head = try parser.nextHead()
            }
            guard let head else { return .gone }
            if head.header("Expect")?.lowercased() == "100-continue" {
                guard send(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)) else { return .gone }
            }
            let isChunked = head.header("Transfer-Encoding")?.lowercased().contains("chunked") ?? false
            var body = Data()
            if isChunked {
                while true {
                    if let chunked = try parser.nextChunkedBody() {
                        body = chunked
                        break
                    }
                    guard readMore() else { return .gone }
                }
            } else if let lengthText = head.header("Content-Length") {
                guard let length = Int(lengthText), length >= 0 else { return .malformed }
                while true {
                    if let bytes = parser.nextBytes(length) {
                        body = bytes
                        break
                    }
                    guard readMore() else { return .gone }
                }
            }
            return .request(
                LoopbackRequest(
                    method: head.method, target: head.target, headers: head.headers, body: body,
                    httpVersion: head.version, connectionID: id, wasChunked: isChunked))
        } catch {
            return .malformed
        }
    }

    /// Waits for and reads more request bytes; `false` at end of stream, on error or on shutdown.
    private func readMore() -> Bool {
        while !POSIXSocket.waitReadable(descriptor, milliseconds: 50) {
            if server.isStopped { return false }
        }
        if let rate = server.requestReadRate {
            // A slow reader: 16 KiB at a time, then the pause that keeps to the rate.
            var slice = [UInt8](repeating: 0, count: 16 * 1024)
            let count = POSIXSocket.receive(descriptor, into: &slice)
            guard count > 0 else { return false }
            parser.append(slice[0..<count])
            usleep(useconds_t(min(1_000_000, count * 1_000_000 / rate)))
            return true
        }
        let count = POSIXSocket.receive(descriptor, into: &readBuffer)
        guard count > 0 else { return false }
        parser.append(readBuffer[0..<count])
        return true
    }

    // MARK: Behaviours

    /// Acts out `behavior`; returns how to close the connection, or `nil` to read the next request.
    private func perform(_ behavior: HostileBehavior, for request: LoopbackRequest) -> HostileServer.Ending? {
        switch behavior {
        case .ok(let body, let headers):
            return wellFormed(status: 200, headers: headers, body: body, for: request)
        case .status(let code, let body, let headers):
            return wellFormed(status: code, headers: headers, body: body, for: request)
        case .redirect(let status, let location):
            return wellFormed(status: status, headers: [("Location", location)], body: Data(), for: request)
        case .challenge(let scheme, let status, let body):
            let name = status == 407 ? "Proxy-Authenticate" : "WWW-Authenticate"
            return wellFormed(status: status, headers: [(name, scheme)], body: body, for: request)
        case .endlessBody(let chunked, let status):
            endlessBody(chunked: chunked, status: status)
            return .close
        case .compressionBomb(let decodedBytes, let encoding, let declareLength):
            return compressionBomb(decodedBytes: decodedBytes, encoding: encoding, declareLength: declareLength)
        case .drip(let status, let body, let interval, let declareLength):
            return drip(status: status, body: body, interval: interval, declareLength: declareLength)
        case .dripHeaders(let interval):
            let head = Self.head(status: 200, [("Content-Type", "text/plain"), ("Content-Length", "2")])
            for (index, byte) in head.enumerated() {
                if index > 0 { guard hold(seconds: interval) else { return .close } }
                guard send([byte]) else { return .close }
            }
            return send(Array("ok".utf8)) ? nil : .close
        case .raw(let bytes, let thenClose):
            guard send([UInt8](bytes)) else { return .close }
            return thenClose ? .linger : nil
        case .rawThenHold(let bytes):
            if send([UInt8](bytes)) { _ = hold(seconds: nil) }
            return .close
        case .headerFlood(let count, let valueLength):
            return headerFlood(count: count, valueLength: valueLength)
        case .endlessHeaders:
            endlessHeaders()
            return .close
        case .acceptAndHang:
            _ = hold(seconds: nil)
            return .close
        case .resetBeforeHeaders:
            return .reset
        case .resetMidBody(let bodyLength):
            let length = max(0, bodyLength)
            guard send(Self.head(status: 200, [("Content-Length", "\(length)")])) else { return .close }
            guard sendFiller(count: length / 2) else { return .close }
            guard hold(seconds: 0.05) else { return .close }
            return .reset
        case .truncatedBody(let declared, let sent):
            guard send(Self.head(status: 200, [("Content-Length", "\(declared)")])) else { return .close }
            guard sendFiller(count: sent) else { return .close }
            return .linger
        case .conflictingContentLength(let first, let second, let body):
            let head = Self.head(status: 200, [("Content-Length", "\(first)"), ("Content-Length", "\(second)")])
            guard send(head + [UInt8](body)) else { return .close }
            return .linger
        case .contentLengthList(let value, let body):
            guard send(Self.head(status: 200, [("Content-Length", value)]) + [UInt8](body)) else { return .close }
            return .linger
        case .sequence:
            // Resolved to one step when the request was recorded.
            return wellFormed(status: 500, headers: [], body: Data(), for: request)
        }
    }

    private func wellFormed(
        status: Int, headers: [(String, String)], body: Data, for request: LoopbackRequest
    ) -> HostileServer.Ending? {
        var fields = headers
        fields.append(("Content-Length", "\(body.count)"))
        var bytes = Self.head(status: status, fields)
        if request.method != "HEAD" { bytes += [UInt8](body) }
        return send(bytes) ? nil : .close
    }

    /// Sends `count` `x`s (none when `count` is 0 or less) in writes of at most `writeSize`
    /// bytes, so any count costs one 64 KiB buffer; `false` when `send` returns it.
    private func sendFiller(count: Int) -> Bool {
        let piece = [UInt8](repeating: UInt8(ascii: "x"), count: Self.writeSize)
        var left = max(0, count)
        // At least one call, even for no bytes: `send` also reports a client already gone.
        repeat {
            let size = min(left, piece.count)
            guard send(size == piece.count ? piece : Array(piece[..<size])) else { return false }
            left -= size
        } while left > 0
        return true
    }

    private func endlessBody(chunked: Bool, status: Int) {
        let framing = chunked ? ("Transfer-Encoding", "chunked") : ("Connection", "close")
        guard send(Self.head(status: status, [("Content-Type", "application/json"), framing])) else { return }
        var piece = [UInt8]()
        piece.reserveCapacity(Self.writeSize)
        while piece.count < Self.writeSize { piece += [UInt8(ascii: ","), UInt8(ascii: "0")] }
        let first = Array("[0".utf8) + piece.dropFirst(2)
        let frame = { (bytes: [UInt8]) -> [UInt8] in
            chunked ? Array("\(String(bytes.count, radix: 16))\r\n".utf8) + bytes + Array("\r\n".utf8) : bytes
        }
        guard send(frame(first)) else { return }
        let next = frame(piece)
        while send(next) {}
    }

    private func compressionBomb(decodedBytes: Int64, encoding: String, declareLength: Bool) -> HostileServer.Ending? {
        var bomb = DeflateBomb(
            decodedBytes: decodedBytes, framing: encoding.lowercased() == "deflate" ? .zlib : .gzip)
        var headers = [("Content-Type", "application/json"), ("Content-Encoding", encoding)]
        headers.append(declareLength ? ("Content-Length", "\(bomb.compressedByteCount)") : ("Connection", "close"))
        guard send(Self.head(status: 200, headers)) else { return .close }
        while let chunk = bomb.nextChunk(maxBytes: Self.writeSize) {
            guard send(chunk) else { return .close }
        }
        return declareLength ? nil : .linger
    }

    private func drip(status: Int, body: Data, interval: TimeInterval, declareLength: Bool) -> HostileServer.Ending? {
        let framing = declareLength ? ("Content-Length", "\(body.count)") : ("Connection", "close")
        guard send(Self.head(status: status, [("Content-Type", "application/octet-stream"), framing])) else {
            return .close
        }
        for byte in body {
            guard hold(seconds: interval), send([byte]) else { return .close }
        }
        return declareLength ? nil : .linger
    }

    private func headerFlood(count: Int, valueLength: Int) -> HostileServer.Ending? {
        let value = String(repeating: "a", count: max(0, valueLength))
        var pending = Array("HTTP/1.1 200 OK\r\n".utf8)
        if count > 0 {
            for index in 1...count {
                pending += Array("X-Flood-\(index): \(value)\r\n".utf8)
                if pending.count >= Self.writeSize {
                    guard send(pending) else { return .close }
                    pending.removeAll(keepingCapacity: true)
                }
            }
        }
        pending += Array("Content-Type: text/plain\r\nContent-Length: 2\r\n\r\nok".utf8)
        return send(pending) ? nil : .close
    }

    private func endlessHeaders() {
        guard send(Array("HTTP/1.1 200 OK\r\n".utf8)) else { return }
        let value = String(repeating: "a", count: 100)
        var index = 0
        while true {
            var batch = [UInt8]()
            batch.reserveCapacity(Self.writeSize + 200)
            while batch.count < Self.writeSize {
                index += 1
                batch += Array("X-Endless-\(index): \(value)\r\n".utf8)
            }
            guard send(batch) else { return }
        }
    }

    // MARK: Socket

    /// Writes all of `bytes`; `false` when the client went away (counted once) or the server stopped.
    private func send(_ bytes: [UInt8]) -> Bool {
        guard !clientHasGone() else { return false }
        var offset = 0
        while offset < bytes.count {
            if server.isStopped { return false }
            let written = bytes.withUnsafeBytes {
                POSIXSocket.sendWithoutBlocking(descriptor, UnsafeRawBufferPointer(rebasing: $0[offset...]))
            }
            if written < 0 {
                noteHangUp()
                return false
            }
            if written > 0 {
                offset += written
                server.noteSent(written, path: path)
                continue
            }
            // The send buffer is full: wait for room, watching for the client going away.
            let events = POSIXSocket.waitForEvents(
                descriptor, Int32(POLLOUT) | Int32(POLLIN), milliseconds: Self.watchMilliseconds)
            if events & (Int32(POLLERR) | Int32(POLLHUP)) != 0 || (events & Int32(POLLIN) != 0 && clientHasGone()) {
                noteHangUp()
                return false
            }
        }
        return true
    }

    /// Waits `seconds` (forever when `nil`) for the client to go away; `true` when the time ran
    /// out with the client still there, `false` when it left (counted once) or the server stopped.
    private func hold(seconds: TimeInterval?) -> Bool {
        let deadline = seconds.map { Date().addingTimeInterval($0) }
        while !server.isStopped {
            var slice = Self.watchMilliseconds
            if let deadline {
                let left = deadline.timeIntervalSinceNow
                if left <= 0 { return true }
                slice = Int32(min(Double(slice), max(1, (left * 1000).rounded(.up))))
            }
            let events = POSIXSocket.waitForEvents(descriptor, Int32(POLLIN), milliseconds: slice)
            guard events != 0 else { continue }
            if clientHasGone() { return false }
            // Pipelined bytes are waiting; they are not a hang-up, so just wait out the slice.
            Thread.sleep(forTimeInterval: Double(slice) / 1000)
        }
        return false
    }

    /// Whether the client closed or reset the connection (counted once), or the server stopped.
    private func clientHasGone() -> Bool {
        if hungUp || server.isStopped { return true }
        guard POSIXSocket.peerHasClosed(descriptor) else { return false }
        noteHangUp()
        return true
    }

    private func noteHangUp() {
        guard !hungUp, !server.isStopped else { return }
        hungUp = true
        server.noteHangUp()
    }

    /// Closes the socket as `ending` says.
    func finish(_ ending: HostileServer.Ending) {
        switch ending {
        case .close:
            POSIXSocket.closeDescriptor(descriptor)
        case .reset:
            POSIXSocket.resetAndClose(descriptor)
        case .linger:
            POSIXSocket.shutdownWrite(descriptor)
            let deadline = Date().addingTimeInterval(0.2)
            var scratch = [UInt8](repeating: 0, count: 4096)
            while Date() < deadline && !server.isStopped {
                guard POSIXSocket.waitReadable(descriptor, milliseconds: Self.watchMilliseconds) else { continue }
                if POSIXSocket.receive(descriptor, into: &scratch) <= 0 { break }
            }
            POSIXSocket.closeDescriptor(descriptor)
        }
    }

    // MARK: Heads

    /// `HTTP/1.1 <status> <reason>`, the `fields` in order, and the blank line.
    private static func head(status: Int, _ fields: [(String, String)]) -> [UInt8] {
        var text = "HTTP/1.1 \(status) \(reason(status))\r\n"
        for (name, value) in fields { text += "\(name): \(value)\r\n" }
        text += "\r\n"
        return Array(text.utf8)
    }

    private static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 204: "No Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 304: "Not Modified"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 407: "Proxy Authentication Required"
        case 429: "Too Many Requests"
        case 500: "Internal Server Error"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        default: "Status"
        }
    }
}
