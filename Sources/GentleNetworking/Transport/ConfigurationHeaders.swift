import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A session configuration's `httpAdditionalHeaders`, put on each request by a transport that
/// sends without the session adding them (``PinningTransport`` over libcurl, and
/// ``URLSessionTransport`` on Linux, whose routed session is made without them): so they are
/// validated like the request's own, and a redirect to another origin drops the credentials
/// among them. Values that are not strings are left out, as `URLSession` leaves them.
struct ConfigurationHeaders: Sendable {
    /// The names and values, in the configuration's order.
    let fields: [(name: String, value: String)]

    /// No headers.
    init() {
        fields = []
    }

    /// The `httpAdditionalHeaders` of `configuration`.
    init(_ configuration: URLSessionConfiguration) {
        var fields: [(name: String, value: String)] = []
        for case (let name as String, let value as String) in configuration.httpAdditionalHeaders ?? [:] {
            fields.append((name, value))
        }
        self.fields = fields
    }

    /// Adds each field `request` does not set itself (the request's own value wins).
    ///
    /// - Throws: ``TransportError`` (`.invalidRequest`, naming the header, never its value) for
    ///   a field that is not valid: Foundation's `setValue` would drop it without a word on Linux.
    func add(to request: inout URLRequest) throws(TransportError) {
        if fields.count > RequestValidator.maxRequestHeaderFields {
            try RequestValidator.checkHeadSize(fieldCount: fields.count, bytes: 0, url: request.url)
        }
        for (name, value) in fields where request.value(forHTTPHeaderField: name) == nil {
            try RequestValidator.setHeader(value, named: name, on: &request)
        }
    }
}
