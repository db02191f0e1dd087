import Foundation

/// The single-flight token-refresh bookkeeping of ``ReauthTransport``, as a plain value: it
/// takes events and returns actions, and does no I/O, so every race can be tested directly.
///
/// Credentials are identified by a hash, never stored raw.
public struct RefreshCoordinatorState: Sendable {
    /// What the owner should do about a 401.
    public enum Action: Sendable, Hashable {
        /// The credential was already replaced: retry with the current one, no refresh.
        case retryWithCurrentCredentials
        /// A refresh is in flight: wait for it, then retry.
        case joinRefresh
        /// Start the refresh (the caller is now its owner), then retry.
        case startRefresh
        /// Too many refreshes in the window: fail instead of refreshing again.
        case refuseLimitExceeded
    }

    /// The most refreshes allowed within ``window``.
    public let maxRefreshes: Int
    /// The window, in seconds.
    public let window: TimeInterval
    /// The hash of the credential being refreshed away from, while a refresh is in flight.
    public private(set) var refreshingFrom: String?
    /// Hashes of credentials that a successful refresh replaced (the most recent 64).
    public private(set) var retired: [String] = []
    /// When each recent refresh started.
    public private(set) var refreshStarts: [Date] = []

    /// Creates the state with a loop guard of `maxRefreshes` per `window` seconds.
    public init(maxRefreshes: Int, window: TimeInterval) {
        self.maxRefreshes = max(1, maxRefreshes)
        self.window = max(0, window)
    }

    /// Whether a refresh is in flight.
    public var isRefreshing: Bool { refreshingFrom != nil }

    /// A 401 arrived for a request sent with credential `sent`; `current` is the credential the
    /// auth service would add now (`nil` when it has none).
    public mutating func unauthorized(sent: String, current: String?, now: Date) -> Action {
        if retired.contains(sent) { return .retryWithCurrentCredentials }
        if refreshingFrom != nil { return .joinRefresh }
        if let current, current != sent { return .retryWithCurrentCredentials }
        refreshStarts.removeAll { now.timeIntervalSince($0) >= window }
        if refreshStarts.count >= maxRefreshes { return .refuseLimitExceeded }
        refreshStarts.append(now)
        refreshingFrom = sent
        return .startRefresh
    }

    /// The in-flight refresh succeeded: its old credential is retired.
    public mutating func refreshSucceeded() {
        if let old = refreshingFrom {
            retired.append(old)
            if retired.count > 64 { retired.removeFirst(retired.count - 64) }
        }
        refreshingFrom = nil
    }

    /// The in-flight refresh failed: nothing is retired, and the next 401 may try again.
    public mutating func refreshFailed() {
        refreshingFrom = nil
    }
}
