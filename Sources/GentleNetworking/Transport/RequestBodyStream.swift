import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// How both transports send a request whose body is an `httpBodyStream`: read into memory
/// first, at most ``maxBytes``, then sent as `httpBody`.
///
/// Sent as a stream, the body could be sent only once: on a 307 or 308 redirect, which keeps the
/// method and the body, corelibs' URLSession re-sent the POST with an empty body, and libcurl
/// sent even the first request with an empty body; neither said a word. Read first, the body is
/// sent whole on every hop, on every transport. A body larger than ``maxBytes`` belongs in a
/// file: `CurlTransport.upload(for:fromFile:progress:)` reads it as it is sent.
public enum RequestBodyStream {
    /// The most bytes of a body stream a transport sends: 100 MiB.
    public static let maxBytes = 100 * 1024 * 1024

    /// `request` with its `httpBodyStream` read into `httpBody`; `request` itself when it has
    /// a `httpBody` (which `URLRequest` then sends) or no body at all.
    ///
    /// The stream is read on a thread of its own, since `InputStream` reads block. A `GET` or
    /// `HEAD` with a stream is refused before a byte is read (it would be refused once read: up
    /// to 100 MiB, or for ever from a stalled producer, first). The read has the request's idle
    /// timeout (`timeoutInterval`; 60 s when it is not usable): a stream that gives no byte and
    /// no end for that long (a producer that stalls, a FIFO nobody writes to) ends the call as
    /// ``TransportError/Code/timedOut``, as a server that sends nothing does. A read blocked in
    /// the stream keeps its thread until the stream gives it bytes or an end.
    ///
    /// - Throws: ``TransportError`` with code ``TransportError/Code/invalidRequest`` when the
    ///   stream holds more than `limit` bytes or fails to read, or the method is `GET` or
    ///   `HEAD`; ``TransportError/Code/timedOut`` as above; nothing is sent then.
    static func reading(_ request: URLRequest, limit: Int = maxBytes) async throws -> URLRequest {
        guard request.httpBody == nil, let stream = request.httpBodyStream else { return request }
        let url = request.url
        try RequestValidator.validateBody(
            of: request, method: RequestValidator.uppercasedMethod(request.httpMethod), url: url)
        let idleTimeout = Clamp.timeout(request.timeoutInterval) ?? Clamp.defaultTimeout
        let box = StreamBox(stream)
        // Resumed once: by the reader, by a cancellation, or by the idle watchdog (a stream
        // whose producer stalls would otherwise hold the caller for good). The reader stops at
        // its next chunk once cancelled or timed out.
        let waiting = Locked<CheckedContinuation<Result<Data, TransportError>, Never>?>(nil)
        let cancelled = Locked(false)
        let lastProgress = Locked(DispatchTime.now().uptimeNanoseconds)
        let timedOut = Locked(false)
        // One timer, cancelled when the read ends: a pending `asyncAfter` per request could not
        // be cancelled, and with a long timeout (`.infinity` is 31 years) every streamed request
        // left one behind for good.
        let watchdog = WatchdogTimer()
        @Sendable func finish(_ result: Result<Data, TransportError>) {
            watchdog.cancel()
            waiting.withLock { pending in
                defer { pending = nil }
                return pending
            }?.resume(returning: result)
        }
        // Checks the idle deadline, and again at the next one while bytes keep coming.
        watchdog.start(after: idleTimeout) {
            guard waiting.withLock({ $0 != nil }) else { return nil }
            // The reader may note progress between the two reads: `now` after `last`, and no
            // wrap-around (a wrapped difference read as 585 years idle).
            let last = lastProgress.current
            let now = DispatchTime.now().uptimeNanoseconds
            let idle = now > last ? TimeInterval(now - last) / 1_000_000_000 : 0
            if idle < idleTimeout { return idleTimeout - idle }
            timedOut.withLock { $0 = true }
            finish(
                .failure(
                    TransportError(
                        .timedOut, url: url,
                        message:
                            "The request's body stream gave no byte for \(idleTimeout) s (the request's timeout); not sent."
                    )))
            return nil
        }
        let result: Result<Data, TransportError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let alreadyCancelled = cancelled.withLock { isCancelled -> Bool in
                    if !isCancelled { waiting.withLock { $0 = continuation } }
                    return isCancelled
                }
                if alreadyCancelled {
                    continuation.resume(returning: .failure(Self.cancelledError(url)))
                    return
                }
                ThreadName.start("gentle.body-stream") {
                    let result = readAll(
                        box.stream, limit: limit, url: url,
                        cancelled: { cancelled.current || timedOut.current },
                        progressed: { lastProgress.withLock { $0 = DispatchTime.now().uptimeNanoseconds } })
                    finish(result)
                }
            }
        } onCancel: {
            cancelled.withLock { $0 = true }
            waiting.withLock { pending in
                defer { pending = nil }
                return pending
            }?.resume(returning: .failure(Self.cancelledError(url)))
        }
        // Whichever way the wait ended (a cancellation resumes it without `finish`).
        watchdog.cancel()
        if cancelled.current { throw CancellationError() }
        var read = request
        read.httpBodyStream = nil
        read.httpBody = try result.get()
        return read
    }

    /// The placeholder a cancelled read ends with (the caller throws `CancellationError`).
    private static func cancelledError(_ url: URL?) -> TransportError {
        TransportError(.invalidRequest, url: url, message: "Reading the request's body stream was cancelled.")
    }

    /// Every byte of `stream`, at most `limit`.
    static func readAll(
        _ stream: InputStream, limit: Int, url: URL?, cancelled: () -> Bool = { false },
        progressed: () -> Void = {}
    ) -> Result<Data, TransportError> {
        stream.open()
        defer { stream.close() }
        var data = Data()
        let chunkSize = 64 * 1024
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        while true {
            if cancelled() { return .failure(cancelledError(url)) }
            let count = stream.read(&chunk, maxLength: chunkSize)
            if count == 0 { return .success(data) }
            guard count > 0 else {
                // `streamError` only when the stream says it failed: corelibs traps reading it on
                // a stream that was already read and closed (a request sent twice).
                let reason: String
                if stream.streamStatus == .error {
                    reason = stream.streamError.map { " (\($0.localizedDescription))" } ?? ""
                } else if stream.streamStatus == .closed {
                    reason = ": it was already read and closed (a body stream can be sent once)"
                } else {
                    reason = ""
                }
                return .failure(
                    TransportError(.invalidRequest, url: url, message: "The request's body stream failed\(reason)."))
            }
            // A subclass's `read` that claims more than it was given room for: its count cannot
            // be trusted (taken, it read past the buffer).
            guard count <= chunkSize else {
                return .failure(
                    TransportError(
                        .invalidRequest, url: url,
                        message: "The request's body stream reported \(count) bytes read into a buffer of \(chunkSize)."
                    ))
            }
            guard data.count <= limit - count else {
                return .failure(
                    TransportError(
                        .invalidRequest, url: url,
                        message:
                            "The request's body stream holds more than \(limit) bytes, the most a transport reads "
                            + "into memory; send a large body from a file (upload(for:fromFile:))."))
            }
            data.append(contentsOf: chunk[0..<count])
            progressed()
        }
    }

    /// A one-shot dispatch timer whose handler returns the delay to the next check (or `nil`
    /// to stop), cancelled at once by ``cancel()``; the source and its handler go with it.
    private final class WatchdogTimer: @unchecked Sendable {
        // @unchecked: `source` is set once, in `start`, before any handler runs, and read under `lock`.
        private let lock = NSLock()
        private var source: (any DispatchSourceTimer)?
        private var cancelled = false

        init() { ObjectWatch.note(self, "RequestBodyStream.WatchdogTimer") }

        func start(after seconds: TimeInterval, _ check: @escaping @Sendable () -> TimeInterval?) {
            let timer = DispatchSource.makeTimerSource(queue: .global())
            timer.schedule(deadline: .now() + seconds)
            // The handler holds the timer object until `cancel()` lets the source (and so the
            // handler) go: a timer left pending shows as this object alive (the leak test).
            timer.setEventHandler {
                guard let next = check() else {
                    self.cancel()
                    return
                }
                self.lock.withLock { if !self.cancelled { self.source?.schedule(deadline: .now() + next) } }
            }
            let started = lock.withLock { () -> Bool in
                guard !cancelled else { return false }
                source = timer
                return true
            }
            timer.resume()
            // Cancelled before it started: the source still had to be resumed before it goes
            // (libdispatch does not take an inactive source being released), then it stops.
            if !started { timer.cancel() }
        }

        func cancel() {
            let timer = lock.withLock { () -> (any DispatchSourceTimer)? in
                cancelled = true
                defer { source = nil }
                return source
            }
            timer?.cancel()
        }
    }

    /// An `InputStream` handed to the thread that reads it, and used by that thread alone.
    private struct StreamBox: @unchecked Sendable {
        let stream: InputStream
        init(_ stream: InputStream) { self.stream = stream }
    }
}
