#if canImport(CCurl)
    import CCurl
    import Foundation
    import FoundationNetworking

    /// A transport on libcurl: the default on Linux, where it is several times faster than
    /// swift-corelibs-foundation's URLSession and can pin TLS keys, which URLSession there cannot.
    ///
    /// - One libcurl multi handle and one event-loop thread per transport, shared by every
    ///   request: connections are reused (keep-alive), and HTTP/2 is negotiated over TLS (ALPN)
    ///   and multiplexed.
    /// - Responses in gzip, deflate, br or zstd are decoded.
    /// - Proxies come from the standard environment variables (`http_proxy`, `HTTPS_PROXY`,
    ///   `no_proxy`, …), as libcurl reads them.
    /// - Cancelling the task removes the transfer and throws `CancellationError` at once.
    /// - At most 1,024 transfers run at once; more wait, in order, for one to end (their
    ///   timeouts start when they run). libcurl 7.x costs O(n) per transfer with n running.
    /// - Redirects are followed (up to ``Configuration/maxRedirects``) with the same rule as
    ///   ``URLSessionTransport``: credentials never cross to another origin; a loop is
    ///   ``TransportError/Code/tooManyRedirects``.
    /// - Failures are ``TransportError``s, never a bare libcurl code.
    public final class CurlTransport: FileTransferTransport {
        /// Settings for a ``CurlTransport``.
        public struct Configuration: Sendable {
            /// The connect timeout in seconds; 30 by default. A request's shorter
            /// `timeoutInterval` wins.
            public var connectTimeout: TimeInterval
            /// The limit on a whole exchange in seconds: every redirect hop, and any wait for a free
            /// transfer slot, share it (a stream's or a download's body too); `nil` (the default)
            /// for none. The request's `timeoutInterval` still applies as an idle timeout (no byte
            /// for that long).
            public var totalTimeout: TimeInterval?
            /// The most redirects followed; 10 by default. 0 returns the 3xx as the response.
            public var maxRedirects: Int
            /// The most connections to one host; 0 (the default) for libcurl's own policy.
            public var maxConnectionsPerHost: Int
            /// How much of a response is accepted: 100 MiB of decoded body in memory, 256 header
            /// fields and 256 KiB of header by default. See ``ResponseLimits``.
            public var limits: ResponseLimits

            /// Creates a configuration.
            ///
            /// - Parameters:
            ///   - connectTimeout: 30 s by default.
            ///   - totalTimeout: `nil` by default.
            ///   - maxRedirects: 10 by default.
            ///   - maxConnectionsPerHost: 0 (libcurl's default) by default.
            ///   - limits: `ResponseLimits()` by default.
            ///
            /// Any `Double` is accepted: NaN, zero or negative timeouts mean the default (connect)
            /// or none (total); infinite and huge ones are capped, never trapped on.
            public init(
                connectTimeout: TimeInterval = 30, totalTimeout: TimeInterval? = nil, maxRedirects: Int = 10,
                maxConnectionsPerHost: Int = 0, limits: ResponseLimits = ResponseLimits()
            ) {
                self.connectTimeout = max(0.001, Clamp.timeout(connectTimeout) ?? 30)
                self.totalTimeout = totalTimeout.flatMap(Clamp.timeout)
                self.limits = limits
                self.maxRedirects = max(0, maxRedirects)
                self.maxConnectionsPerHost = max(0, maxConnectionsPerHost)
            }
        }

        /// The transport's settings.
        public let configuration: Configuration
        private let loop: CurlEventLoop

        /// The transport's event-loop thread as a `TaskExecutor`, for callers who want their
        /// requests' work (building, decoding, what they do with the result) on the thread that
        /// does the I/O: `try await withTaskExecutorPreference(transport.executor) { … }`.
        ///
        /// Not used unless asked for: by default a request's work runs on the global concurrent
        /// executor and only the transfer runs on the loop. With the preference, a response's
        /// body is decoded on the thread that received it and no request crosses threads between
        /// its transfer and its decoding. Measured against nginx serving 25 bytes of JSON, 16 in
        /// flight: in twelve full `gentle-bench` runs (2026-12-02 and 03), 0.72x–1.40x the
        /// requests per second of the same transport without it (a median of 1.12x), at 45–72
        /// against 64–95 µs of CPU per request (less in every run; three later runs on a busy
        /// host: 0.82x, 1.06x, 1.21x, the first at the same CPU); in 8 interleaved
        /// `--load-only 6 16 executor` / `off` pairs, a median 14% less CPU per request
        /// (0.76x–1.01x) at the same requests per second (median 0.97x). At 1 in flight, no
        /// consistent difference (0.88x–1.65x across the twelve runs).
        ///
        /// At the edges:
        /// - Everything under the preference shares one thread with every transfer of this
        ///   transport (child tasks inherit the preference): **never block there** (no
        ///   semaphores, no synchronous I/O, no long computation such as decoding a body of many
        ///   megabytes), or every request of the transport waits.
        /// - Jobs run between rounds of I/O, in the order enqueued: what is queued, then what
        ///   those jobs queue, up to 64 batches before the loop turns to its transfers again (a
        ///   task that re-enqueues itself forever cannot starve them).
        /// - Actor-isolated code (the main actor's included) still runs on its actor.
        /// - Once the transport is gone (its loop stopped), jobs run on the global concurrent
        ///   executor: a task that keeps preferring it is never stranded.
        public var executor: any TaskExecutor { loop }
        let handles = CurlHandlePool()
        let trustByHost: [String: CurlTrustSettings]

        /// The instance ``DefaultTransport`` hands out on Linux, so every default service shares
        /// one connection pool and one thread.
        public static let shared: CurlTransport? = try? CurlTransport()

        /// The `User-Agent` sent when a request has none.
        static let userAgent: String = {
            let libcurl = String(cString: curl_version()).split(separator: " ").first.map(String.init) ?? "libcurl"
            return "GentleNetworking \(libcurl)"
        }()

        /// Creates a transport with its own connection pool and event-loop thread.
        ///
        /// - Parameter configuration: `Configuration()` by default.
        /// - Throws: ``TransportError`` when libcurl cannot be initialized.
        public convenience init(configuration: Configuration = Configuration()) throws {
            try self.init(configuration: configuration, trustByHost: [:])
        }

        /// - Parameter maxRunningTransfers: The most transfers libcurl runs at once; more wait,
        ///   in order, each at most its timeout (the request's `timeoutInterval`, or the total
        ///   timeout when shorter), then `.timedOut`: 1,024 streams held open must not hang every
        ///   other request. ``CurlEventLoop/defaultMaxRunningTransfers`` (1,024) by default;
        ///   tests lower it.
        init(
            configuration: Configuration, trustByHost: [String: CurlTrustSettings],
            maxRunningTransfers: Int = CurlEventLoop.defaultMaxRunningTransfers
        ) throws {
            self.configuration = configuration
            // Keyed as they are looked up; callers hand over a table without duplicates
            // (``PinnedHost/table(_:)``), and a duplicate here keeps the first, never traps.
            self.trustByHost = Dictionary(
                trustByHost.map { (PinnedHost.key($0.key), $0.value) }, uniquingKeysWith: { first, _ in first })
            self.loop = try CurlEventLoop(
                maxConnectionsPerHost: configuration.maxConnectionsPerHost, maxRunningTransfers: maxRunningTransfers)
        }

        deinit {
            loop.shutdown()
        }

        /// Sends `request`, following redirects.
        ///
        /// - Throws: `CancellationError` when cancelled; ``TransportError`` otherwise.
        public func data(for request: URLRequest) async throws -> (Data, HTTPURLResponse) {
            try await data(for: request, progress: nil)
        }

        /// Sends `request`, following redirects, reporting progress.
        ///
        /// - Parameters:
        ///   - request: The request to send.
        ///   - progress: Called on the event-loop thread as bytes move (keep it fast); the last
        ///     call reports completion.
        public func data(
            for request: URLRequest, progress: (@Sendable (TransferProgress) -> Void)?
        ) async throws -> (
            Data, HTTPURLResponse
        ) {
            let request = try await RequestBodyStream.reading(request)
            return try await followingRedirects(request) { current, deadline in
                try await self.send(
                    current, sink: { .memory }, source: { .request }, progress: progress, deadline: deadline)
            }
        }

        /// Downloads the response body of `request` into the file at `destination`, with constant
        /// memory: bytes go from the socket to the file as they arrive.
        ///
        /// The file is written next to `destination` and moved into place when the transfer
        /// completes, so a failed download never leaves a partial file there. The body of any
        /// final status is written (check the returned response's status), but only the body of
        /// a 2xx is unlimited: an error page, or a redirect's own body, is held to the in-memory
        /// limit (``ResponseLimits/maxBodyBytes``, 100 MiB by default), past which the download
        /// fails with ``TransportError/Code/responseTooLarge`` (a hostile server cannot fill the
        /// disk with a 500 that never ends).
        ///
        /// - Parameters:
        ///   - request: The request to send.
        ///   - destination: A file URL; an existing file is replaced. Any other URL is
        ///     ``TransportError/Code/invalidRequest``, and nothing is sent.
        ///   - progress: Called as bytes arrive (not for a redirect's own body); `nil` by default.
        /// - Returns: The final response.
        public func download(
            for request: URLRequest, to destination: URL, progress: (@Sendable (TransferProgress) -> Void)? = nil
        ) async throws -> HTTPURLResponse {
            try await download(for: request, to: destination, maxBytes: nil, progress: progress)
        }

        /// ``download(for:to:progress:)`` with a limit on the body's decoded size: past
        /// `maxBytes`, the transfer stops with ``TransportError/Code/responseTooLarge`` and no
        /// file is left at `destination`.
        ///
        /// - Parameters:
        ///   - request: The request to send.
        ///   - destination: A file URL; an existing file is replaced. Any other URL is
        ///     ``TransportError/Code/invalidRequest``, and nothing is sent.
        ///   - maxBytes: The most body bytes written; `nil` for no limit (constant memory anyway).
        ///   - progress: Called as bytes arrive (not for a redirect's own body); `nil` by default.
        /// - Throws: A `TransportError` for the exchange; a `CocoaError` naming `destination` for
        ///   a file that cannot be created, written or moved into place (`.fileWriteOutOfSpace`
        ///   for a full disk), as a download through memory throws.
        public func download(
            for request: URLRequest, to destination: URL, maxBytes: Int64?,
            progress: (@Sendable (TransferProgress) -> Void)? = nil
        ) async throws -> HTTPURLResponse {
            let destinationPath = try TransportError.downloadDestinationPath(destination, request: request.url)
            let request = try await RequestBodyStream.reading(request)
            // Beside the destination (so the rename cannot cross file systems), named within
            // NAME_MAX even for a destination whose own name is near it.
            let partial = AtomicFile.temporaryPath(for: destinationPath)
            defer { unlink(partial) }
            // The file this download made (device and inode), checked before it is moved into place.
            let made = Locked<(device: UInt64, inode: UInt64)?>(nil)
            let response: HTTPURLResponse
            do {
                (_, response) = try await followingRedirects(request) { current, deadline in
                    // Owner-only: downloads often land in the shared temporary directory. Made
                    // anew for each hop, exclusively: reopened by name, a file another user put
                    // there between hops (in a directory others can write to) was truncated and
                    // written into, keeping its owner and mode, then moved into place.
                    try await self.send(
                        current,
                        sink: {
                            unlink(partial)
                            let descriptor = open(
                                partial, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
                            guard descriptor >= 0 else {
                                throw AtomicFile.Failure(operation: "create", path: partial, code: errno)
                            }
                            var info = stat()
                            if fstat(descriptor, &info) == 0 {
                                made.withLock { $0 = (UInt64(info.st_dev), UInt64(info.st_ino)) }
                            }
                            return .file(descriptor)
                        }, source: { .request }, progress: progress, maxStreamedBytes: maxBytes, deadline: deadline)
                }
                // Still the file this download made (not one put in its place since): else
                // nothing is moved into place.
                var info = stat()
                guard lstat(partial, &info) == 0, let made = made.current,
                    (UInt64(info.st_dev), UInt64(info.st_ino)) == made, info.st_uid == geteuid()
                else {
                    throw AtomicFile.Failure(operation: "rename", path: destinationPath, code: EEXIST)
                }
                guard rename(partial, destinationPath) == 0 else {
                    throw AtomicFile.Failure(operation: "rename", path: destinationPath, code: errno)
                }
            } catch let failure as AtomicFile.Failure {
                // A file that cannot be created, written or moved into place: the `CocoaError` a
                // download through memory throws for the same fault (a full disk is
                // `.fileWriteOutOfSpace` on every path).
                throw failure.cocoaError(target: destinationPath)
            } catch let error as TransportError {
                guard let failure = error.underlyingError as? AtomicFile.Failure else { throw error }
                throw failure.cocoaError(target: destinationPath)
            }
            return response
        }

        /// Sends the contents of `file` as the body of `request` (POST, PUT, PATCH, …), reading it
        /// as the upload proceeds rather than loading it into memory.
        ///
        /// - Parameters:
        ///   - request: The request; GET and HEAD are sent as POST, since they carry no body.
        ///   - file: A file URL; any other URL is ``TransportError/Code/invalidRequest``, and
        ///     nothing is sent or read.
        ///   - progress: Called as bytes are sent and received; `nil` by default.
        /// - Returns: The response body and response.
        public func upload(
            for request: URLRequest, fromFile file: URL, progress: (@Sendable (TransferProgress) -> Void)? = nil
        ) async throws -> (Data, HTTPURLResponse) {
            guard let filePath = file.localFilePath else {
                throw TransportError.notAFileURL(file, role: "upload source", request: request.url)
            }
            var hop = 0
            // A GET or HEAD upload goes as a POST (as URLSession's upload tasks send it), from the
            // first hop on: a 307 or 308 then keeps the POST and the file, as the redirect rule
            // is applied to the request that was sent.
            var upload = request
            let initialMethod = (request.httpMethod ?? "GET").uppercased()
            if initialMethod == "GET" || initialMethod == "HEAD" { upload.httpMethod = "POST" }
            return try await followingRedirects(upload) { current, deadline in
                hop += 1
                let method = (current.httpMethod ?? "GET").uppercased()
                if hop > 1, method == "GET" || method == "HEAD" {
                    // A 301/302/303 turned the upload into a GET (RFC 9110 §15.4): no body now.
                    return try await self.send(
                        current, sink: { .memory }, source: { .request }, progress: progress, deadline: deadline)
                }
                // 307 and 308 keep the method and the body: the file is sent again from the start.
                return try await self.send(
                    current, sink: { .memory },
                    source: {
                        let (descriptor, size) = try RegularFile.opened(filePath, request: request.url)
                        return .file(descriptor, size: size)
                    }, progress: progress, deadline: deadline)
            }
        }

        /// Starts `request` and returns as soon as the response head arrives, with the body as
        /// an ``HTTPByteStream`` of chunks, buffering at most 1 MiB (see
        /// ``stream(for:bufferSize:maxBytes:)``).
        public func stream(for request: URLRequest) async throws -> (HTTPByteStream, HTTPURLResponse) {
            try await stream(for: request, bufferSize: 1 << 20)
        }

        /// Starts `request` and returns as soon as the response head arrives, with the body as an
        /// ``HTTPByteStream`` of chunks. libcurl pauses the socket while the consumer is more than
        /// `bufferSize` bytes behind (backpressure). Redirects are followed.
        ///
        /// - Parameters:
        ///   - request: The request to send.
        ///   - bufferSize: The most bytes buffered before pausing; libcurl's receive buffer is
        ///     the same size (at least 16 KiB, at most 1 MiB).
        ///   - maxBytes: The most body bytes delivered before the stream ends with
        ///     ``TransportError/Code/responseTooLarge``; `nil` (the default) for no limit. Either
        ///     way the stream's memory is bounded by about three times `bufferSize`: the buffer,
        ///     one chunk that may take it past the mark, and libcurl's receive buffer.
        public func stream(
            for request: URLRequest, bufferSize: Int, maxBytes: Int64? = nil
        ) async throws -> (HTTPByteStream, HTTPURLResponse) {
            let request = try await RequestBodyStream.reading(request)
            var tracker = RedirectTracker(
                originalURL: request.url, originalMethod: request.httpMethod, maxRedirects: configuration.maxRedirects)
            var current = request
            let deadline = CurlEasyRequest.deadline(for: configuration)
            while true {
                let buffer = ChunkBuffer<CurlStreamResumer>(highWater: bufferSize)
                let trust = try trust(for: current.url)
                let easy = try CurlEasyRequest(
                    request: current, configuration: configuration, trust: trust, pool: handles, sink: .stream(buffer),
                    maxStreamedBytes: maxBytes, deadline: deadline)
                buffer.attach(CurlStreamResumer(loop: loop, transferNumber: easy.transferNumber))
                let (_, response) = try await run(easy)
                // The stream keeps this transport (and so its event loop) alive until it is done;
                // nothing the transfer owns points back at the stream.
                let stream = HTTPByteStream(
                    next: { try await buffer.next() },
                    cancel: { [self] in
                        easy.cancel()
                        loop.cancel(easy)
                        // What the transfer buffered goes now, even when it had ended already.
                        buffer.finish(CancellationError())
                    })
                guard configuration.maxRedirects > 0, let next = tracker.nextRequest(after: response, for: current)
                else {
                    return (stream, response)
                }
                stream.cancel()
                try tracker.follow(to: next.url, method: next.httpMethod)
                tracker.noteHop(status: response.statusCode, from: current, to: next)
                current = next
            }
        }

        /// Runs `send` for `request` and for each redirect it leads to.
        /// Every hop is given the exchange's deadline (see ``CurlEasyRequest/deadline(for:)``).
        private func followingRedirects(
            _ request: URLRequest, _ send: (URLRequest, UInt64?) async throws -> (Data, HTTPURLResponse)
        ) async throws -> (Data, HTTPURLResponse) {
            var tracker = RedirectTracker(
                originalURL: request.url, originalMethod: request.httpMethod, maxRedirects: configuration.maxRedirects)
            var current = request
            let deadline = CurlEasyRequest.deadline(for: configuration)
            while true {
                let (data, response) = try await send(current, deadline)
                guard configuration.maxRedirects > 0, let next = tracker.nextRequest(after: response, for: current)
                else {
                    return (data, response)
                }
                try tracker.follow(to: next.url, method: next.httpMethod)
                tracker.noteHop(status: response.statusCode, from: current, to: next)
                current = next
            }
        }

        /// Sends one request, without following redirects.
        ///
        /// `sink` and `source` open their files only after the cancellation check, and the easy
        /// request owns (and closes) them from then on, even when it cannot be created.
        private func send(
            _ request: URLRequest, sink: () throws -> CurlEasyRequest.Sink,
            source: () throws -> CurlEasyRequest.Source, progress: (@Sendable (TransferProgress) -> Void)?,
            maxStreamedBytes: Int64? = nil, deadline: UInt64?
        ) async throws -> (Data, HTTPURLResponse) {
            try Task.checkCancellation()
            let trust = try trust(for: request.url)
            let sinkValue = try sink()
            let sourceValue: CurlEasyRequest.Source
            do {
                sourceValue = try source()
            } catch {
                CurlEasyRequest.release(sink: sinkValue, source: .request)
                throw error
            }
            let easy = try CurlEasyRequest(
                request: request, configuration: configuration, trust: trust, pool: handles, sink: sinkValue,
                source: sourceValue, progress: progress, maxStreamedBytes: maxStreamedBytes, deadline: deadline)
            return try await run(easy)
        }

        /// Hands `easy` to the event loop and waits for its result (or, for streams, its head).
        private func run(_ easy: CurlEasyRequest) async throws -> (Data, HTTPURLResponse) {
            let (body, head) = try await runHead(easy)
            guard let response = CurlEasyRequest.makeResponse(url: easy.url, head: head) else {
                throw TransportError(
                    .badResponse, url: easy.url, message: "The server sent no valid status line.")
            }
            return (body, response)
        }

        /// ``run(_:)`` without building the `HTTPURLResponse`.
        func runHead(_ easy: CurlEasyRequest) async throws -> (Data, CurlEasyRequest.ResponseHead) {
            let (body, head) = try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    easy.setContinuation(continuation)
                    if Task.isCancelled {
                        easy.cancel()
                        easy.cleanup()
                        return
                    }
                    loop.submit(easy)
                }
            } onCancel: { [loop] in
                easy.cancel()
                loop.cancel(easy)
            }
            guard (100...999).contains(head.statusCode) else {
                throw TransportError(
                    .badResponse, url: easy.url, message: "The server sent no valid status line.")
            }
            return (body, head)
        }

        /// The trust settings for `url`'s host, when it has any (pinning transports only: a plain
        /// transport has none, and skips reading the URL's host on every request).
        ///
        /// - Throws: ``TransportError/Code/invalidRequest`` when `url` is not `https` and its host
        ///   is pinned; when some host is pinned and `url`'s host is not plain ASCII (``PinnedHost/isComparable(_:)``): libcurl maps such a host (a
        ///   percent-encoded fullwidth dot, `api%EF%BC%8Eexample.com`) to `api.example.com` with
        ///   IDNA, while the lookup saw another name and found no pins, so the connection got
        ///   default validation only. Refused, it is never sent.
        func trust(for url: @autoclosure () -> URL?) throws(TransportError) -> CurlTrustSettings? {
            // The URL is read only when some host is pinned: each read bridges a new `URL`.
            guard !trustByHost.isEmpty else { return nil }
            let url = url()
            guard let host = url?.host else { return nil }
            guard PinnedHost.isComparable(host) else {
                throw TransportError(
                    .invalidRequest, url: url,
                    message:
                        "The host \(PrintableText.escaping(host)) is not plain ASCII, so it cannot be checked against the pinned hosts; "
                        + "write it in its ASCII (punycode) form.")
            }
            // libcurl reads an IPv4 address in any form `inet_aton` takes (`2130706433`,
            // `0x7f.1`, `127.1`) and connects to its dotted quad, while the lookup saw another
            // name: pins for `127.0.0.1` were skipped for `https://2130706433/`. Refused, as above.
            if !Self.isPlainDottedQuadOrName(host) {
                throw TransportError(
                    .invalidRequest, url: url,
                    message:
                        "The host \(PrintableText.escaping(host)) is an IPv4 address in a shorthand form, so it cannot be checked against the pinned hosts; "
                        + "write it as four decimal numbers.")
            }
            guard let settings = trustByHost[PinnedHost.key(host)] else { return nil }
            // Over http the settings mean nothing (libcurl ignores TLS options there): a pinned
            // host's request, or a redirect's hop to it, went out in clear, credentials and all.
            guard url?.scheme?.equalsIgnoringASCIICase("https") == true else {
                throw TransportError(
                    .invalidRequest, url: url,
                    message:
                        "The host \(PrintableText.escaping(host)) is pinned, so it is only reached over https; "
                        + "this request (or redirect) would have gone to it over plain http.")
            }
            return settings
        }

        /// Whether `host` is not an IPv4 address in a form other than its canonical dotted quad
        /// (a name, an IPv6 literal, or `a.b.c.d` as `inet_ntop` writes it).
        static func isPlainDottedQuadOrName(_ host: String) -> Bool {
            // An IPv4-mapped IPv6 literal (`::ffff:127.0.0.1`, `::ffff:7f00:1`) reaches the IPv4
            // address too: refused alike.
            var address6 = in6_addr()
            let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
            if inet_pton(AF_INET6, bare, &address6) == 1 {
                let isMapped = withUnsafeBytes(of: &address6) { bytes in
                    bytes.prefix(10).allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF
                }
                return !isMapped
            }
            var address = in_addr()
            guard inet_aton(host, &address) != 0 else { return true }
            var buffer = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
            guard inet_ntop(AF_INET, &address, &buffer, socklen_t(INET_ADDRSTRLEN)) != nil else { return false }
            return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) == host
        }

        /// Maps a libcurl result to a typed error.
        ///
        /// `detail` is libcurl's message for this transfer (its error buffer), empty when it
        /// wrote none. It refines codes that stand for several faults: `CURLE_RECV_ERROR` is both
        /// a reset connection and a broken chunked encoding, and `CURLE_OUT_OF_MEMORY` is how
        /// libcurl before 8.6 reports a header line above its own 100 KiB limit.
        static func error(for code: CURLcode, url: URL?, detail: String = "") -> TransportError {
            let summary = String(cString: curl_easy_strerror(code))
            // libcurl's detail may quote what the server sent: one printable line.
            let message =
                detail.isEmpty || detail == summary ? summary : "\(summary): \(PrintableText.escaping(detail))"
            var mapped = baseCode(for: code)
            if mapped == .connectionLost || mapped == .other, !detail.isEmpty {
                let refined = TransportError.classifyUnknown(detail)
                if refined != .other { mapped = refined }
            }
            if code == CURLE_OUT_OF_MEMORY { mapped = .responseTooLarge }
            return TransportError(
                mapped, url: url, message: "\(message) (libcurl error \(code.rawValue))",
                underlyingError: CurlError(code: Int(code.rawValue), message: message))
        }

        private static func baseCode(for code: CURLcode) -> TransportError.Code {
            let mapped: TransportError.Code
            switch code {
            case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY: mapped = .cannotResolveHost
            case CURLE_COULDNT_CONNECT: mapped = .cannotConnect
            case CURLE_OPERATION_TIMEDOUT: mapped = .timedOut
            case CURLE_PARTIAL_FILE: mapped = .truncatedBody
            case CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_GOT_NOTHING, CURLE_HTTP2, CURLE_HTTP2_STREAM:
                mapped = .connectionLost
            case CURLE_SSL_PINNEDPUBKEYNOTMATCH: mapped = .pinMismatch
            case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM,
                CURLE_SSL_CIPHER, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_ENGINE_INITFAILED:
                mapped = .tlsFailure
            case CURLE_TOO_MANY_REDIRECTS: mapped = .tooManyRedirects
            case CURLE_WEIRD_SERVER_REPLY, CURLE_UNSUPPORTED_PROTOCOL, CURLE_BAD_CONTENT_ENCODING:
                mapped = .badResponse
            // A URL that `URL` parses and libcurl does not (a host with `$` or `%20`): the
            // caller's, and nothing was sent; URLSession reports it as a bad URL too.
            case CURLE_URL_MALFORMAT: mapped = .invalidRequest
            default: mapped = .other
            }
            return mapped
        }
    }

    /// The libcurl result behind a ``TransportError``, for diagnostics.
    public struct CurlError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The `CURLcode`.
        public let code: Int
        /// libcurl's description of it.
        public let message: String

        /// `libcurl error <code>: <message>`.
        public var description: String { "libcurl error \(code): \(message)" }
    }
#endif
