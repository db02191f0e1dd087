import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A transport that answers each request with the first (or only) ``CannedRoute`` whose
/// pattern matches it.
///
/// ```swift
/// let transport = CannedRoutesTransport(routes: [
///     CannedRoute(pattern: RequestPattern(method: .get, path: "/api/models"),
///                 response: CannedResponse(string: "[]")),
/// ])
/// ```
public final class CannedRoutesTransport: HTTPTransportProtocol {
    /// How overlapping routes are resolved.
    public enum MatchMode: Sendable {
        /// The first matching route in the list answers (the default).
        case firstMatchWins
        /// Exactly one route must match; more is ``CannedRoutesTransportError/ambiguousMatch(count:)``.
        case requireUniqueMatch
    }

    /// The routes, in order.
    public let routes: [CannedRoute]
    /// How overlapping routes are resolved; ``MatchMode/firstMatchWins`` by default.
    public let mode: MatchMode
    private let requests = Locked<[URLRequest]>([])

    /// Creates a transport.
    ///
    /// - Parameters:
    ///   - routes: The routes, tried in order.
    ///   - mode: ``MatchMode/firstMatchWins`` by default.
    public init(routes: [CannedRoute], mode: MatchMode = .firstMatchWins) {
        self.routes = routes
        self.mode = mode
    }

    /// Every request received so far, oldest first, matched or not.
    public var receivedRequests: [URLRequest] { requests.current }

    /// Answers `request`.
    ///
    /// - Throws: ``CannedRoutesTransportError/noMatch`` when no route matches, and
    ///   ``CannedRoutesTransportError/ambiguousMatch(count:)`` when several match in
    ///   ``MatchMode/requireUniqueMatch`` mode.
    public func data(for request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        try Task.checkCancellation()
        requests.withLock { $0.append(request) }
        let matching = routes.filter { $0.pattern.matches(request) }
        guard let first = matching.first else {
            throw CannedRoutesTransportError.noMatch
        }
        if mode == .requireUniqueMatch, matching.count > 1 {
            throw CannedRoutesTransportError.ambiguousMatch(count: matching.count)
        }
        return try first.response.makeResponse(for: request)
    }
}

/// Why a ``CannedRoutesTransport`` could not answer a request.
public enum CannedRoutesTransportError: Error, Sendable, Equatable {
    /// No route matches the request.
    case noMatch
    /// Several routes match, in ``CannedRoutesTransport/MatchMode/requireUniqueMatch`` mode.
    case ambiguousMatch(count: Int)
}
