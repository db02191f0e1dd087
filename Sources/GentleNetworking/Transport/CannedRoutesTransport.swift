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
        /// Exactly one route must match; more is ``Error/ambiguousMatch(count:)``.
        case requireUniqueMatch
    }

    /// The seed library's name for ``MatchMode``.
    public typealias Mode = MatchMode

    /// Why a ``CannedRoutesTransport`` could not answer a request.
    public enum Error: Swift.Error, Sendable, Hashable {
        /// The request has no URL.
        case missingRequestURL
        /// No route matches the request.
        case noMatch
        /// Several routes match, in ``MatchMode/requireUniqueMatch`` mode.
        case ambiguousMatch(count: Int)
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
    /// - Throws: `CancellationError` when cancelled; ``Error/missingRequestURL`` when the
    ///   request has no URL; ``Error/noMatch`` when no route matches;
    ///   ``Error/ambiguousMatch(count:)`` when several match in ``MatchMode/requireUniqueMatch``
    ///   mode; ``CannedResponse/Error/failedToCreateHTTPURLResponse`` when the matching route's
    ///   status is not a valid HTTP status.
    public func data(for request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let (canned, response) = try answer(request)
        return (canned.data, response)
    }

    /// Answers `request` with the matching route's body streamed: its
    /// ``CannedResponse/chunks``, each after ``CannedResponse/chunkDelay``.
    ///
    /// - Throws: What ``data(for:)`` throws.
    public func stream(for request: URLRequest) async throws -> (HTTPByteStream, HTTPURLResponse) {
        let (canned, response) = try answer(request)
        return (canned.makeStream(), response)
    }

    /// Records `request` and finds its route's canned response.
    private func answer(_ request: URLRequest) throws -> (CannedResponse, HTTPURLResponse) {
        try Task.checkCancellation()
        requests.withLock { $0.append(request) }
        guard let url = request.url else { throw Error.missingRequestURL }
        let matching = routes.filter { $0.pattern.matches(request) }
        guard let first = matching.first else { throw Error.noMatch }
        if mode == .requireUniqueMatch, matching.count > 1 {
            throw Error.ambiguousMatch(count: matching.count)
        }
        return (first.response, try first.response.makeResponse(url: url))
    }
}

/// The earlier name of ``CannedRoutesTransport/Error``; the same type.
public typealias CannedRoutesTransportError = CannedRoutesTransport.Error
