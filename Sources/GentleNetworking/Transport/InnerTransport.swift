import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A decorator's inner transport, with what it can do looked up once, when the decorator is made:
/// whether it can defer the response (``DeferredResponseTransport``) and take added fields
/// (``FieldAddingTransport``). Asking with `as?` on every request cost a dynamic cast, about 700
/// instructions, per decorator per request.
struct InnerTransport: Sendable {
    let transport: any HTTPTransportProtocol
    private let deferring: (any DeferredResponseTransport)?
    private let adding: (any FieldAddingTransport)?

    init(_ transport: any HTTPTransportProtocol) {
        self.transport = transport
        self.deferring = transport as? any DeferredResponseTransport
        self.adding = transport as? any FieldAddingTransport
    }

    /// `deferredData(for:)` when the transport can defer the response, else `data(for:)` with
    /// its response wrapped.
    func deferredExchange(_ request: URLRequest) async throws -> (Data, DeferredResponse) {
        if let deferring {
            return try await deferring.deferredData(for: request)
        }
        let (data, response) = try await transport.data(for: request)
        return (data, DeferredResponse(response))
    }

    /// ``deferredExchange(_:)`` with `fields` sent as if `request` carried them (each replacing
    /// a field of the same name): passed down without copying `request` to a transport that
    /// can (``FieldAddingTransport``), set on a copy for any other.
    func deferredExchange(
        _ request: URLRequest, adding fields: [(String, String)]
    ) async throws -> (Data, DeferredResponse) {
        if fields.isEmpty { return try await deferredExchange(request) }
        if let adding {
            return try await adding.deferredData(for: request, adding: fields)
        }
        return try await deferredExchange(request.adding(fields))
    }
}
