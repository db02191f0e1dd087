#if canImport(CCurl)
    import Foundation

    /// The bounded buffer between libcurl's write callback (producer, event-loop thread) and an
    /// ``HTTPByteStream`` consumer: when it holds `highWater` bytes the transfer is paused, and it
    /// resumes once the consumer has drained it below `lowWater`.
    final class CurlStreamBuffer: Sendable {
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
        /// Reaches the event loop to resume the paused transfer; attached by the transport. A
        /// value holding no request, so the buffer can never keep its request alive.
        private let resumer = Locked<CurlStreamResumer?>(nil)

        init(highWater: Int = 1 << 20) {
            self.highWater = max(1, highWater)
            self.lowWater = max(1, highWater / 4)
        }

        /// Attaches the way back to the event loop, once the transfer has its number.
        func attach(_ resumer: CurlStreamResumer) {
            self.resumer.withLock { $0 = resumer }
        }

        /// Offers a chunk from libcurl; `false` means "pause the transfer" (the chunk was not taken).
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

    /// How a stream buffer asks for its paused transfer to be resumed: the loop, weakly, and
    /// the transfer's number. No closure and no request, so no cycle can form through it.
    struct CurlStreamResumer: Sendable {
        weak var loop: CurlEventLoop?
        let transferNumber: UInt64

        func resume() {
            loop?.resumeTransfer(number: transferNumber)
        }
    }
#endif
