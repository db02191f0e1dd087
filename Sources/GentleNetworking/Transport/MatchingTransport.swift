import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A transport that forwards only the requests matching a ``RequestPattern`` and refuses the
/// others: in tests, to prove that a component sends nothing but what it should.
///
/// ```swift
/// let transport = MatchingTransport(
///     pattern: RequestPattern(method: .get, path: "/api/models"),
///     transport: CannedResponseTransport(string: "[]"))
/// ```
public struct MatchingTransport: HTTPTransportProtocol {
    /// Why a ``MatchingTransport`` refused a request.
    public enum MatchingTransportError: Error, Sendable, Hashable {
        /// The request does not match ``MatchingTransport/pattern``; it was not forwarded.
        case notMatched
    }

    /// The requests that are forwarded.
    public let pattern: RequestPattern
    /// Where matching requests go.
    public let transport: any HTTPTransportProtocol

    /// Creates a transport forwarding the requests that match `pattern` to `transport`.
    public init(pattern: RequestPattern, transport: any HTTPTransportProtocol) {
        self.pattern = pattern
        self.transport = transport
    }

    /// Forwards `request` when it matches ``pattern``.
    ///
    /// - Throws: ``MatchingTransportError/notMatched`` for a request that does not match
    ///   (including one without a URL); otherwise what ``transport`` throws.
    public func data(for request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        guard pattern.matches(request) else { throw MatchingTransportError.notMatched }
        return try await transport.data(for: request)
    }

    /// Forwards a stream of `request` when it matches ``pattern``, as ``transport`` streams it
    /// (without this, the protocol's default read the whole body before the first byte, and an
    /// endless event stream never began).
    ///
    /// - Throws: ``MatchingTransportError/notMatched`` as ``data(for:)`` does; otherwise what
    ///   ``transport`` throws.
    public func stream(for request: URLRequest) async throws -> (HTTPByteStream, HTTPURLResponse) {
        guard pattern.matches(request) else { throw MatchingTransportError.notMatched }
        return try await transport.stream(for: request)
    }
}

/// ``MatchingTransport/MatchingTransportError`` by its short name, so that
/// `catch MatchingTransportError.notMatched` works outside the type too.
public typealias MatchingTransportError = MatchingTransport.MatchingTransportError
