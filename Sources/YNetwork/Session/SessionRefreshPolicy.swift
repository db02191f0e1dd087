import Foundation

/// How a ``NetworkManager`` refreshes its ``SessionManager``'s credentials on a 401: the loop
/// guard, the refresh timeout and the clock.
///
/// ```swift
/// var configuration = NetworkManagerConfiguration(basePath: "https://api.example.com")
/// configuration.sessionRefreshPolicy = SessionRefreshPolicy(maxRefreshes: 5, window: 120, timeout: 10)
/// ```
public struct SessionRefreshPolicy: Sendable {
    /// The most refreshes started within ``window``; 3 by default. A 401 beyond it fails with
    /// ``NetworkError/unauthenticated`` without refreshing (a server that rejects every fresh
    /// token would otherwise cause a refresh storm). Values below 1 count as 1, set here or in
    /// ``init(maxRefreshes:window:timeout:now:)``.
    public var maxRefreshes: Int {
        didSet { maxRefreshes = Self.clamped(maxRefreshes: maxRefreshes) }
    }
    /// The loop-guard window in seconds; 60 by default. NaN and negative values count as 60 s,
    /// set here or in the initializer.
    public var window: TimeInterval {
        didSet { window = Self.clamped(window: window) }
    }
    /// How long a refresh may take, in seconds; 30 by default. When it runs longer, every
    /// request waiting for it fails with ``NetworkError/unauthenticated`` and the refresh task is
    /// cancelled; its late result is ignored. NaN counts as 30 s, negative values as 0 (fail at
    /// once), and it is at most a day, set here or in the initializer: set to NaN afterwards, it
    /// made every refresh time out at once, whatever the refresh did.
    public var timeout: TimeInterval {
        didSet { timeout = Self.clamped(timeout: timeout) }
    }
    /// The current time, for the loop guard; `Date()` by default. Inject a fixed clock in tests.
    public var now: @Sendable () -> Date

    /// Creates a policy.
    ///
    /// - Parameters:
    ///   - maxRefreshes: 3 by default; values below 1 count as 1.
    ///   - window: 60 s by default; NaN and negative values count as 60 s (as 0, `max(0, x)` for
    ///     either, the window forgot every refresh at once and the loop guard never refused).
    ///   - timeout: 30 s by default; negative values count as 0 (fail at once); at most a day.
    ///   - now: `Date()` by default.
    public init(
        maxRefreshes: Int = 3, window: TimeInterval = 60, timeout: TimeInterval = 30,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.maxRefreshes = Self.clamped(maxRefreshes: maxRefreshes)
        self.window = Self.clamped(window: window)
        self.timeout = Self.clamped(timeout: timeout)
        self.now = now
    }

    private static func clamped(maxRefreshes: Int) -> Int { max(1, maxRefreshes) }
    private static func clamped(window: TimeInterval) -> TimeInterval { window.isNaN || window < 0 ? 60 : window }
    private static func clamped(timeout: TimeInterval) -> TimeInterval {
        timeout.isNaN ? 30 : min(max(0, timeout), 86_400)
    }
}
