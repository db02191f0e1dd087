import GentleNetworking

/// A ``Requester`` that sends through a GentleNetworking transport, so a stack of
/// `RetryTransport`, `ReauthTransport`, `ETagTransport` and the like applies to JustNetworking
/// requests.
///
/// ```swift
/// let requester = TransportRequester(transport: RetryTransport(inner: DefaultTransport.make()))
/// requester.execute(RequestType<User>(requestFactory: factory)) { result in … }
/// ```
///
/// It follows the rules of ``Requester``, as the `URLSession` requester does; its errors are the
/// stack's (`TransportError`, `CancellationError`) rather than `URLError`s.
public struct TransportRequester: Requester, Sendable {
    /// The transport (or decorated stack) each request is sent through.
    public let transport: any HTTPTransportProtocol

    /// Creates a requester.
    ///
    /// - Parameter transport: `DefaultTransport.make()` by default: libcurl on Linux,
    ///   `URLSession.shared` on Apple platforms.
    public init(transport: any HTTPTransportProtocol = DefaultTransport.make()) {
        self.transport = transport
    }

    /// Sends `request` from a new task and calls `response` once on `request.responseQueue`.
    ///
    /// - No base URL set: ``JustNetworkingError/baseURLNotSet(router:)``, and nothing is sent.
    /// - A non-2xx status (after the stack's own retries):
    ///   ``JustNetworkingError/unacceptableStatusCode(statusCode:headers:body:)`` with the body.
    /// - The transport's errors (`TransportError`, `URLError`, `CancellationError`) and the
    ///   parser's error are delivered unchanged (a `DecodingError`'s text cut to 512 bytes and
    ///   scrubbed of the request's credentials, its case and coding path kept).
    public func execute<T: Request>(_ request: T, response: @escaping RequestResponse<T.Response>) {
        send(request, response: response)
    }

    /// Like ``execute(_:response:)``, and returns the task that sends the request.
    ///
    /// Cancelling the task cancels the transfer; the callback then receives the transport's
    /// error (`CancellationError` from the GentleNetworking transports), still exactly once.
    /// - Returns: The task, or `nil` when the request failed before anything was sent (the
    ///   failure is delivered to `response` all the same).
    @discardableResult
    public func send<T: Request>(
        _ request: T, response: @escaping RequestResponse<T.Response>
    ) -> Task<Void, Never>? {
        guard let urlRequest = RequesterDelivery.urlRequest(for: request, response: response) else { return nil }
        let transport = self.transport
        return Task {
            let outcome: RequesterDelivery.Outcome
            do {
                let (data, httpResponse) = try await transport.data(for: urlRequest)
                outcome = .body(
                    data, statusCode: httpResponse.statusCode, headers: httpResponse.stringHeaders)
            } catch {
                outcome = .failure(error)
            }
            RequesterDelivery.deliver(outcome, for: request, sent: urlRequest, response: response)
        }
    }
}
