import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The part of ``NetworkManagerConfiguration`` a ``NetworkEngine`` needs to set itself up.
public struct NetworkEngineConfiguration: Sendable {
    /// Headers for every request; `nil` by default.
    public let headers: HttpHeaders?
    /// The timeout in seconds; `0` (the default) for the transport's own.
    public let timeoutInterval: TimeInterval
    /// The cache policy; `nil` (the default) for `.useProtocolCachePolicy`.
    public let cachePolicy: URLRequest.CachePolicy?
    private var delegateBox: WeakSessionDelegate

    /// The `URLSession` delegate, held weakly; `nil` by default. Settable, as Y-Network's
    /// `weak var` is (the configuration stays a `Sendable` value).
    public var sessionDelegate: URLSessionDelegate? {
        get { delegateBox.value }
        set { delegateBox = WeakSessionDelegate(newValue) }
    }

    /// Creates an engine configuration.
    public init(
        headers: HttpHeaders? = nil, timeoutInterval: TimeInterval = 0, cachePolicy: URLRequest.CachePolicy? = nil,
        sessionDelegate: URLSessionDelegate? = nil
    ) {
        self.headers = headers
        self.timeoutInterval = max(0, timeoutInterval)
        self.cachePolicy = cachePolicy
        self.delegateBox = WeakSessionDelegate(sessionDelegate)
    }
}

/// A weak reference to a `URLSessionDelegate`, so configurations stay values that can be shared.
final class WeakSessionDelegate: @unchecked Sendable {
    // @unchecked: the reference is written once in init; the delegate itself is only handed to
    // URLSession, which calls it on its own delegate queue.
    private(set) weak var value: URLSessionDelegate?

    init(_ value: URLSessionDelegate?) {
        self.value = value
    }
}
