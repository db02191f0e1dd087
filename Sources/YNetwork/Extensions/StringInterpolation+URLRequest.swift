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
    /// Unlike Y-Network, credentials are never printed, by the rules of the library's log records
    /// (`Redactor`): the values of `Authorization` (its scheme is kept: `Bearer <redacted>`),
    /// `Proxy-Authorization`, `Cookie`, and of any header, query item (`&`- or `;`-separated),
    /// path parameter (`;jsessionid=…`) or JSON key whose name mentions a token, password,
    /// secret, API key, session, signature, credential or cookie become `<redacted>`; a header
    /// whose value is a URL is shown as the request's URL is; those credential values are
    /// scrubbed wherever else they appear (another header, a JSON field); the URL's user info
    /// is left out, and a fragment written as a form is redacted as the query is. A JSON body above 64 KiB is not parsed and is shown by its
    /// length only.
    public mutating func appendInterpolation(request: URLRequest) {
        appendLiteral(RequestDescription.text(request))
    }
}

/// The redacted one-line summary behind `"\(request:)"`.
enum RequestDescription {
    /// The largest JSON body that is parsed and shown.
    static let maxShownBody = 64 * 1024

    static func text(_ request: URLRequest) -> String {
        // The credentials the request carries, scrubbed wherever they appear again (a header of
        // another name, a JSON field), as the log records scrub them.
        let secrets = Redactor.credentialValues(of: request)
        var items: [String] = []
        if let method = request.httpMethod { items.append(method) }
        if let url = request.url {
            var shown = Redactor.url(url)
            // The log records leave the fragment out; shown here, as a form it is redacted as the
            // query is (`#id_token=…&state=…` of an OAuth callback).
            if let fragment = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedFragment,
                !fragment.isEmpty
            {
                // A fragment with no `=` (nor an encoded one) comes back unchanged.
                shown += "#" + Redactor.redactForm(fragment)
            }
            items.append(Redactor.scrub(shown, secrets: secrets))
        }
        let headers = Redactor.headers(request.allHTTPHeaderFields ?? [:], scrubbing: secrets)
            .sorted { $0.key.lowercased() < $1.key.lowercased() }
        if !headers.isEmpty {
            let pairs = headers.map { "\"\($0.key)\": \"\($0.value)\"" }
            items.append("Headers: [" + pairs.joined(separator: ", ") + "]")
        }
        if let body = request.httpBody, !body.isEmpty {
            if body.count <= maxShownBody,
                let object = try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed]),
                let text = PrettyJSON.text(object: redacted(json: object))
            {
                items.append(Redactor.scrub(text, secrets: secrets))
            } else {
                items.append("Content-Length: \(body.count) bytes")
            }
        }
        return items.joined(separator: "\t")
    }

    static func redacted(json: Any) -> Any {
        Redactor.redactJSON(json)
    }
}
