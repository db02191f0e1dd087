import Foundation

/// Asks a paused transfer to go on: how a ``ChunkBuffer`` reaches its transport. A value that
/// holds no request and no closure, so a buffer can never keep its transfer alive through it.
protocol TransferResuming: Sendable {
    func resume()
}

/// The bounded buffer between a transport's producer (libcurl's write callback, a URLSession
/// delegate) and an ``HTTPByteStream`` consumer. When it holds `highWater` bytes it refuses the
/// next chunk: libcurl then pauses the transfer, and it is resumed (through `Resumer`) once the
/// consumer has drained the buffer below `lowWater`. A producer that cannot pause (URLSession on
/// Linux) gets a buffer with a ``SpillFile``: what arrives past `highWater` goes to disk and is
/// read back in order, so memory stays constant; past the spill limit the producer fails.
final class ChunkBuffer<Resumer: TransferResuming>: Sendable {
    private struct State {
        /// Chunks in arrival order; the ones before `head` are taken (an O(1) queue).
        var chunks: [Data] = []
        var head = 0
        var buffered = 0
        var paused = false
        var finished = false
        var failure: (any Error)?
        var waiter: CheckedContinuation<Data?, any Error>?
        /// Made at the first overflow, in spill mode.
        var spill: SpillFile?
        /// The spill file could not be read back: the stream has failed, and the producer is
        /// told to stop.
        var broken = false

        var isEmpty: Bool { head == chunks.count }

        mutating func push(_ chunk: Data) {
            chunks.append(chunk)
            buffered += chunk.count
        }

        mutating func pop() -> Data {
            let chunk = chunks[head]
            chunks[head] = Data()
            head += 1
            buffered -= chunk.count
            if head == chunks.count {
                chunks.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 1024, head * 2 >= chunks.count {
                chunks.removeFirst(head)
                head = 0
            }
            return chunk
        }
    }

    /// What ``append(_:)`` did with a chunk.
    enum AppendOutcome: Equatable {
        /// Taken; the buffer is below `highWater` (or the chunk went to disk).
        case taken
        /// Taken; the buffer now holds `highWater` bytes or more: pause the producer.
        case full
        /// Not taken: the spill file is at its limit, the disk refused it, or the stream failed
        /// reading it back. End the transfer.
        case overflow
    }

    let highWater: Int
    let lowWater: Int
    /// The most unread bytes held on disk; `nil` when nothing spills (the producer pauses).
    let spillLimit: Int64?
    /// The most bytes one read from the spill file returns.
    static var spillReadSize: Int { 256 * 1024 }
    private let state = Locked(State())
    /// Reaches the transport to resume the paused transfer; attached by the transport. A value
    /// holding no request, so the buffer can never keep its request alive.
    private let resumer = Locked<Resumer?>(nil)

    /// - Parameter spillLimit: For a producer that cannot pause: the most unread bytes kept on
    ///   disk once `highWater` is reached; `nil` (the default) for a producer that pauses.
    init(highWater: Int = 1 << 20, spillLimit: Int64? = nil) {
        self.highWater = max(1, highWater)
        self.lowWater = max(1, highWater / 4)
        self.spillLimit = spillLimit.map { max(0, $0) }
        ObjectWatch.note(self, "ChunkBuffer")
    }

    /// The unread bytes on disk now (for tests).
    var spilledBytes: Int64 { state.withLock { $0.spill?.pending ?? 0 } }
    /// Whether a reader is waiting for the next chunk now (for tests).
    var isAwaited: Bool { state.withLock { $0.waiter != nil } }

    /// Attaches the way back to the transport (for libcurl, once the transfer has its number).
    func attach(_ resumer: Resumer) {
        self.resumer.withLock { $0 = resumer }
    }

    /// Offers a chunk; `false` means the buffer is full and the chunk was not taken (libcurl
    /// pauses the transfer and offers it again later).
    func offer(_ chunk: Data) -> Bool {
        let (accepted, waiter) = state.withLock { state -> (Bool, CheckedContinuation<Data?, any Error>?) in
            if let waiter = state.waiter {
                state.waiter = nil
                return (true, waiter)
            }
            if state.buffered >= highWater {
                state.paused = true
                return (false, nil)
            }
            state.push(chunk)
            return (true, nil)
        }
        waiter?.resume(returning: chunk)
        return accepted
    }

