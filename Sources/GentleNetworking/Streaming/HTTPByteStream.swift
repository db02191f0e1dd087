import Foundation

/// A response body as it arrives: an `AsyncSequence` of byte chunks, the same on every
/// transport (``HTTPTransportProtocol/stream(for:)``).
///
/// - Iterate it once. The chunks' sizes are the transport's; never rely on them (use
///   ``lines(maxLineBytes:)``, ``serverSentEvents(maxLineBytes:maxEventBytes:lastEventID:)`` or
///   ``jsonLines(of:decoder:maxLineBytes:)``).
/// - Leaving a `for try await` loop early (`break`, `return`, a thrown error) or cancelling the
///   iterating task ends the transfer at once: the connection is closed and everything is freed.
/// - A transport failure mid-body is thrown by the iteration as a ``TransportError``;
///   cancellation as `CancellationError`.
public struct HTTPByteStream: AsyncSequence, Sendable {
    /// A chunk of the body, as the transport delivered it.
    public typealias Element = Data

    let source: Source

    /// A stream that calls `next` for each chunk (`nil` at the end) and `cancel` when the consumer
    /// stops early or its task is cancelled (not after the end or a failure). For transports of
    /// your own; `next` is called by one task at a time.
    public init(next: @escaping @Sendable () async throws -> Data?, cancel: @escaping @Sendable () -> Void) {
        source = Source(next: next, cancel: cancel)
    }

    /// A stream of one chunk: `data` (none when it is empty). What a transport without streaming
    /// gives: the whole body, read first.
    public static func single(_ data: Data) -> HTTPByteStream {
        let remaining = Locked<Data?>(data.isEmpty ? nil : data)
        return HTTPByteStream(
            next: {
                remaining.withLock { value in
                    defer { value = nil }
                    return value
                }
            }, cancel: {})
    }

    /// A stream of `chunks`, each after `delay` seconds (none by default): canned streaming for
    /// tests. Cancelling it stops the delays at once.
    public static func chunks(_ chunks: [Data], delay: TimeInterval = 0) -> HTTPByteStream {
        let remaining = Locked(chunks[...])
        return HTTPByteStream(
            next: {
                guard remaining.withLock({ !$0.isEmpty }) else { return nil }
                let nanoseconds = Clamp.nanoseconds(delay)
                if nanoseconds > 0 { try await Task.sleep(nanoseconds: nanoseconds) }
                return remaining.withLock { $0.popFirst() }
            }, cancel: {})
    }

    /// The iterator; see ``HTTPByteStream``.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let consumer: Consumer

        /// The next chunk, or `nil` at the end of the body.
        public mutating func next() async throws -> Data? {
            try await consumer.next()
        }

        /// Ends the transfer (a consumer that found the body unusable).
        func stop() {
            consumer.source.stop()
        }
    }

    /// Starts iterating.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(consumer: Consumer(source))
    }

    /// Ends the transfer now, without reading further; a later `next()` throws
    /// `CancellationError`.
    public func cancel() {
        source.stop()
    }

    /// The whole body, at most `maxBytes` bytes.
    ///
    /// - Throws: ``TransportError/Code/responseTooLarge`` past `maxBytes` (the transfer is then
    ///   ended); what the iteration throws.
    public func collect(maxBytes: Int) async throws -> Data {
        var body = Data()
        for try await chunk in self {
            guard body.count + chunk.count <= maxBytes else {
                throw TransportError(
                    .responseTooLarge, url: nil, message: "The streamed body exceeds the limit of \(maxBytes) bytes.")
            }
            body.append(chunk)
        }
        return body
    }

    /// This stream with every error it throws passed through `transform` first (cancellation
    /// included; the transform should keep `CancellationError` as it is).
    func mappingErrors(_ transform: @escaping @Sendable (any Error) -> any Error) -> HTTPByteStream {
        let source = self.source
        return HTTPByteStream(
            next: {
                do {
                    return try await source.next()
                } catch {
                    throw transform(error)
                }
            }, cancel: { source.stop() })
    }

    /// The shared state: whether the body ended, and how to get more or stop.
    final class Source: Sendable {
        private let fetch: @Sendable () async throws -> Data?
        private let cancelTransfer: @Sendable () -> Void
        /// `nil` while running; then whether it ended by itself (`true`) or was stopped.
        private let ending = Locked<Bool?>(nil)
        /// Whether a `next()` is waiting for a chunk: a second one at the same time (another task
        /// iterating the same stream) is refused with ``StreamingError/concurrentRead``.
        private let reading = Locked(false)

        init(next: @escaping @Sendable () async throws -> Data?, cancel: @escaping @Sendable () -> Void) {
            fetch = next
            cancelTransfer = cancel
            ObjectWatch.note(self, "HTTPByteStream.Source")
        }

        func next() async throws -> Data? {
            switch ending.current {
            case true?: return nil
            case false?: throw CancellationError()
            case nil: break
            }
            // Refused without ending the stream: ended (as by itself), it cut the first reader's
            // body short, and nothing cancelled the transfer, which stayed paused, holding its
            // slot and connection, for as long as the server kept it open.
            let claimed = reading.withLock { busy -> Bool in
                if busy { return false }
                busy = true
                return true
            }
            guard claimed else { throw StreamingError.concurrentRead }
            defer { reading.withLock { $0 = false } }
            do {
                let chunk = try await withTaskCancellationHandler {
                    try await fetch()
                } onCancel: { [self] in
                    stop()
                }
                if chunk == nil { finish() }
                if ending.current == false { throw CancellationError() }
                return chunk
            } catch {
                if error as? StreamingError != .concurrentRead { finish() }
                throw Task.isCancelled ? CancellationError() : error
            }
        }

        /// Marks the body as ended by itself (the end, or a failure): nothing to cancel.
        private func finish() {
            ending.withLock { if $0 == nil { $0 = true } }
        }

        /// Stops the transfer, once, unless it already ended.
        func stop() {
            let stopNow = ending.withLock { state -> Bool in
                guard state == nil else { return false }
                state = false
                return true
            }
            if stopNow { cancelTransfer() }
        }

        deinit {
            if ending.current == nil { cancelTransfer() }
        }
    }

    /// One iteration: stopping it early (dropping the iterator before the end) stops the
    /// transfer.
    final class Consumer: Sendable {
        let source: Source

        init(_ source: Source) { self.source = source }

        func next() async throws -> Data? { try await source.next() }

        deinit { source.stop() }
    }
}
