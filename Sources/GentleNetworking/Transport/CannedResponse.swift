import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A fixed HTTP response, for tests and previews.
public struct CannedResponse: Sendable {
    /// The body.
    public let data: Data
    /// The status code; 200 by default.
    public let statusCode: Int
    /// The HTTP version reported in the response; `"HTTP/1.1"` by default.
    public let httpVersion: String?
    /// The response headers; none by default.
    public let headerFields: [String: String]?

    /// Creates a response from raw bytes.
    ///
    /// - Parameters:
    ///   - data: The body.
    ///   - statusCode: The status; 200 by default.
    ///   - httpVersion: The reported HTTP version; `"HTTP/1.1"` by default.
    ///   - headerFields: Response headers; `nil` by default.
    public init(
        data: Data,
        statusCode: Int = 200,
        httpVersion: String? = "HTTP/1.1",
        headerFields: [String: String]? = nil
    ) {
        self.data = data
        self.statusCode = statusCode
        self.httpVersion = httpVersion
        self.headerFields = headerFields
    }

    /// Creates a response from text.
    ///
    /// - Parameters:
    ///   - string: The body text.
    ///   - encoding: How the text becomes bytes; UTF-8 by default. Characters the encoding
    ///     cannot represent are replaced lossily rather than dropping the body.
    ///   - statusCode: The status; 200 by default.
    ///   - httpVersion: The reported HTTP version; `"HTTP/1.1"` by default.
    ///   - headerFields: Response headers; `nil` by default.
    public init(
        string: String,
        encoding: String.Encoding = .utf8,
        statusCode: Int = 200,
        httpVersion: String? = "HTTP/1.1",
        headerFields: [String: String]? = nil
    ) {
        let data = string.data(using: encoding, allowLossyConversion: true) ?? Data(string.utf8)
        self.init(data: data, statusCode: statusCode, httpVersion: httpVersion, headerFields: headerFields)
    }

    /// The response as the transport returns it for `request`.
    ///
    /// - Throws: ``TransportError`` with code ``TransportError/Code/badResponse`` when the
    ///   status code is not a valid HTTP status or the request has no URL.
    public func makeResponse(for request: URLRequest) throws -> (Data, HTTPURLResponse) {
        guard let url = request.url,
            (100...999).contains(statusCode),
            let response = HTTPURLResponse(
                url: url, statusCode: statusCode, httpVersion: httpVersion, headerFields: headerFields)
        else {
            throw TransportError(
                .badResponse, url: request.url,
                message: "Canned response with status \(statusCode) cannot be built for this request.")
        }
        return (data, response)
    }
}
