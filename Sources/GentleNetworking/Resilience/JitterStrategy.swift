import Foundation

/// How a retry delay is randomized, so that many clients do not retry in lockstep.
///
/// With `exponential = min(maxDelay, baseDelay * 2^attempt)` and `r` uniform in `[0, 1)`:
/// - ``full``: `r * exponential`, anywhere from 0 to the exponential delay;
/// - ``equal``: `exponential / 2 + r * exponential / 2`, never less than half of it;
/// - ``decorrelated``: `min(maxDelay, baseDelay + r * (previous * 3 - baseDelay))`, where
///   `previous` is the last delay (`baseDelay` before the first retry);
/// - ``disabled``: `exponential` itself, with no randomness.
///
/// The first three are the formulas from AWS's "Exponential Backoff and Jitter".
public enum JitterStrategy: Sendable, Hashable {
    /// Full jitter: uniform between 0 and the exponential delay. The default.
    case full
    /// Equal jitter: half the exponential delay, plus up to half again.
    case equal
    /// Decorrelated jitter: up to three times the previous delay, never below the base.
    case decorrelated
    /// No jitter: exactly the exponential delay. What `RetryPolicy(jitter: nil)` means. Clients
    /// that fail together retry together, so prefer a jittered strategy against shared servers.
    case disabled

    /// The delay before retry number `attempt` (0 for the first retry).
    ///
    /// - Parameters:
    ///   - attempt: How many retries came before this one. Negative values count as 0.
    ///   - baseDelay: The first delay in seconds. NaN and negative values count as 0, infinity
    ///     and anything larger as `Clamp.maxSeconds` (about 31 years): the delay is always finite.
    ///   - maxDelay: The cap in seconds, clamped the same way; no delay exceeds it.
    ///   - previousDelay: The last delay (only ``decorrelated`` uses it); `nil` before the first retry.
    ///   - randomUnit: A number in `[0, 1)`; values outside are clamped, and NaN counts as 0.
    public func delay(
        attempt: Int, baseDelay: TimeInterval, maxDelay: TimeInterval, previousDelay: TimeInterval?, randomUnit: Double
    ) -> TimeInterval {
        // Finite: `0 * .infinity` is NaN, so an infinite base or cap made the delay NaN (which
        // traps a caller that converts it to nanoseconds).
        let base = Clamp.delay(baseDelay)
        let cap = Clamp.delay(maxDelay)
        // `max(.nan, 0)` is NaN (its first argument): a NaN unit made a NaN delay.
        let unit = randomUnit.isNaN ? 0 : min(max(randomUnit, 0), 1)
        let exponent = Double(min(max(attempt, 0), 62))
        let exponential = min(cap, base * pow(2, exponent))
        switch self {
        case .disabled:
            return exponential
        case .full:
            return unit * exponential
        case .equal:
            return exponential / 2 + unit * exponential / 2
        case .decorrelated:
            let previous = max(Clamp.delay(previousDelay ?? base), base)
            let upper = previous * 3
            return min(cap, base + unit * (upper - base))
        }
    }
}
