#if canImport(CCurl)
    import CCurl
    import Foundation
    import FoundationNetworking

    /// One request on one libcurl easy handle: configures the handle, feeds what libcurl
    /// reports to its ``CurlTransferState`` and applies the actions it returns.
    ///
    /// Callbacks run on the event-loop thread; `cancel` may run on any thread.
    ///
    /// Ownership runs one way, so no cycle is possible: the event loop holds running requests,
    /// a request holds its sink (for streams, the ``ChunkBuffer``), and the buffer holds
    /// nothing but chunks and a closure that reaches the loop weakly, by transfer number.
    final class CurlEasyRequest: @unchecked Sendable {
        // @unchecked: `body` is written only by libcurl callbacks on the event-loop thread and
        // read there when the transfer ends; `state` and `waiter` are behind their locks.
        let handle: UnsafeMutableRawPointer
        let request: URLRequest
        /// The request's URL, read once (each read of `URLRequest.url` on Linux bridges a new
        /// `URL` from the `NSURLRequest` underneath).
        let url: URL
        /// The request's method, uppercased; read once (on Linux every read of
        /// `URLRequest.httpMethod` bridges a new string from the `NSURLRequest`).
        let method: String
        /// Unique per stream (0 for other requests), so a stale resume never reaches a newer
        /// stream on a reused handle.
        let transferNumber: UInt64
        private let pool: CurlHandlePool
        /// The URL handle that came with `handle` from the pool.
        private let parsedURL: CurlParsedURL
        private var headerList: UnsafeMutablePointer<curl_slist>?
        /// libcurl's detailed message for a failed transfer (`CURLOPT_ERRORBUFFER`): it tells a
        /// chunked-encoding error from a lost connection, which share one `CURLcode`. Written by
        /// libcurl on the loop thread only, read there in ``finish(_:)``. Allocated once the
        /// request is past the checks that can refuse it: an initializer that throws before
        /// every property is set runs no `deinit`, and a buffer made at the declaration leaked
        /// with each refused request.
        private let errorBuffer: UnsafeMutablePointer<CChar>
        private var body = Data()
        /// The bytes of a file body handed to libcurl so far (event-loop thread only).
        private var fileBytesRead: Int64 = 0
        /// The idle timeout (the request's `timeoutInterval`, clamped), enforced in the progress
        /// callback: no byte in either direction for that long fails the transfer.
        private var idleTimeout: TimeInterval = 60
        /// The longest the transfer may wait for a free slot before it is handed to libcurl: the
        /// idle timeout (and never past ``totalDeadline``). Set with it.
        private var queueTimeout: TimeInterval = 60
        /// When the transfer was queued for a slot (event-loop thread only; coarse clock).
        private var queuedAtNanos: UInt64 = 0
        /// When the whole exchange must be over (``queueClockNanoseconds``), for a transport with
        /// a total timeout: one deadline for every hop of a redirect chain and the time a hop
        /// waits for a slot, not a total timeout each. Set at init.
        private let totalDeadline: UInt64?
        /// Idle tracking (event-loop thread only): what had moved (bytes received and sent,
        /// header lines) at the last progress callback, and when that last changed.
        private var lastActivity: Int64 = -1
        private var lastActivityNanos: UInt64 = 0
        /// When libcurl last called the progress callback (or the transfer was handed to it, or
        /// resumed); 0 before. A transfer libcurl keeps waiting for a connection to its host gets
        /// no callback at all (see ``stallExpired(now:)``). Event-loop thread only.
        private var lastProgressNanos: UInt64 = 0
        private var headerLinesSeen: Int64 = 0
        private let sink: Sink
        let source: Source
        private let progress: (@Sendable (TransferProgress) -> Void)?
        /// Whether a 3xx with a `Location` is followed (the transport's `maxRedirects` is above
        /// 0): its body is then not reported as progress.
        private let followsRedirects: Bool
        private var lastProgress: TransferProgress?
        private let state: Locked<CurlTransferState>
        private let waiter = Locked(Waiter.idle)
        /// The observed request this transfer belongs to (see ``ExchangeRecorder``), read from
        /// the caller's task when the request is made; its metrics are read from libcurl when
        /// the transfer ends. `nil` (nothing read, nothing kept) when nobody observes.
        private let recorder: ExchangeRecorder?
        private let fetchStart: Date?

        /// The stream requests alive in this process, for leak tests.
        package static var liveCount: Int { live.current }
        private static let live = Locked(0)
        private static let numbers = Locked<UInt64>(0)

        /// Where the response body goes.
        enum Sink {
            /// Collected in memory and returned.
            case memory
            /// Written to an open file descriptor as it arrives (constant memory); the request
            /// closes it in `cleanup`.
            case file(Int32)
            /// Handed to a stream consumer, with backpressure; the caller resumes at the head.
            case stream(ChunkBuffer<CurlStreamResumer>)
        }

        /// Where the request body comes from.
        enum Source {
            /// `request.httpBody`, if any.
            case request
            /// Read from an open file descriptor, of a known size; the request closes it in `cleanup`.
            case file(Int32, size: Int64)
        }

        typealias ResponseHead = CurlResponseHead
        typealias Continuation = CheckedContinuation<(Data, ResponseHead), any Error>

        /// The caller's side: whichever of "the caller starts waiting" and "the outcome is
        /// known" comes second resumes it, exactly once.
        private enum Waiter {
            case idle
            case waiting(Continuation)
            case pending(Result<(Data, ResponseHead), any Error>)
            case done
        }

        /// Creates and configures the easy handle for `request`.
        init(
            request: URLRequest, configuration: CurlTransport.Configuration, trust: CurlTrustSettings?,
            pool: CurlHandlePool, sink: Sink = .memory, source: Source = .request,
            progress: (@Sendable (TransferProgress) -> Void)? = nil, maxStreamedBytes: Int64? = nil,
            addedFields: [(String, String)] = [], deadline: UInt64?
        ) throws {
            // Every hop is checked (a redirect's target too); headers are checked in `configure`.
            guard let url = request.url else {
                Self.release(sink: sink, source: source)
                throw TransportError(.invalidRequest, url: nil, message: "The request has no URL.")
            }
            let method = RequestValidator.uppercasedMethod(request.httpMethod)
            do throws(TransportError) {
                try RequestValidator.validateURL(url)
                try RequestValidator.validateMethod(method, url: url)
                try RequestValidator.validateBody(of: request, method: method, url: url)
            } catch {
                Self.release(sink: sink, source: source)
                throw error
            }
            guard let pooled = pool.take() else {
                Self.release(sink: sink, source: source)
                throw TransportError(.other, url: url, message: "libcurl could not create a handle.")
            }
            self.handle = pooled.easy
            self.parsedURL = pooled.url
            self.errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE))
            errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
            self.pool = pool
            self.request = request
            self.url = url
            self.totalDeadline = deadline
            self.method = method
            let recorder = ExchangeRecorder.current
            self.recorder = recorder
            self.fetchStart = recorder == nil ? nil : Date()
            self.sink = sink
            self.source = source
            self.progress = progress
            self.followsRedirects = configuration.maxRedirects > 0
            // Numbered (and counted, for leak tests) only where it matters, streams: a global lock
            // per request would be shared by every caller thread and the loop.
            if case .stream = sink {
                self.transferNumber = Self.numbers.withLock { number in
                    number += 1
                    return number
                }
                Self.live.withLock { $0 += 1 }
            } else {
                self.transferNumber = 0
            }
            let kind: CurlTransferState.SinkKind
            let bodyLimit: Int64?
            var non2xxFileLimit: Int64?
            switch sink {
            case .memory:
                kind = .memory
                bodyLimit = ResponseLimits.effectiveBodyLimit(configured: configuration.limits.maxBodyBytes)
            case .file:
                kind = .file
                bodyLimit = maxStreamedBytes
                // An error page or a redirect's body is held to the in-memory limit: a download
                // is unlimited, a hostile 500 or 302 that never ends must not fill the disk.
                non2xxFileLimit = ResponseLimits.effectiveBodyLimit(configured: configuration.limits.maxBodyBytes)
            case .stream:
                kind = .stream
                bodyLimit = maxStreamedBytes
            }
            self.state = Locked(
                CurlTransferState(
                    sink: kind,
                    limits: CurlTransferState.Limits(
                        maxBodyBytes: bodyLimit, maxNon2xxFileBytes: non2xxFileLimit,
                        maxHeaderCount: configuration.limits.maxHeaderCount,
                        maxHeaderBytes: configuration.limits.maxHeaderBytes),
                    isHeadRequest: method == "HEAD", url: url))
            if case .stream = sink { ObjectWatch.note(self, "CurlEasyRequest") }
            do {
                try configure(url: url, configuration: configuration, trust: trust, addedFields: addedFields)
            } catch {
                cleanup()
                throw error
            }
        }

        deinit {
            if case .stream = sink { Self.live.withLock { $0 -= 1 } }
            errorBuffer.deallocate()
        }

        /// libcurl's receive buffer for downloads, and the most for streams, in bytes (its
        /// default is 16 KiB).
        static let transferBufferSize = 1024 * 1024

        /// The receive buffer a sink gets: none set for memory (libcurl's 16 KiB), 1 MiB for a
        /// file, a stream's own `bufferSize` clamped to 16 KiB – 1 MiB.
        static func receiveBufferSize(for sink: Sink) -> Int? {
            switch sink {
            case .memory: return nil
            case .file: return transferBufferSize
            case .stream(let buffer): return min(max(buffer.highWater, 16 * 1024), transferBufferSize)
            }
        }

        /// The default `User-Agent` line, built once.
        private static let userAgentLine = "User-Agent: \(CurlTransport.userAgent)"

        /// The `Accept-Encoding` line libcurl sends for `CURLOPT_ACCEPT_ENCODING` `""` (every
        /// coding it can decode, in its order: `deflate, gzip` with zlib, then `br` and `zstd`
        /// when built with them), built once from libcurl's feature bits; `nil` when it can
        /// decode none.
        ///
        /// Sent as one of our header lines, libcurl finds the field present and does not format
        /// its own: that was an `aprintf` per request (4.6k instructions in callgrind, 3% of a
        /// small request). `CURLOPT_ACCEPT_ENCODING` stays set, so responses are decoded as
        /// before. A test checks the line against what libcurl itself sends.
        static let acceptEncodingLine: String? = {
            guard let info = curl_version_info(CURLVERSION_FIRST) else { return nil }
            let features = Int(info.pointee.features)
            var codings: [String] = []
            if features & Int(CURL_VERSION_LIBZ) != 0 { codings += ["deflate", "gzip"] }
            if features & Int(CURL_VERSION_BROTLI) != 0 { codings.append("br") }
            if features & Int(CURL_VERSION_ZSTD) != 0 { codings.append("zstd") }
            return codings.isEmpty ? nil : "Accept-Encoding: " + codings.joined(separator: ", ")
        }()

        /// - Parameter addedFields: Header fields sent as if `request` carried them (replacing a
        ///   field of the same name it does carry), validated like its own: a decorator's
        ///   addition without copying the request (see `FieldAddingTransport`).
        private func configure(
            url: URL, configuration: CurlTransport.Configuration, trust: CurlTrustSettings?,
            addedFields: [(String, String)]
        ) throws {
            func check(_ code: CURLcode, _ what: String) throws {
                guard code == CURLE_OK else {
                    throw TransportError(
                        .other, url: url,
                        message: "libcurl rejected \(what): \(String(cString: curl_easy_strerror(code)))")
                }
            }
            let text = url.absoluteString
            try check(gn_easy_setopt_string(handle, CURLOPT_URL, text), "the URL")
            _ = parsedURL.apply(text, to: handle)
            try check(gn_easy_setopt_long(handle, CURLOPT_NOSIGNAL, 1), "NOSIGNAL")
            try check(gn_easy_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer), "ERRORBUFFER")
            try check(gn_easy_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0), "FOLLOWLOCATION")
            // Through an HTTPS proxy, the proxy's `200 Connection established` is not the
            // server's response: only the server's head reaches the header callback.
            try check(gn_easy_setopt_long(handle, CURLOPT_SUPPRESS_CONNECT_HEADERS, 1), "SUPPRESS_CONNECT_HEADERS")
            // Only HTTP(S), whatever the URL or a redirect says (redirects are followed by us,
            // and checked again, but libcurl is restricted too).
            try check(gn_easy_restrict_to_http(handle), "PROTOCOLS")
            try check(gn_easy_setopt_string(handle, CURLOPT_ACCEPT_ENCODING, ""), "ACCEPT_ENCODING")
            try check(gn_easy_setopt_long(handle, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS)), "HTTP/2")
            try check(gn_easy_setopt_long(handle, CURLOPT_TCP_KEEPALIVE, 1), "TCP_KEEPALIVE")
            // Streams and downloads: one callback (and, for a stream, at most one wake-up of its
            // consumer) per up to 1 MiB instead of per 16 KiB: a 1 GiB stream went from ~930 to
            // ~1,830 MB/s on loopback (256 KiB: ~1,300). A stream's follows its `bufferSize`
            // (16 KiB to 1 MiB), so a small one stays small. Such a handle is freed after its
            // transfer, not pooled, so no idle handle keeps the buffer. Small bodies keep
            // libcurl's 16 KiB: nothing to gain.
            if let receiveBuffer = Self.receiveBufferSize(for: sink) {
                try check(gn_easy_setopt_long(handle, CURLOPT_BUFFERSIZE, receiveBuffer), "BUFFERSIZE")
            }
            // Any Double is accepted (NaN, negative, infinite): clamped, never converted raw.
            // A request without a usable timeout (a raw `URLRequest` with 0 or NaN) is idle-limited
            // as on every transport (it was the connect timeout here: 30 s, or shorter).
            let requestTimeout = Clamp.timeout(request.timeoutInterval)
            let timeout = requestTimeout ?? Clamp.defaultTimeout
            // A request's own shorter timeout wins; without one, the configured connect timeout.
            let connectTimeout = min(configuration.connectTimeout, requestTimeout ?? configuration.connectTimeout)
            try check(
                gn_easy_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, Clamp.milliseconds(connectTimeout)),
                "CONNECTTIMEOUT")
            // URLRequest.timeoutInterval is an idle timeout: fail when no byte moves for that long.
            // libcurl's own low-speed check averages over seconds (a byte every 2 s failed a 5 s
            // timeout), so the progress callback checks it (``idleExpired``); the low-speed
            // setting stays only for the wake-up libcurl then schedules every second, with a time
            // (two million seconds: libcurl multiplies it by 1,000 in a C `long`, 32 bits on some
            // platforms) that never ends a transfer. It was 4 × the timeout + 10 s: a
            // live body under 1 byte/s for that long (a byte every 2 s; small heartbeats seconds
            // apart) was cut as `.timedOut`, which `URLSessionTransport` kept going.
            idleTimeout = timeout
            queueTimeout = timeout
            try check(gn_easy_setopt_long(handle, CURLOPT_LOW_SPEED_LIMIT, 1), "LOW_SPEED_LIMIT")
            try check(gn_easy_setopt_long(handle, CURLOPT_LOW_SPEED_TIME, 2_000_000), "LOW_SPEED_TIME")

            // Whether libcurl will send a body, and so could add `Expect: 100-continue` or a form
            // `Content-Type` that must be suppressed.
            var sendsBody = true
            // The length of the body libcurl will send, which a caller's Content-Length must match.
            var bodyLength: Int64 = 0
            switch source {
            case .file(_, let size):
                bodyLength = size
                if method == "POST" {
                    try check(gn_easy_setopt_long(handle, CURLOPT_POST, 1), "POST")
                    try check(gn_easy_setopt_offset(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(size)), "body size")
                } else {
                    try check(gn_easy_setopt_long(handle, CURLOPT_UPLOAD, 1), "UPLOAD")
                    try check(gn_easy_setopt_offset(handle, CURLOPT_INFILESIZE_LARGE, curl_off_t(size)), "body size")
                    try check(gn_easy_setopt_string(handle, CURLOPT_CUSTOMREQUEST, method), "the method")
                }
                try check(gn_easy_setopt_data_callback(handle, CURLOPT_READFUNCTION, curlReadCallback), "READFUNCTION")
                try check(
                    gn_easy_setopt_pointer(handle, CURLOPT_READDATA, Unmanaged.passUnretained(self).toOpaque()),
                    "READDATA")
                // libcurl rewinds the body to send it again: on a fresh connection when a reused
                // one turned out dead, or for an HTTP/2 stream the server refused. Without this
                // it could not ("rewinding of the data stream failed") and the upload failed.
                try check(gn_easy_setopt_seek_callback(handle, curlSeekCallback), "SEEKFUNCTION")
                try check(
                    gn_easy_setopt_pointer(handle, CURLOPT_SEEKDATA, Unmanaged.passUnretained(self).toOpaque()),
                    "SEEKDATA")
            case .request:
                let body = request.httpBody
                switch method {
                case "GET" where body == nil:
                    try check(gn_easy_setopt_long(handle, CURLOPT_HTTPGET, 1), "GET")
                case "HEAD":
                    try check(gn_easy_setopt_long(handle, CURLOPT_NOBODY, 1), "HEAD")
                default:
                    if method != "POST" {
                        try check(gn_easy_setopt_string(handle, CURLOPT_CUSTOMREQUEST, method), "the method")
                    }
                }
                sendsBody = method != "HEAD" && (body != nil || method == "POST")
                if method != "HEAD", let body = body ?? (method == "POST" ? Data() : nil) {
                    bodyLength = Int64(body.count)
                    try check(
                        gn_easy_setopt_offset(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count)), "body size")
                    try body.withUnsafeBytes { raw in
                        if let base = raw.baseAddress, !raw.isEmpty {
                            try check(
                                gn_easy_setopt_pointer(
                                    handle, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: base)),
                                "the body")
                        } else {
                            try check(gn_easy_setopt_string(handle, CURLOPT_COPYPOSTFIELDS, ""), "the empty body")
                        }
                    }
                }
            }
            // Always: the idle timeout is checked there, as well as progress reported.
            try check(gn_easy_setopt_long(handle, CURLOPT_NOPROGRESS, 0), "NOPROGRESS")
            try check(gn_easy_setopt_progress_callback(handle, curlProgressCallback), "XFERINFOFUNCTION")
            try check(
                gn_easy_setopt_pointer(handle, CURLOPT_XFERINFODATA, Unmanaged.passUnretained(self).toOpaque()),
                "XFERINFODATA")

            let fields = request.allHTTPHeaderFields ?? [:]
            // The head's size is checked as the fields are: libcurl would refuse a head above
            // 1 MiB as "out of memory" and a URL above 8 MB as malformed.
            var fieldCount = 0
            var headBytes = text.utf8.count &+ method.utf8.count &+ 12
            try RequestValidator.checkHeadSize(fieldCount: fields.count, bytes: headBytes, url: url)
            var headers: [String] = []
            headers.reserveCapacity(fields.count + 3)
            var hasContentType = false
            var hasUserAgent = false
            var hasAcceptEncoding = false
            func add(_ name: String, _ value: String) throws {
                try RequestValidator.validateHeader(name: name, value: value, url: url)
                fieldCount &+= 1
                headBytes = headBytes &+ RequestValidator.headBytes(name: name, value: value)
                if try RequestValidator.isFramingField(name: name, value: value, bodyLength: bodyLength, url: url) {
                    return
                }
                if name.equalsIgnoringASCIICase("Accept-Encoding") {
                    try check(gn_easy_setopt_string(handle, CURLOPT_ACCEPT_ENCODING, value), "Accept-Encoding")
                    hasAcceptEncoding = true
                    return
                }
                if name.equalsIgnoringASCIICase("Content-Type") { hasContentType = true }
                if name.equalsIgnoringASCIICase("User-Agent") { hasUserAgent = true }
                headers.append(value.isEmpty ? "\(name);" : "\(name): \(value)")
            }
            func addUnlessAdded(_ name: String, _ value: String) throws {
                if addedFields.isEmpty || !addedFields.contains(where: { $0.0.equalsIgnoringASCIICase(name) }) {
                    try add(name, value)
                }
            }
            // In name order, so the wire order does not depend on the dictionary's seed; a single
            // field (an Accept) needs no sorted copy.
            if fields.count <= 1 {
                for (name, value) in fields { try addUnlessAdded(name, value) }
            } else {
                for (name, value) in fields.sorted(by: { $0.key < $1.key }) { try addUnlessAdded(name, value) }
            }
            for (name, value) in addedFields { try add(name, value) }
            try RequestValidator.checkHeadSize(fieldCount: fieldCount, bytes: headBytes, url: url)
            // Without a body libcurl adds neither, and each line it holds is compared with every
            // header it considers adding: fewer lines, less work per request.
            if sendsBody {
                headers.append("Expect:")  // no 100-continue round trip
                if !hasContentType { headers.append("Content-Type:") }  // no form-urlencoded default
            }
            if !hasUserAgent { headers.append(Self.userAgentLine) }
            if !hasAcceptEncoding, let line = Self.acceptEncodingLine { headers.append(line) }
            for line in headers {
                guard let appended = curl_slist_append(headerList, line) else {
                    throw TransportError(.other, url: url, message: "libcurl could not store a header.")
                }
                headerList = appended
            }
            try check(gn_easy_setopt_slist(handle, CURLOPT_HTTPHEADER, headerList), "the headers")
            // A request that must not be sent twice is watched for libcurl's replay on a new
            // connection (see `CurlTransferState.sendingRequest`). Idempotent ones pay nothing.
            // Over `https` the connection may be HTTP/2, where libcurl resends only streams the
            // server said it never processed (GOAWAY, REFUSED_STREAM: RFC 9113 §8.7), and the
            // callback cannot tell the protocol (libcurl reports it only once a response
            // came): there the resend stays libcurl's. Plain `http` is HTTP/1.1.
            if Self.isCleartextHTTP(text), !Self.isIdempotent(method),
                !fields.contains(where: { $0.key.equalsIgnoringASCIICase("Idempotency-Key") && !$0.value.isEmpty })
            {
                try check(gn_easy_setopt_prereq_callback(handle, curlPrereqCallback), "PREREQFUNCTION")
                try check(
                    gn_easy_setopt_pointer(handle, CURLOPT_PREREQDATA, Unmanaged.passUnretained(self).toOpaque()),
                    "PREREQDATA")
            }

            let context = Unmanaged.passUnretained(self).toOpaque()
            try check(gn_easy_setopt_data_callback(handle, CURLOPT_WRITEFUNCTION, curlWriteCallback), "WRITEFUNCTION")
            try check(gn_easy_setopt_pointer(handle, CURLOPT_WRITEDATA, context), "WRITEDATA")
            try check(
                gn_easy_setopt_data_callback(handle, CURLOPT_HEADERFUNCTION, curlHeaderCallback), "HEADERFUNCTION")
            try check(gn_easy_setopt_pointer(handle, CURLOPT_HEADERDATA, context), "HEADERDATA")
            if let trust {
                try trust.apply(to: handle, check: check)
            }
        }

        /// Registers the caller waiting for this request; resumes it at once if the outcome is
        /// already known (a cancellation that came first).
        func setContinuation(_ continuation: Continuation) {
            let ready = waiter.withLock { waiter -> Result<(Data, ResponseHead), any Error>? in
                switch waiter {
                case .idle:
                    waiter = .waiting(continuation)
                    return nil
                case .pending(let result):
                    waiter = .done
                    return result
                case .waiting, .done:
                    return nil
                }
            }
            if let ready { continuation.resume(with: ready) }
        }

        /// Closes the file descriptors of `sink` and `source`, for a request that will never own them.
        static func release(sink: Sink, source: Source) {
            if case .file(let descriptor) = sink { close(descriptor) }
            if case .file(let descriptor, _) = source { close(descriptor) }
        }

        /// Cancels the request: the caller (and the stream) end with `CancellationError` at once.
        func cancel() {
            apply(state.withLock { $0.cancelled() })
        }

        /// Whether the transfer has ended (libcurl callbacks then abort at once).
        var isEnded: Bool { state.withLock { $0.phase == .ended } }

        /// The transfer was added to the multi handle.
        func submitted() {
            // The total timeout is what is left of the exchange's deadline now that libcurl
            // starts the transfer (at least 1 ms, so a hop that starts late fails at once, with
            // libcurl's own timeout error as any other overrun).
            if let totalDeadline {
                let left = totalDeadline &- min(totalDeadline, Self.coarseNanoseconds())
                _ = gn_easy_setopt_long(handle, CURLOPT_TIMEOUT_MS, max(1, Int(left / 1_000_000)))
            }
            lastProgressNanos = Self.coarseNanoseconds()
            state.withLock { $0.submitted() }
        }

        /// Whether the running transfer has had no progress callback for its idle timeout (and
        /// a second's grace); it is then failed with ``TransportError/Code/timedOut`` (its
        /// caller resumed) and must be removed from the multi handle and cleaned up. libcurl 7.88
        /// calls neither the progress callback nor its own `CURLOPT_TIMEOUT_MS` check for a
        /// transfer it holds back for a connection to its host (`maxConnectionsPerHost`
        /// connections busy, as with `PinningTransport`'s six on Linux): behind held streams or a
        /// slow server, such a request waited for ever. (The total timeout needs no such check:
        /// the transfers holding the connections started earlier under the same total, so they
        /// end first, and libcurl checks a transfer's total as soon as it starts it.) A stream
        /// paused for its consumer is not stalled. Event-loop thread only.
        func stallExpired(now: UInt64) -> Bool {
            guard lastProgressNanos != 0, now &- min(now, lastProgressNanos) >= Self.stallNanoseconds(idleTimeout)
            else { return false }
            if state.withLock({ $0.phase == .paused }) {
                lastProgressNanos = now
                return false
            }
            abandon(
                TransportError(
                    .timedOut, url: url,
                    message:
                        "No progress for \(idleTimeout) s (the request's timeout): the transfer waited for a connection to its host."
                ))
            return true
        }

        /// The idle timeout and a second's grace (libcurl's progress callbacks come at least
        /// once a second for a transfer it serves), in nanoseconds, without overflow.
        static func stallNanoseconds(_ idleTimeout: TimeInterval) -> UInt64 {
            UInt64(min(Clamp.maxSeconds, max(0, idleTimeout) + 1) * 1_000_000_000)
        }

        /// When an exchange starting now must be over under `configuration`'s total timeout
        /// (``queueClockNanoseconds``); `nil` without one. Every hop of the exchange is given it.
        static func deadline(for configuration: CurlTransport.Configuration) -> UInt64? {
            guard let total = configuration.totalTimeout.flatMap(Clamp.timeout) else { return nil }
            // At most ``Clamp/maxSeconds`` (1e18 ns): no overflow.
            return coarseNanoseconds() &+ UInt64(total * 1_000_000_000)
        }

        /// Applies the state's actions: resumes the caller and ends the stream, outside the lock.
        private func apply(_ actions: CurlTransferState.Actions) {
            if let outcome = actions.resumeCaller {
                let result: Result<(Data, ResponseHead), any Error>
                switch outcome {
                case .head(let head):
                    let data: Data
                    if case .memory = sink {
                        data = body
                        body = Data()
                    } else {
                        data = Data()
                    }
                    result = .success((data, head))
                case .failure(let error): result = .failure(error)
                case .cancelled: result = .failure(CancellationError())
                }
                resumeCaller(result)
            }
            if let ending = actions.endStream, case .stream(let buffer) = sink {
                switch ending {
                case .complete: buffer.finish(nil)
                case .failure(let error): buffer.finish(error)
                case .cancelled: buffer.finish(CancellationError())
                }
            }
        }

        private func resumeCaller(_ result: Result<(Data, ResponseHead), any Error>) {
            let continuation = waiter.withLock { waiter -> Continuation? in
                switch waiter {
                case .idle:
                    waiter = .pending(result)
                    return nil
                case .waiting(let continuation):
                    waiter = .done
                    return continuation
                case .pending, .done:
                    return nil
                }
            }
            continuation?.resume(with: result)
        }

        // MARK: Callbacks (event-loop thread)

        /// Takes body bytes; returns how many were taken, 0 to abort, or `CURL_WRITEFUNC_PAUSE`.
        func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Int {
            let (decision, actions) = state.withLock { $0.bodyBytes(bytes.count) }
            apply(actions)
            guard decision == .accept else { return 0 }
            switch sink {
            case .memory:
                body.append(contentsOf: bytes)
            case .file(let descriptor):
                guard let base = bytes.baseAddress else { return bytes.count }
                var offset = 0
                while offset < bytes.count {
                    let written = write(descriptor, base + offset, bytes.count - offset)
                    // A write that takes nothing and reports no error would loop for ever: EIO.
                    if written <= 0 {
                        let code = written < 0 ? errno : EIO
                        if code == EINTR { continue }
                        // The download's own code reports it as the `CocoaError` of a file write.
                        let error = TransportError(
                            .other, url: url, message: "Writing the download failed: errno \(code).",
                            underlyingError: AtomicFile.Failure(operation: "write", path: "the download", code: code))
                        apply(state.withLock { $0.sinkFailed(error) })
                        return 0
                    }
                    offset += written
                }
            case .stream(let buffer):
                if !buffer.offer(Data(bytes)) {
                    state.withLock { $0.paused(unconsumed: bytes.count) }
                    lastActivityNanos = 0  // the wait for the consumer is not idleness
                    return Int(CURL_WRITEFUNC_PAUSE)
                }
            }
            return bytes.count
        }

        /// libcurl is about to send the request, which is not replayable; `false` to stop it (the
        /// second time: see ``CurlTransferState/sendingRequest(replayable:)``).
        func sendingRequest() -> Bool {
            let actions = state.withLock { $0.sendingRequest(replayable: false) }
            if actions.resumeCaller != nil || actions.endStream != nil { apply(actions) }
            return !actions.abort
        }

        /// Whether `url` (its text) is `http:` (any case): HTTP/1.1, since libcurl is asked for
        /// HTTP/2 over TLS only.
        static func isCleartextHTTP(_ url: String) -> Bool {
            var bytes = url.utf8.makeIterator()
            for expected in "http:".utf8 {
                guard let byte = bytes.next(), byte | (expected == UInt8(ascii: ":") ? 0 : 0x20) == expected
                else { return false }
            }
            return true
        }

        /// Whether RFC 9110 §9.2.2 calls `method` (uppercased) idempotent: libcurl may send it
        /// again. A `switch`, not a set: no hashing on every request.
        static func isIdempotent(_ method: String) -> Bool {
            switch method {
            case "GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE": true
            default: false
            }
        }

        /// Takes one raw header line; returns whether the transfer goes on.
        func receiveHeaderLine(_ bytes: UnsafeRawBufferPointer) -> Bool {
            headerLinesSeen &+= 1
            let actions = state.withLock { $0.headerLine(bytes) }
            // Most lines only feed the head: nothing to apply.
            if actions.resumeCaller != nil || actions.endStream != nil { apply(actions) }
            return !actions.abort
        }

        /// The paused transfer is being resumed (just before `curl_easy_pause(CONT)`).
        func resuming() {
            // Idle time counts from the resume: libcurl barely calls back while paused, and its
            // byte counts did not move meanwhile.
            lastActivityNanos = 0
            lastProgressNanos = Self.coarseNanoseconds()
            state.withLock { $0.resumed() }
        }

        /// Whether the transfer has been idle (nothing received or sent, no header line) for
        /// the idle timeout; it is then failed with ``TransportError/Code/timedOut``. Called from
        /// the progress callback, at least once a second (libcurl's low-speed wake-up). A stream
        /// paused for its consumer is not idle.
        func idleExpired(received: Int64, sent: Int64) -> Bool {
            let now = Self.coarseNanoseconds()
            lastProgressNanos = now
            let activity = received &+ sent &+ headerLinesSeen
            if activity != lastActivity || lastActivityNanos == 0 {
                lastActivity = activity
                lastActivityNanos = now
                return false
            }
            let idle = TimeInterval(now &- lastActivityNanos) / 1_000_000_000
            guard idle >= idleTimeout else { return false }
            let actions = state.withLock { state -> CurlTransferState.Actions? in
                if state.phase == .paused { return nil }
                return state.sinkFailed(
                    TransportError(
                        .timedOut, url: url, message: "No data for \(idleTimeout) s (the request's timeout)."))
            }
            guard let actions else {
                lastActivityNanos = now
                return false
            }
            apply(actions)
            return true
        }

        /// A monotonic clock at the kernel tick's resolution (a few milliseconds), which the idle
        /// check reads on every progress callback: cheaper than a precise clock, and precise
        /// enough for a timeout counted in seconds.
        private static func coarseNanoseconds() -> UInt64 {
            var spec = timespec()
            guard clock_gettime(CLOCK_MONOTONIC_COARSE, &spec) == 0 else {
                return DispatchTime.now().uptimeNanoseconds
            }
            return UInt64(truncatingIfNeeded: spec.tv_sec) &* 1_000_000_000 &+ UInt64(truncatingIfNeeded: spec.tv_nsec)
        }

        var reportsProgress: Bool { progress != nil }

        /// Whether `head` is a redirect ``CurlTransport`` follows when redirects are on (it may
        /// still refuse it: a loop, a scheme other than http(s); the 3xx is then the answer, its
        /// few bytes unreported).
        private static func isFollowedRedirect(_ head: CurlResponseHead) -> Bool {
            guard RedirectTracker.redirectStatuses.contains(head.statusCode) else { return false }
            return head.headers.contains { $0.0.equalsIgnoringASCIICase("location") }
        }

        /// Reports `current`, unless it is what was reported last or this exchange's response
        /// is a redirect that will be followed (a status ``RedirectTracker`` follows, with a
        /// `Location`, and redirects on): its body is not what the caller transfers, and reporting it
        /// (complete, at its end) made a download look finished before its real body started.
        /// A 3xx that is the answer (no `Location`, redirects off) is reported like any other.
        func reportProgress(_ current: TransferProgress) {
            guard current != lastProgress else { return }
            if followsRedirects, state.withLock({ Self.isFollowedRedirect($0.head) }) { return }
            lastProgress = current
            progress?(current)
        }

        func readBody(into buffer: UnsafeMutableRawPointer, capacity: Int) -> Int {
            guard case .file(let descriptor, let size) = source else { return 0 }
            switch Self.readFileBody(descriptor, size: size, read: fileBytesRead, into: buffer, capacity: capacity) {
            case .bytes(let count):
                fileBytesRead += Int64(count)
                return count
            case .failed(let message):
                apply(state.withLock { $0.sinkFailed(TransportError(.invalidRequest, url: url, message: message)) })
                return Int(CURL_READFUNC_ABORT)
            }
        }

        /// libcurl asks to send the file body again from `offset` (from the start, in practice).
        func seekBody(to offset: Int64) -> Int32 {
            guard case .file(let descriptor, let size) = source else { return Int32(CURL_SEEKFUNC_CANTSEEK) }
            guard offset >= 0, offset <= size else { return Int32(CURL_SEEKFUNC_CANTSEEK) }
            guard lseek(descriptor, off_t(offset), SEEK_SET) == off_t(offset) else {
                return Int32(CURL_SEEKFUNC_FAIL)
            }
            fileBytesRead = offset
            return Int32(CURL_SEEKFUNC_OK)
        }

        /// What one read of a file body gives libcurl.
        enum FileRead: Equatable {
            /// Bytes to send (0: the body is complete).
            case bytes(Int)
            /// The upload must stop: the file is shorter than its length was, or unreadable.
            case failed(String)
        }

        /// The next read of a file body declared as `size` bytes (its length when it was opened,
        /// the request's `Content-Length`), `read` of which were sent: never past `size`, so a
        /// file that grows meanwhile cannot send bytes beyond the declared length (the server
        /// would read them as the start of another request), and a file that ends early (it
        /// shrank) fails the upload rather than leave the server waiting for the rest.
        static func readFileBody(
            _ descriptor: Int32, size: Int64, read alreadyRead: Int64, into buffer: UnsafeMutableRawPointer,
            capacity: Int
        ) -> FileRead {
            let left = size - alreadyRead
            guard left > 0, capacity > 0 else { return .bytes(0) }
            let wanted = Int(clamping: min(left, Int64(capacity)))
            while true {
                let count = read(descriptor, buffer, wanted)
                if count < 0 && errno == EINTR { continue }
                if count < 0 { return .failed("Reading the file to upload failed: errno \(errno).") }
                if count == 0 {
                    return .failed(
                        "The file to upload ended after \(alreadyRead) of its \(size) bytes (it shrank while "
                            + "it was sent); the upload was stopped.")
                }
                return .bytes(count)
            }
        }

        /// The response for a parsed head, or `nil` for an invalid status line. A head that
        /// repeats a recent one byte for byte, from the same URL, gets the response built for it
        /// (``CurlResponseCache``): building one costs more than the rest of a small request.
        static func makeResponse(url: URL?, head: ResponseHead) -> HTTPURLResponse? {
            guard let url, (100...999).contains(head.statusCode) else { return nil }
            return CurlResponseCache.shared.response(url: url, head: head) {
                HTTPURLResponse(
                    url: url, statusCode: head.statusCode, httpVersion: head.httpVersion,
                    headerFields: DeferredResponse.merged(head.headers))
            }
        }

        /// Called on the event-loop thread when libcurl is done with the transfer.
        func finish(_ code: CURLcode) {
            let libcurlFailure =
                code == CURLE_OK
                ? nil : CurlTransport.error(for: code, url: url, detail: String(cString: errorBuffer))
            if libcurlFailure == nil, let last = lastProgress {
                // Make the final callback report completion, whatever libcurl's last tick saw:
                // the whole body received, and the request body as far as libcurl sent it (a
                // server that answered early, a 413 or 401 before reading the body, stopped the
                // upload: reporting all of it sent said 50 MB of 50 MB went out where 2.5 MB did).
                let received = last.expectedBytesToReceive ?? last.bytesReceived
                var uploaded: curl_off_t = 0
                let sent =
                    gn_easy_getinfo_offset(handle, CURLINFO_SIZE_UPLOAD_T, &uploaded) == CURLE_OK
                    ? Int64(uploaded) : last.bytesSent
                reportProgress(
                    TransferProgress(
                        bytesReceived: max(last.bytesReceived, received),
                        expectedBytesToReceive: last.expectedBytesToReceive,
                        bytesSent: max(last.bytesSent, sent), expectedBytesToSend: last.expectedBytesToSend))
            }
            if let recorder, let fetchStart {
                let (status, decoded) = state.withLock { ($0.head.statusCode, $0.bodyBytes) }
                recorder.add(
                    transactionMetrics(
                        fetchStart: fetchStart, statusCode: (100...999).contains(status) ? status : nil,
                        decodedBodyBytes: decoded))
            }
            // The HTTPURLResponse is built by the caller's task, not here: on Linux it costs more
            // than the transfer itself, and this thread serves every request of the transport.
            apply(state.withLock { $0.finished(libcurlFailure: libcurlFailure) })
        }

        /// Fails the request (and its stream, if any) without libcurl: the loop is shutting down.
        func abandon(_ error: TransportError) {
            apply(state.withLock { $0.abandoned(error) })
        }

        /// The transfer is queued for a slot now (event-loop thread only).
        func queued() {
            queuedAtNanos = Self.coarseNanoseconds()
        }

        /// Whether the queued transfer has waited for a slot longer than its timeout; it is then
        /// failed with ``TransportError/Code/timedOut`` (its caller resumed) and must be cleaned
        /// up. Before, a request queued behind `maxRunningTransfers` long-lived streams (or
        /// streams held but never read) waited without any deadline. Event-loop thread only.
        func queueWaitExpired(now: UInt64, runningTransfers: Int) -> Bool {
            let waited = TimeInterval(now &- queuedAtNanos) / 1_000_000_000
            if let totalDeadline, now >= totalDeadline {
                abandon(
                    TransportError(
                        .timedOut, url: url,
                        message:
                            "The exchange's total timeout passed while it waited for one of the \(runningTransfers) running transfers to end."
                    ))
                return true
            }
            guard waited >= queueTimeout else { return false }
            abandon(
                TransportError(
                    .timedOut, url: url,
                    message:
                        "Waited \(queueTimeout) s (the request's timeout) for one of the \(runningTransfers) running transfers to end; none did."
                ))
            return true
        }

        /// The monotonic clock the queue deadlines are read from (see ``queueWaitExpired(now:runningTransfers:)``).
        static var queueClockNanoseconds: UInt64 { coarseNanoseconds() }

        /// Frees the handle and header list. Call once, after libcurl is done with the handle.
        func cleanup() {
            // The buffer goes with this request; a pooled handle must not keep pointing at it.
            _ = gn_easy_setopt_pointer(handle, CURLOPT_ERRORBUFFER, nil)
            let pooled = CurlPooledHandle(easy: handle, url: parsedURL)
            if case .memory = sink {
                pool.give(pooled)
            } else {
                pool.discard(pooled)  // its receive buffer is `transferBufferSize`
            }
            // The request owns its file descriptors, so they are closed only once libcurl can no
            // longer call back into them.
            Self.release(sink: sink, source: source)
            if let headerList { curl_slist_free_all(headerList) }
            headerList = nil
        }
    }

    private let curlWriteCallback: gn_data_callback = { buffer, size, count, userdata in
        guard let userdata else { return 0 }
        let request = Unmanaged<CurlEasyRequest>.fromOpaque(userdata).takeUnretainedValue()
        let length = size * count
        if request.isEnded { return 0 }  // aborts the transfer
        return request.receiveBody(UnsafeRawBufferPointer(start: buffer, count: length))
    }

    private let curlReadCallback: gn_data_callback = { buffer, size, count, userdata in
        guard let userdata, let buffer else { return Int(CURL_READFUNC_ABORT) }
        let request = Unmanaged<CurlEasyRequest>.fromOpaque(userdata).takeUnretainedValue()
        if request.isEnded { return Int(CURL_READFUNC_ABORT) }
        return request.readBody(into: buffer, capacity: size * count)
    }

    private let curlSeekCallback: gn_seek_callback = { userdata, offset, origin in
        guard let userdata, origin == SEEK_SET else { return Int32(CURL_SEEKFUNC_CANTSEEK) }
        let request = Unmanaged<CurlEasyRequest>.fromOpaque(userdata).takeUnretainedValue()
        if request.isEnded { return Int32(CURL_SEEKFUNC_FAIL) }
        return request.seekBody(to: Int64(offset))
    }

    private let curlProgressCallback: gn_progress_callback = {
        userdata, downloadTotal, downloaded, uploadTotal, uploaded in
        guard let userdata else { return 0 }
        // Called about ten times per small request: borrowed without a retain (the request is
        // alive while libcurl holds its handle; the event loop keeps it).
        return Unmanaged<CurlEasyRequest>.fromOpaque(userdata)._withUnsafeGuaranteedRef { request in
            if request.idleExpired(received: Int64(downloaded), sent: Int64(uploaded)) { return 1 }
            guard request.reportsProgress else { return 0 }
            if request.isEnded { return 1 }
            request.reportProgress(
                TransferProgress(
                    bytesReceived: Int64(downloaded),
                    expectedBytesToReceive: downloadTotal > 0 ? Int64(downloadTotal) : nil,
                    bytesSent: Int64(uploaded), expectedBytesToSend: uploadTotal > 0 ? Int64(uploadTotal) : nil))
            return 0
        }
    }

    private let curlPrereqCallback: gn_prereq_callback = { userdata, _, _, _, _ in
        guard let userdata else { return Int32(CURL_PREREQFUNC_ABORT) }
        let request = Unmanaged<CurlEasyRequest>.fromOpaque(userdata).takeUnretainedValue()
        if request.isEnded { return Int32(CURL_PREREQFUNC_ABORT) }
        return request.sendingRequest() ? Int32(CURL_PREREQFUNC_OK) : Int32(CURL_PREREQFUNC_ABORT)
    }

    private let curlHeaderCallback: gn_data_callback = { buffer, size, count, userdata in
        guard let userdata, let buffer else { return 0 }
        let request = Unmanaged<CurlEasyRequest>.fromOpaque(userdata).takeUnretainedValue()
        let length = size * count
        // Any other count than `length` aborts the transfer (a limit or framing violation).
        return request.receiveHeaderLine(UnsafeRawBufferPointer(start: buffer, count: length)) ? length : 0
    }
#endif
