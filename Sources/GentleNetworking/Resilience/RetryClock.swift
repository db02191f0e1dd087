import Foundation

/// The time and randomness a ``RetryTransport`` uses, injectable so that tests can assert exact
/// delays without waiting for them.
public struct RetryClock: Sendable {
    /// The current time, for `Retry-After` dates.
    public var now: @Sendable () -> Date
    /// Waits `seconds`; must throw `CancellationError` promptly when the task is cancelled.
    public var sleep: @Sendable (TimeInterval) async throws -> Void
    /// A number uniform in `[0, 1)`, for the jitter.
    public var randomUnit: @Sendable () -> Double

    /// Creates a clock from its three parts.
    public init(
        now: @escaping @Sendable () -> Date,
        sleep: @escaping @Sendable (TimeInterval) async throws -> Void,
        randomUnit: @escaping @Sendable () -> Double
    ) {
        self.now = now
        self.sleep = sleep
        self.randomUnit = randomUnit
    }

    /// The real clock: `Date()`, `Task.sleep` (interrupted at once by cancellation) and the
    /// system random number generator.
    public static let live = RetryClock(
        now: { Date() },
        sleep: { seconds in
            guard seconds > 0 else { return try Task.checkCancellation() }
            try await Task.sleep(nanoseconds: Clamp.nanoseconds(min(seconds, 86_400)))  // any Double: no trap
        },
        randomUnit: { Double.random(in: 0..<1) }
    )
}
