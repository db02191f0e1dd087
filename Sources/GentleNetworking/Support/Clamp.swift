import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Turns durations a caller or a server gives (any `Double`: NaN, negative, infinite, huge)
/// into values that can be converted and slept on without trapping.
package enum Clamp {
    /// The longest duration ever used, in seconds: about 31 years, far below any overflow.
    package static let maxSeconds: Double = 1_000_000_000

    /// The idle timeout of a request whose own is not usable (NaN, zero, negative): 60 s, as
    /// `URLRequest`'s default, on every transport (``URLSessionTransport`` first takes its
    /// session's `timeoutIntervalForRequest`, the same 60 s unless configured).
    package static let defaultTimeout: Double = 60

    /// `seconds` as a usable timeout: `nil` for NaN, zero or negative values (no timeout given);
    /// infinity and huge values become ``maxSeconds``.
    package static func timeout(_ seconds: Double) -> Double? {
        guard !seconds.isNaN, seconds > 0 else { return nil }
        return min(seconds, maxSeconds)
    }

    /// `request` with a `timeoutInterval` corelibs' URLSession cannot trap on, for a data task
    /// of a session the library does not route (Apple platforms, where such a task is the
    /// session's own; a background session): corelibs converts it to an integer of milliseconds, and NaN or
    /// infinity killed the process. NaN, zero and negative values become 60 s (the default, as
    /// on every transport), huge ones ``maxSeconds``. A usable value is left alone: set, even to
    /// 60, it would override the session's own.
    package static func sessionSafeTimeout(_ request: URLRequest) -> URLRequest {
        let seconds = request.timeoutInterval
        guard timeout(seconds) != seconds else { return request }
        var request = request
        request.timeoutInterval = timeout(seconds) ?? defaultTimeout
        return request
    }

    /// `seconds` as a delay: NaN and negative values are 0; infinity and huge values are
    /// ``maxSeconds``.
    static func delay(_ seconds: Double) -> Double {
        guard !seconds.isNaN, seconds > 0 else { return 0 }
        return min(seconds, maxSeconds)
    }

    /// Whole milliseconds of a clamped `seconds`, at least 1: never traps.
    static func milliseconds(_ seconds: Double) -> Int {
        max(1, Int((delay(seconds) * 1000).rounded(.up)))
    }

    /// Whole seconds of a clamped `seconds`, rounded up, at least 1: never traps.
    static func wholeSeconds(_ seconds: Double) -> Int {
        max(1, Int(delay(seconds).rounded(.up)))
    }

    /// Nanoseconds of a clamped delay, for `Task.sleep`: never traps.
    static func nanoseconds(_ seconds: Double) -> UInt64 {
        UInt64(delay(seconds) * 1_000_000_000)
    }
}
