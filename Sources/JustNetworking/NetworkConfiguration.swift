import GentleNetworking

/// Holds the global base URL that every ``Router`` uses unless it overrides ``Router/baseURL``.
///
/// ```swift
/// NetworkConfiguration.setCurrentURL(URL(string: "https://www.myApi.com")!)
/// ```
///
/// - No URL is set at first. Until one is, routers that rely on it answer
///   ``unsetBaseURL``, and requesters fail their requests with
///   ``JustNetworkingError/baseURLNotSet(router:)`` instead of crashing.
/// - Reading and writing are safe from any thread; the last write wins.
public final class NetworkConfiguration: Sendable {
    /// The configuration that routers read by default.
    public static let shared = NetworkConfiguration()

    /// The placeholder ``Router/baseURL`` answers when no URL was ever set:
    /// `file:///justnetworking-base-url-not-set`.
    ///
    /// A request built on it is never sent: ``RequestFactory/makeURLRequest()`` throws
    /// ``JustNetworkingError/baseURLNotSet(router:)`` instead.
    public static let unsetBaseURL = URL(fileURLWithPath: "/justnetworking-base-url-not-set")

    private let state: Locked<URL?>

    /// Creates a configuration of its own, for code that passes one around instead of using
    /// ``shared``.
    ///
    /// - Parameter currentURL: `nil` (no URL set) by default.
    public init(currentURL: URL? = nil) {
        self.state = Locked(currentURL)
    }

    /// The base URL set last; `nil` until one is set, and after ``clearCurrentURL()``.
    public var currentURL: URL? {
        state.current
    }

    /// ``currentURL`` under the name of JustNetworking's `GlobalConfiguration`.
    public var url: URL? {
        currentURL
    }

    /// Sets the base URL, replacing any earlier one.
    public func setCurrentURL(_ url: URL) {
        state.withLock { $0 = url }
    }

    /// Forgets the base URL, as if none had ever been set.
    public func clearCurrentURL() {
        state.withLock { $0 = nil }
    }

    /// Sets the base URL of ``shared``, replacing any earlier one.
    public static func setCurrentURL(_ url: URL) {
        shared.setCurrentURL(url)
    }

    /// Forgets the base URL of ``shared``, as if none had ever been set.
    public static func clearCurrentURL() {
        shared.clearCurrentURL()
    }

    /// Returns ``shared`` to its initial state (no URL set), such as between tests.
    public static func reset() {
        shared.clearCurrentURL()
    }
}

/// ``NetworkConfiguration`` under its name in JustNetworking 1.x.
///
/// `GlobalConfiguration.setCurrentURL(_:)`, `GlobalConfiguration.shared` and `.url` keep working.
public typealias GlobalConfiguration = NetworkConfiguration
