import Foundation
import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension String.StringInterpolation {
    /// Appends a one-line summary of `request`, for debugging: `"\(request: urlRequest)"`.
    ///
    /// Tab-separated, as in Y-Network: the method, the URL, `Headers: [...]` (sorted by name)
    /// when there are any, then the body pretty-printed when it is JSON, else
    /// `Content-Length: N bytes`.
    ///
    /// Unlike Y-Network, credentials are never printed: the values of `Authorization` (its
    /// scheme is kept: `Bearer <redacted>`), `Proxy-Authorization`, `Cookie`, `Set-Cookie`, and
    /// of any header, query item or JSON key whose name mentions a token, password, secret, API
    /// key, session, signature, credential or cookie become `<redacted>` (in the query, and in a
    /// fragment written as a form, `#access_token=…`), by the same rules as the library's log
    /// records; the URL's user info is left out. A JSON body above 64 KiB is not parsed and is
    /// shown by its length only.
    public mutating func appendInterpolation(request: URLRequest) {
        appendLiteral(RequestDescription.text(request))
    }
}

/// The redacted one-line summary behind `"\(request:)"`.
enum RequestDescription {
    static let placeholder = "<redacted>"
    /// The largest JSON body that is parsed and shown.
    static let maxShownBody = 64 * 1024

    static func text(_ request: URLRequest) -> String {
        var items: [String] = []
        if let method = request.httpMethod { items.append(method) }
        if let url = request.url { items.append(redacted(url)) }
        let headers = (request.allHTTPHeaderFields ?? [:]).sorted { $0.key.lowercased() < $1.key.lowercased() }
        if !headers.isEmpty {
            let pairs = headers.map { "\"\($0.key)\": \"\(redacted(header: $0.key, value: $0.value))\"" }
            items.append("Headers: [" + pairs.joined(separator: ", ") + "]")
        }
        if let body = request.httpBody, !body.isEmpty {
            if body.count <= maxShownBody,
                let object = try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed]),
                let text = PrettyJSON.text(object: redacted(json: object))
            {
                items.append(text)
            } else {
                items.append("Content-Length: \(body.count) bytes")
            }
        }
        return items.joined(separator: "\t")
    }

    /// Whether a header, query item or JSON key named `name` holds a credential: by the rules of
    /// the library's log records (`Redactor`), so this text never shows what a record hides.
    static func isSensitive(_ name: String) -> Bool {
        Redactor.isSensitiveName(name) || Redactor.sensitiveHeaders.contains(name.lowercased())
    }

    static func redacted(header name: String, value: String) -> String {
        Redactor.headerValue(name: name, value: value)
    }

    static func redacted(_ url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            return placeholder
        }
        // The user info goes whole: a user name can be the secret (`https://ghp_TOKEN@host`).
        if components.user != nil || components.password != nil {
            components.user = nil
            components.password = nil
        }
        if let items = components.queryItems {
            components.queryItems = items.map { item in
                isSensitive(item.name) && item.value != nil ? URLQueryItem(name: item.name, value: placeholder) : item
            }
        }
        // A fragment in form syntax is redacted as the query is (`#access_token=…` of an
        // OAuth implicit-flow callback).
        if let fragment = components.fragment, fragment.contains("=") {
            components.fragment = fragment.split(separator: "&", omittingEmptySubsequences: false).map { pair in
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard parts.count == 2, isSensitive(String(parts[0])) else { return String(pair) }
                return parts[0] + "=" + placeholder
            }.joined(separator: "&")
        }
        return components.string ?? placeholder
    }

    static func redacted(json: Any) -> Any {
        Redactor.redactJSON(json)
    }
}
