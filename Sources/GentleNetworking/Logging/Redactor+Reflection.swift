import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension Redactor {
    /// The most bytes of a response body that `dump` and `po` show of an error's response
    /// (redacted as log records redact bodies).
    static let reflectedBodyExcerptLimit = 256

    /// What a mirror shows for an error beneath another (`underlyingError`, a wrapped cause):
    /// - this library's errors, which have mirrors of their own, and `DecodingError`s (the
    ///   service keeps them sanitized: case and coding path), as they are;
    /// - a `URLError` as its code only, and any other error whose `NSError` form carries user
    ///   info (an `NSError`, `CocoaError`: the failing URL as it was sent, a file's path) as
    ///   its type, domain and code;
    /// - an `EncodingError` as its case and the type of the value that did not encode (the
    ///   value may be a password the caller was sending);
    /// - any other error as it is (the caller's own); `nil` as `nil`.
    package static func reflected(_ error: (any Error)?) -> Any {
        guard let error else { return String?.none as Any }
        // This library's own errors are `LocalizedError`s, so their `NSError` form has user
        // info (the localized description): checked before that rule, they show as they are.
        if error is any CustomReflectable || error is DecodingError || error is any LibraryError { return error }
        if let urlError = error as? URLError {
            return "URLError(code: \(urlError.code.rawValue))"
        }
        if let encodingError = error as? EncodingError {
            if case .invalidValue(let value, _) = encodingError {
                return "EncodingError.invalidValue(\(type(of: value)))"
            }
            return "EncodingError"
        }
        let nsError = error as NSError
        if type(of: error) is NSError.Type || !nsError.userInfo.isEmpty {
            return
                "\(type(of: error))(domain: \(PrintableText.escaping(nsError.domain)), code: \(nsError.code))"
        }
        return error
    }

    /// `error` as text for a message that may be shown or logged (a failed refresh, an event
    /// stream that could not connect): what a mirror shows of it (``reflected(_:)``: a
    /// `URLError` by its code, an `NSError` with user info by its domain and code, so a failing
    /// URL's `refresh_token=…` is not copied), secrets in any URL left in it redacted, on one
    /// printable line.
    package static func describing(_ error: any Error) -> String {
        PrintableText.escaping(redactingURLs(in: String(describing: reflected(error))))
    }

    /// An optional URL as a mirror shows it: redacted (``url(_:)``), or `nil`.
    package static func reflected(_ url: URL?) -> Any {
        guard let url else { return String?.none as Any }
        return self.url(url)
    }

    /// Response headers as a mirror shows them: credentials replaced as log records show them,
    /// and any of `secrets` wherever it appears.
    package static func reflected(headers: [String: String], scrubbing secrets: [String] = []) -> [String: String] {
        self.headers(headers, scrubbing: secrets)
    }

    /// A response body as a mirror shows it: its size and its start, redacted as log records
    /// redact bodies (at most ``reflectedBodyExcerptLimit`` bytes of it), any of `secrets`
    /// replaced wherever it appears.
    package static func reflected(body: Data, scrubbing secrets: [String] = []) -> String {
        "\(body.count) bytes: \(bodyExcerpt(body, limit: reflectedBodyExcerptLimit, scrubbing: secrets))"
    }
}

/// This library's error types, which keep no secret in their text and show as they are beneath
/// another error (`Redactor.reflected(_:)`).
package protocol LibraryError: Error {}

extension NetworkError: LibraryError {}
extension HTTPStatusFailure: LibraryError {}
extension TransportError: LibraryError {}
extension ReauthError: LibraryError {}
extension CredentialStoreError: LibraryError {}
extension StreamingError: LibraryError {}
extension EventSourceFailure: LibraryError {}
