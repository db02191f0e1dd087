import Foundation

/// Asks a paused transfer to go on: how a ``ChunkBuffer`` reaches its transport. A value that
/// holds no request and no closure, so a buffer can never keep its transfer alive through it.
protocol TransferResuming: Sendable {
    func resume()
}

/// The bounded buffer between a transport's producer (libcurl's write callback, a URLSession
/// delegate) and an ``HTTPByteStream`` consumer. When it holds `highWater` bytes it refuses the
/// next chunk: libcurl then pauses the transfer, and it is resumed (through `Resumer`) once the
/// consumer has drained the buffer below `lowWater`; a producer that cannot pause fails instead.
final class ChunkBuffer<Resumer: TransferResuming>: Sendable {
    private struct State {
        var chunks: [Data] = []
        var buffered = 0
        var paused = false
        var finished = false
        var failure: (any Error)?
        var waiter: CheckedContinuation<Data?, any Error>?
    }

    let highWater: Int
    let lowWater: Int
    private let state = Locked(State())
    /// Reaches the transport to resume the paused transfer; attached by the transport. A value
    /// holding no request, so the buffer can never keep its request alive.
    private let resumer = Locked<Resumer?>(nil)

    init(highWater: Int = 1 << 20) {
        self.highWater = max(1, highWater)
        self.lowWater = max(1, highWater / 4)
        ObjectWatch.note(self, "ChunkBuffer")
    }

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
            state.chunks.append(chunk)
            state.buffered += chunk.count
            return (true, nil)
        }
        waiter?.resume(returning: chunk)
        return accepted
    }

    /// Takes a chunk from a producer that cannot refuse it (a URLSession delegate); `true` means
    /// the buffer now holds `highWater` bytes or more: the producer should pause the transfer
    /// (it is resumed through `Resumer` once the consumer has drained the buffer below
    /// `lowWater`), or fail if it cannot.
    func append(_ chunk: Data) -> Bool {
        let (full, waiter) = state.withLock { state -> (Bool, CheckedContinuation<Data?, any Error>?) in
            if state.finished { return (false, nil) }
            if let waiter = state.waiter {
                state.waiter = nil
                return (false, waiter)
            }
            state.chunks.append(chunk)
            state.buffered += chunk.count
            if state.buffered >= highWater {
                state.paused = true
                return (true, nil)
            }
            return (false, nil)
        }
        waiter?.resume(returning: chunk)
        return full
    }

    /// Ends the stream, with an error or without. The first ending wins: a cancellation is not
    /// overwritten by the transfer's own ending that races with it.
    func finish(_ failure: (any Error)?) {
        let waiter = state.withLock { state -> CheckedContinuation<Data?, any Error>? in
            if state.finished { return nil }
            state.finished = true
            state.failure = failure
            defer { state.waiter = nil }
            return state.waiter
        }
        if let failure {
            waiter?.resume(throwing: failure)
        } else {
            waiter?.resume(returning: nil)
        }
    }

    /// The next chunk, or `nil` at the end.
    func next() async throws -> Data? {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Data?, any Error>) in
            let (immediate, resume) = state.withLock { state -> (Result<Data?, any Error>?, Bool) in
                if !state.chunks.isEmpty {
                    let chunk = state.chunks.removeFirst()
                    state.buffered -= chunk.count
                    let resume = state.paused && state.buffered <= lowWater
                    if resume { state.paused = false }
                    return (.success(chunk), resume)
                }
                if state.finished {
                    return (state.failure.map { .failure($0) } ?? .success(nil), false)
                }
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
