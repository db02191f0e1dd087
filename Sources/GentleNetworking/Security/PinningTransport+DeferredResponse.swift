import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension PinningTransport: FieldAddingTransport {
    /// `data(for:)`, with the `HTTPURLResponse` built only if the caller asks for it, when the
    /// pinned connection pool can defer it (``CurlTransport`` on Linux); otherwise the response
    /// is built as usual and wrapped. Trust failures map exactly as in `data(for:)`.
    ///
    /// Without it, `HTTPNetworkService.request` over a pinning transport built every response
    /// (on Linux more work than the rest of a small request on the client side).
    func deferredData(for request: URLRequest) async throws -> (Data, DeferredResponse) {
        try await send(request) { try await innerExchange.deferredExchange($0) }
    }

    /// ``deferredData(for:)`` with `fields` passed down to the pinned connection pool (see
    /// ``FieldAddingTransport``).
    func deferredData(
        for request: URLRequest, adding fields: [(String, String)]
    ) async throws -> (Data, DeferredResponse) {
        try await send(request) { try await innerExchange.deferredExchange($0, adding: fields) }
    }
}