    /// Takes a chunk from a producer that cannot refuse it (a URLSession delegate).
    ///
    /// Without a spill limit, ``AppendOutcome/full`` means the buffer now holds `highWater`
    /// bytes or more: the producer should pause the transfer (it is resumed through `Resumer`
    /// once the consumer has drained the buffer below `lowWater`). With one, chunks past
    /// `highWater` (and every chunk after them until the consumer has read the file back) go to
    /// the spill file, and ``AppendOutcome/overflow`` means it is at its limit.
    func append(_ chunk: Data) -> AppendOutcome {
        let (outcome, waiter) = state.withLock { state -> (AppendOutcome, CheckedContinuation<Data?, any Error>?) in
            if state.finished { return (state.broken ? .overflow : .taken, nil) }
            if let waiter = state.waiter {
                state.waiter = nil
                return (.taken, waiter)
            }
            if let spillLimit, (state.spill?.pending ?? 0) > 0 || state.buffered >= highWater {
                guard spillLimit > 0 else { return (.overflow, nil) }
                do {
                    if state.spill == nil { state.spill = try SpillFile(limit: spillLimit) }
                    return (try state.spill?.write(chunk) == true ? .taken : .overflow, nil)
                } catch {
                    return (.overflow, nil)
                }
            }
            state.push(chunk)
            if spillLimit == nil, state.buffered >= highWater {
                state.paused = true
                return (.full, nil)
            }
            return (.taken, nil)
        }
        waiter?.resume(returning: chunk)
        return outcome
    }

    /// Ends the stream, with an error or without. The first ending wins: a cancellation is not
    /// overwritten by the transfer's own ending that races with it. What is buffered (in memory
    /// or on disk) is still read before the ending.
    ///
    /// A cancellation (the consumer stopped) drops what is buffered at once, the spill file
    /// with it, even after another ending: nobody will read it, and a stream value kept after
    /// the loop left it held up to the spill limit on disk (and its descriptor) for as long as
    /// the value lived.
    func finish(_ failure: (any Error)?) {
        let dropped = failure is CancellationError
        let (waiter, spill) = state.withLock { state -> (CheckedContinuation<Data?, any Error>?, SpillFile?) in
            var spill: SpillFile?
            if dropped {
                // Also after the end: a body that arrived whole while the consumer lagged is
                // held until the consumer leaves, and then never read.
                state.chunks = []
                state.head = 0
                state.buffered = 0
                swap(&spill, &state.spill)
            }
            if state.finished {
                // Dropped after a clean end: never read as one.
                if dropped, state.failure == nil { state.failure = failure }
                return (nil, spill)
            }
            state.finished = true
            state.failure = failure
            defer { state.waiter = nil }
            return (state.waiter, spill)
        }
        // The spill file is closed here, outside the lock, when its last reference goes.
        withExtendedLifetime(spill) {}
        if let failure {
            waiter?.resume(throwing: failure)
        } else {
            waiter?.resume(returning: nil)
        }
    }

    /// The next chunk, or `nil` at the end: memory first, then the spill file, which always
    /// holds the newer bytes.
    func next() async throws -> Data? {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Data?, any Error>) in
            let (immediate, resume) = state.withLock { state -> (Result<Data?, any Error>?, Bool) in
                if !state.isEmpty {
                    let chunk = state.pop()
                    let resume = state.paused && state.buffered <= lowWater
                    if resume { state.paused = false }
                    return (.success(chunk), resume)
                }
                if let spill = state.spill, spill.pending > 0 {
                    do {
                        return (.success(try spill.read(upTo: Self.spillReadSize)), false)
                    } catch {
                        state.finished = true
                        state.failure = error
                        state.broken = true
                        state.spill = nil
                        return (.failure(error), false)
                    }
                }
                if state.finished {
                    return (state.failure.map { .failure($0) } ?? .success(nil), false)
                }
                // One waiter at a time: replaced, the first task's continuation was lost (it
                // waited forever, cancellation resuming only the second).
                if state.waiter != nil { return (.failure(StreamingError.concurrentRead), false) }
                let resume = state.paused
                state.paused = false
                state.waiter = continuation
                return (nil, resume)
            }
            if resume { resumer.current?.resume() }
            if let immediate { continuation.resume(with: immediate) }
        }
    }
}
