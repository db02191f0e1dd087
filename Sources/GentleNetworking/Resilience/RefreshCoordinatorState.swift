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
        /// The request carried a credential this state does not know (not the current one, nor
        /// one a refresh retired or issued) and the owner did not vouch for: possibly the
        /// caller's own, such as a partner API's key or a login's Basic credentials. Return the
        /// 401 as it is: replacing that credential with ours would send ours where the caller
        /// never meant it to go.
        case notIssued
    }

    /// The most refreshes allowed within ``window``.
    public let maxRefreshes: Int
    /// The window, in seconds.
    public let window: TimeInterval
    /// The hash of the credential being refreshed away from, while a refresh is in flight.
    public private(set) var refreshingFrom: String?
    /// Hashes of credentials that a successful refresh replaced (the most recent 64).
    public private(set) var retired: [String] = []
    /// Hashes of credentials a successful refresh produced, with the value of
    /// ``finishedRefreshes`` that refresh ended at (the most recent 64). A refresh may hand out
    /// the credential it refreshed from (a server that renews a session and keeps its token) or
    /// an older one again: a 401 for a request sent with it *before* that refresh ended is then
    /// settled by retrying, one sent after it by a new refresh.
    public private(set) var issued: [String: Int] = [:]
    /// When each recent refresh started.
    public private(set) var refreshStarts: [Date] = []
    /// How many refreshes have ended, successfully or not: the epoch an owner reads before it
    /// sends a request, and passes to ``unauthorized(sent:current:sentAtEpoch:now:vouchedFor:)``.
    public private(set) var finishedRefreshes = 0

    /// Creates the state with a loop guard of `maxRefreshes` per `window` seconds.
    ///
    /// A `window` that is NaN or negative means "not set": 60 s. (As 0, either turned the loop
    /// guard off: every 401 forgot the refreshes before it.) Infinity and huge values are capped
    /// at 10⁹ s.
    public init(maxRefreshes: Int, window: TimeInterval) {
        self.maxRefreshes = max(1, maxRefreshes)
        self.window = window.isNaN || window < 0 ? 60 : min(window, Clamp.maxSeconds)
    }

    /// Whether a refresh is in flight.
    public var isRefreshing: Bool { refreshingFrom != nil }

    /// A 401 arrived for a request sent with credential `sent`.
    ///
    /// - Parameters:
    ///   - sent: The hash of the credential the request carried.
    ///   - current: The hash of the credential the auth service would add now (`nil` when it has
    ///     none).
    ///   - sentAtEpoch: ``finishedRefreshes`` as read before the request was sent; `nil` when
    ///     unknown, which counts as sent after every refresh so far (a 401 for a credential that
    ///     a refresh handed out again then starts a refresh).
    ///   - now: The current time, for the loop guard's window. A refresh that started after
    ///     `now` (the clock was set back since) no longer counts.
    ///   - vouchedFor: Whether the owner knows `sent` came from its auth service, even if the app
    ///     has replaced it since (`false` by default).
    ///
    /// A credential that is neither `current` nor one this state has seen (refreshed from,
    /// retired or issued), and is not `vouchedFor`, is ``Action/notIssued``: the caller's own,
    /// or one the app replaced by itself (a new login while the request was in flight), which
    /// this state cannot tell apart. A vouched-for credential is handled as before: it joins a
    /// refresh in flight, or is retried with the current one. A retired credential joins a
    /// refresh in flight too, and is otherwise retried with the current one.
    public mutating func unauthorized(
        sent: String, current: String?, sentAtEpoch: Int? = nil, now: Date, vouchedFor: Bool = false
    ) -> Action {
        // Retired, and its successor being refreshed away from meanwhile: retried now, it would
        // go with that one and get a 401 returned; it waits for the refresh instead.
        if retired.contains(sent) { return refreshingFrom != nil ? .joinRefresh : .retryWithCurrentCredentials }
        guard vouchedFor || sent == current || sent == refreshingFrom || issued[sent] != nil else { return .notIssued }
        if refreshingFrom != nil { return .joinRefresh }
        if let current, current != sent { return .retryWithCurrentCredentials }
        if let sentAtEpoch, let issuedAt = issued[sent], sentAtEpoch < issuedAt {
            // Sent before the refresh that handed this credential out again had ended.
            return .retryWithCurrentCredentials
        }
        // A start "in the future" means the wall clock was set back since: forgotten, or the
        // guard would refuse every refresh until the clock caught up again (hours, a day).
        refreshStarts.removeAll {
            let age = now.timeIntervalSince($0)
            return age >= window || age < 0
        }
        if refreshStarts.count >= maxRefreshes { return .refuseLimitExceeded }
        refreshStarts.append(now)
        refreshingFrom = sent
        return .startRefresh
    }

    /// The in-flight refresh succeeded, and the credential is now `newCredential` (its hash;
    /// `nil` when unknown). The old credential is retired unless the refresh handed it out
    /// again; a credential handed out again is no longer retired.
    public mutating func refreshSucceeded(newCredential: String?) {
        finishedRefreshes &+= 1
        if let old = refreshingFrom, old != newCredential {
            retired.append(old)
            if retired.count > 64 { retired.removeFirst(retired.count - 64) }
        }
        if let newCredential {
            retired.removeAll { $0 == newCredential }
            issued[newCredential] = finishedRefreshes
            if issued.count > 64, let oldest = issued.min(by: { $0.value < $1.value }) {
                issued.removeValue(forKey: oldest.key)
            }
        }
        refreshingFrom = nil
    }

    /// The in-flight refresh succeeded, the new credential unknown: its old credential is
    /// retired. Prefer ``refreshSucceeded(newCredential:)``.
    public mutating func refreshSucceeded() {
        refreshSucceeded(newCredential: nil)
    }

    /// The in-flight refresh failed: nothing is retired, and the next 401 may try again.
    public mutating func refreshFailed() {
        finishedRefreshes &+= 1
        refreshingFrom = nil
    }
}
