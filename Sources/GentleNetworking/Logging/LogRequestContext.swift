import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What the log records of one request share: the request as sent (with at most
/// ``Redactor/maxScannedBodyBytes`` of its body) and, worked out once, the first time a record is
/// read, the request's credential values and its redacted URL.
///
/// It holds no logger: a logger that keeps records keeps these, and nothing here keeps the logger,
/// so no cycle forms.
final class LogRequestContext: Sendable {
    /// The request as the service sent it, credentials included (never exposed as is); a body
    /// larger than ``Redactor/maxScannedBodyBytes`` is replaced by its start.
    let request: URLRequest
    /// The size of the request's body, when it has one.
    let bodySize: Int?
    /// Headers whose values are secrets besides the usual ones (the auth service's own header):
    /// redacted by name in the records, and their values scrubbed wherever they recur.
    let alsoHeaders: [String]
    private let cache = Locked(Cache())

    private struct Cache {
        var secrets: [String]?
        var url: String?
        /// Credential values sent after the request was made (``addCredential(_:header:)``).
        var added: [String] = []
        /// Bumped by each addition: a value worked out before it (outside the lock) is not kept.
        var generation = 0
    }

    init(request: URLRequest, alsoHeaders: [String]) {
        if let body = request.httpBody, body.count > Redactor.maxScannedBodyBytes {
            // A large upload is not kept alive by the records of a logger that stores them.
            var kept = request
            kept.httpBody = Redactor.excerptSource(of: body)
            self.request = kept
            self.bodySize = body.count
        } else {
            self.request = request
            self.bodySize = request.httpBody?.count
        }
        self.alsoHeaders = alsoHeaders
    }

    /// The request method, such as `GET`.
    var method: String { request.httpMethod ?? "GET" }

    /// The request's credential values (``Redactor/credentialValues(of:alsoHeaders:)``), longest
    /// first: scrubbed from whatever a record of the request quotes.
    var secrets: [String] {
        let (cached, added, generation) = cache.withLock { ($0.secrets, $0.added, $0.generation) }
        if let cached { return cached }
        var secrets = Redactor.credentialValues(of: request, alsoHeaders: alsoHeaders)
        if !added.isEmpty {
            secrets = Array(Set(secrets + added)).sorted { $0.count > $1.count }
        }
        // Kept only if no credential was added meanwhile (it would never be scrubbed then).
        cache.withLock { if $0.generation == generation { $0.secrets = secrets } }
        return secrets
    }

    /// Adds `value`, a credential sent under `header` after the request was made (a refreshed
    /// token on a retry), in the forms ``Redactor/credentialValues(of:alsoHeaders:)`` finds for
    /// the request's own: what records read from now on scrub it too.
    func addCredential(_ value: String, header: String) {
        var carrier = URLRequest(url: URL(fileURLWithPath: "/"))
        carrier.setValue(value, forHTTPHeaderField: header)
        let forms = Redactor.credentialValues(of: carrier, alsoHeaders: [header])
        guard !forms.isEmpty else { return }
        cache.withLock { cache in
            cache.added += forms
            cache.generation += 1
            cache.secrets = nil
            cache.url = nil
        }
    }

    /// The request's URL, redacted (``Redactor/url(_:)``) and scrubbed of its credential values.
    var url: String {
        let (cached, generation) = cache.withLock { ($0.url, $0.generation) }
        if let cached { return cached }
        let url = scrub(Redactor.url(request.url))
        cache.withLock { if $0.generation == generation { $0.url = url } }
        return url
    }

    /// Runs `body` under the context's lock, which also guards what the request's records cache
    /// (one lock per request rather than one per record). `body` must not call back into the
    /// context.
    func locked<Result>(_ body: () -> Result) -> Result {
        cache.withLock { _ in body() }
    }

    /// `text` with the request's credential values replaced.
    func scrub(_ text: String) -> String {
        Redactor.scrub(text, secrets: secrets)
    }
}
