/// The ready-made ``Request``: a factory, a parser and a response queue.
///
/// ```swift
/// let request = RequestType<User>(requestFactory: RequestFactory(router: UserRouter.user(id: "12")))
/// ```
///
/// - For a `Decodable` response, the parser is a `JSONDecoder`.
/// - For `Void`, the body is ignored.
public struct RequestType<Response>: Request {
    /// The queue the parser and the callback run on.
    public let responseQueue: DispatchQueue
    /// Turns the body of a 2xx response into the response value.
    public let requestParser: RequestParser<Response>
    /// Builds the `URLRequest`.
    public let requestFactory: RequestFactory

    /// Creates a request with a parser of your own.
    ///
    /// - Parameters:
    ///   - responseQueue: `.global(qos: .default)` by default.
    ///   - requestFactory: Builds the `URLRequest`.
    ///   - requestParser: Runs on `responseQueue` with the body of a 2xx response; what it
    ///     throws is delivered as the failure, unchanged but for a `DecodingError`, delivered as
    ///     one of the same case and coding path whose text is cut to 512 bytes and scrubbed of
    ///     the request's credentials.
    public init(
        responseQueue: DispatchQueue = .global(qos: .default),
        requestFactory: RequestFactory,
        requestParser: @escaping RequestParser<Response>
    ) {
        self.responseQueue = responseQueue
        self.requestParser = requestParser
        self.requestFactory = requestFactory
    }
}

// `SendableMetatype` (Swift 6.2+): the parser runs on the response queue, so the `Decodable`
// conformance must be usable off the caller's actor. Every type whose conformance is not isolated to
// an actor qualifies; a type with a `@MainActor` conformance is refused at compile time instead of
// racing at run time. Code in the Swift 5 language mode is not held to it: there a generic
// `T: Decodable` satisfies `SendableMetatype` (the Compat harness's `JustClient5` checks this).
#if compiler(>=6.2)
    extension RequestType where Response: Decodable & SendableMetatype {
        /// Creates a request whose body is decoded from JSON.
        ///
        /// - Parameters:
        ///   - responseQueue: `.global(qos: .default)` by default.
        ///   - requestFactory: Builds the `URLRequest`.
        ///   - decoder: A plain `JSONDecoder()` by default. Its `DecodingError` is delivered as the
        ///     failure. Configure it before passing it in, not afterwards.
        public init(
            responseQueue: DispatchQueue = .global(qos: .default),
            requestFactory: RequestFactory,
            decoder: JSONDecoder = JSONDecoder()
        ) {
            self.init(responseQueue: responseQueue, requestFactory: requestFactory) {
                try decoder.decode(Response.self, from: $0)
            }
        }
    }
#else
    extension RequestType where Response: Decodable {
        /// Creates a request whose body is decoded from JSON.
        ///
        /// - Parameters:
        ///   - responseQueue: `.global(qos: .default)` by default.
        ///   - requestFactory: Builds the `URLRequest`.
        ///   - decoder: A plain `JSONDecoder()` by default. Its `DecodingError` is delivered as the
        ///     failure. Configure it before passing it in, not afterwards.
        public init(
            responseQueue: DispatchQueue = .global(qos: .default),
            requestFactory: RequestFactory,
            decoder: JSONDecoder = JSONDecoder()
        ) {
            self.init(responseQueue: responseQueue, requestFactory: requestFactory) {
                try decoder.decode(Response.self, from: $0)
            }
        }
    }
#endif

extension RequestType where Response == Void {
    /// Creates a request that only needs a 2xx status; the body is ignored.
    ///
    /// - Parameters:
    ///   - responseQueue: `.global(qos: .default)` by default.
    ///   - requestFactory: Builds the `URLRequest`.
    public init(
        responseQueue: DispatchQueue = .global(qos: .default),
        requestFactory: RequestFactory
    ) {
        self.init(responseQueue: responseQueue, requestFactory: requestFactory) { _ in () }
    }
}

/// ``RequestType`` under its name in JustNetworking 1.x, with the same three initialisers.
public typealias BaseRequest<Response> = RequestType<Response>
