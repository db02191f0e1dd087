import Foundation

/// Removes credentials from what is logged or quoted in errors: header values, query values
/// and JSON or form fields whose names say they hold a secret.
enum Redactor {
    static let placeholder = "<redacted>"

    private static let sensitiveHeaders: Set<String> = [
        "authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "api-key",
        "x-auth-token", "x-access-token", "x-csrf-token", "x-amz-security-token",
    ]
    private static let sensitiveNameFragments = [
        "token", "password", "passwd", "secret", "apikey", "api_key", "api-key", "authorization",
        "credential", "session", "signature",
    ]

    /// Whether a field, query item or JSON key named `name` holds a secret.
    static func isSensitiveName(_ name: String) -> Bool {
        let lowered = name.lowercased()
        return sensitiveNameFragments.contains { lowered.contains($0) }
    }

    /// The header value to log: the auth scheme is kept (`Bearer <redacted>`), the secret is not.
    static func headerValue(name: String, value: String) -> String {
        let lowered = name.lowercased()
        guard sensitiveHeaders.contains(lowered) || isSensitiveName(lowered) else { return value }
        if lowered.hasSuffix("authorization"), let space = value.firstIndex(of: " ") {
            return String(value[..<space]) + " " + placeholder
        }
        return placeholder
    }

    /// Headers with every credential value replaced.
    static func headers(_ headers: [String: String]) -> [String: String] {
        var result: [String: String] = [:]
        for (name, value) in headers {
            result[name] = headerValue(name: name, value: value)
        }
        return result
    }

    /// The URL as text, with user info removed and sensitive query values replaced.
    static func url(_ url: URL?) -> String {
        guard let url else { return "<no URL>" }
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else {
            return "<unparseable URL>"
        }
        if components.user != nil || components.password != nil {
            components.user = nil
            components.password = nil
        }
        // The placeholder is not valid in a URL, so the query is appended as text rather than
        // set on the components (which would trap).
        let query = components.percentEncodedQuery
        components.percentEncodedQuery = nil
        components.fragment = nil
        let base = components.string ?? "<unparseable URL>"
        guard let query, !query.isEmpty else { return base }
        return base + "?" + redactForm(query)
    }

    /// The start of a body as text, at most `limit` bytes, with JSON and form secrets replaced.
    static func bodyExcerpt(_ data: Data, limit: Int) -> String {
        if data.isEmpty { return "<empty>" }
        let text: String
        if let json = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]),
            let redacted = try? JSONSerialization.data(
                withJSONObject: redactJSON(json), options: [.sortedKeys, .fragmentsAllowed]),
            let string = String(data: redacted, encoding: .utf8)
        {
            text = string
        } else if let string = String(data: data, encoding: .utf8) {
            text = string.contains("=") && !string.contains(" ") ? redactForm(string) : string
        } else {
            return "<\(data.count) bytes of binary data>"
        }
        let utf8 = Array(text.utf8)
        if utf8.count <= limit { return text }
        return String(decoding: utf8.prefix(limit), as: UTF8.self) + "… (\(data.count) bytes)"
    }

    static func redactJSON(_ value: Any) -> Any {
        if let dictionary = value as? [String: Any] {
            var result: [String: Any] = [:]
            for (key, inner) in dictionary {
                result[key] = isSensitiveName(key) ? placeholder : redactJSON(inner)
            }
            return result
        }
        if let array = value as? [Any] {
            return array.map(redactJSON)
        }
        return value
    }

    /// Redacts `name=value` pairs in a form or query string.
    static func redactForm(_ form: String) -> String {
        form.split(separator: "&", omittingEmptySubsequences: false).map { pair -> String in
            guard let equals = pair.firstIndex(of: "=") else { return String(pair) }
            let name = String(pair[..<equals])
            let decodedName = name.removingPercentEncoding ?? name
            return isSensitiveName(decodedName) ? name + "=" + placeholder : String(pair)
        }.joined(separator: "&")
    }
}
