import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension Redactor {
    /// The most bytes of a response body that `dump` and debuggers show of an error's response
    /// (redacted as log records redact bodies).
    static let reflectedBodyExcerptLimit = 256

    /// What a mirror shows for an error's `underlyingError`: a `URLError` or another `NSError`
    /// as its domain and code only, since their user info holds the failing URL as it was sent
    /// (a query token, user info); any other error as it is (this library's errors have mirrors
    /// of their own, and a caller's error is the caller's); `nil` as `nil`.
    package static func reflected(_ error: (any Error)?) -> Any {
        guard let error else { return String?.none as Any }
        if let urlError = error as? URLError {
            return "URLError(code: \(urlError.code.rawValue))"
        }
        if type(of: error) is NSError.Type {
            let nsError = error as NSError
            return "NSError(domain: \(PrintableText.escaping(nsError.domain)), code: \(nsError.code))"
        }
        return error
    }

    /// An optional URL as a mirror shows it: redacted (``url(_:)``), or `nil`.
    package static func reflected(_ url: URL?) -> Any {
        guard let url else { return String?.none as Any }
        return self.url(url)
    }

    /// Response headers as a mirror shows them: credentials replaced as log records show them.
    package static func reflected(headers: [String: String]) -> [String: String] {
        self.headers(headers)
    }

    /// A response body as a mirror shows it: its size and its start, redacted as log records
    /// redact bodies (at most ``reflectedBodyExcerptLimit`` bytes of it).
    package static func reflected(body: Data) -> String {
        "\(body.count) bytes: \(bodyExcerpt(body, limit: reflectedBodyExcerptLimit))"
    }
}
