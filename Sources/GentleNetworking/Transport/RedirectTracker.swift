import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The redirect rules every transport shares: a hop limit, loop detection, and credentials that
/// never cross to another origin.
package struct RedirectTracker: Sendable {
    let originalURL: URL?
    /// The original request's method (`nil`: GET): a loop is the same method at the same URL
    /// again (a POST answered by a 303 to its own URL is a GET there, not a loop).
    let originalMethod: String?
    let maxRedirects: Int
    /// The method and URL of each hop so far (at most `maxRedirects`, so a linear search is
    /// fine); built only once a redirect happens, as most requests have none.
    private var visited: [String] = []
    private(set) var count = 0
    /// The headers dropped on a hop to another origin.
    let credentialHeaders: [String]
    /// A check of each hop's target before it is followed (a pinned host reached over plain
    /// `http`: ``PinningTransport`` on Apple platforms); the error it answers ends the redirect.
    /// `nil` (the default) for none.
    var hopCheck: (@Sendable (URL) -> TransportError?)?
    /// Where the ``RequestWitness`` told when a hop drops a credential comes from: read at
    /// `init` (`.captured`), or from the request's task when a hop drops one (`.task`), so a
    /// request without a redirect reads nothing.
    private let witness: WitnessSource

    private enum WitnessSource {
        case task
        case captured(RequestWitness?)
    }

    /// The statuses that are followed when they carry a `Location`.
    static let redirectStatuses: Set<Int> = [301, 302, 303, 307, 308]

    /// Creates a tracker; `credentialHeaders` defaults to the headers in force for the calling
    /// task (``Origin/credentialHeaders`` and any set by ``Origin/withCredentialHeaders(_:isolation:operation:)``).
    /// With `capturingWitness` the task's ``RequestWitness`` for `originalURL` is read here: for
    /// URLSession, which follows a redirect on its delegate queue, where the task's locals are not
    /// in force. Otherwise the tracker must be used in the request's task.
    init(
        originalURL: URL?, originalMethod: String?, maxRedirects: Int,
        credentialHeaders: [String] = Origin.credentialHeadersInForce, capturingWitness: Bool = false
    ) {
        self.originalURL = originalURL
        self.originalMethod = originalMethod
        self.maxRedirects = max(0, maxRedirects)
        self.credentialHeaders = credentialHeaders
        self.witness = capturingWitness ? .captured(RequestWitness.current(for: originalURL)) : .task
    }

    /// Records a hop to `target` with `method`.
    ///
    /// - Throws: ``TransportError`` with code ``TransportError/Code/tooManyRedirects`` for a
    ///   loop (the same method at a URL already requested) or for more than `maxRedirects` hops;
    ///   the error ``hopCheck`` answers for `target`.
    mutating func follow(to target: URL?, method: String?) throws(TransportError) {
        if let target, let hopCheck, let refusal = hopCheck(target) { throw refusal }
        count += 1
        let key = (method ?? "GET").uppercased() + " " + (target?.absoluteString ?? "")
        let original = (originalMethod ?? "GET").uppercased() + " " + (originalURL?.absoluteString ?? "")
        if visited.contains(key) || key == original {
            throw TransportError(
                .tooManyRedirects, url: originalURL, message: "Redirect loop detected at \(Redactor.url(target)).")
        }
        if count > maxRedirects {
            throw TransportError(.tooManyRedirects, url: originalURL, message: "More than \(maxRedirects) redirects.")
        }
        visited.append(key)
    }

    /// Replaces the hop recorded last with one to `target` with `method` (a redirect whose next
    /// request was changed after it was recorded, by a ``URLSessionTransport/RedirectApprover``):
    /// counted once, and the target it replaces is no longer taken for one already requested.
    ///
    /// - Throws: as ``follow(to:method:)``.
    mutating func replaceLastHop(to target: URL?, method: String?) throws(TransportError) {
        if !visited.isEmpty, count > 0 {
            visited.removeLast()
            count -= 1
        }
        try follow(to: target, method: method)
    }

    /// Whether following to `target` drops a credential `request` carries (another origin than
    /// the original request's, and `request` has one of the credential headers).
    func stripsCredentials(from request: URLRequest, to target: URL?) -> Bool {
        guard !Origin.isSameOrigin(originalURL, target) else { return false }
        return !credentialFields(of: request).isEmpty
    }

    /// The names of `request`'s fields that carry credentials (``Origin/isCredentialHeader(_:listed:)``
    /// with ``credentialHeaders``).
    private func credentialFields(of request: URLRequest) -> [String] {
        guard let fields = request.allHTTPHeaderFields, !fields.isEmpty else { return [] }
        return fields.keys.filter { Origin.isCredentialHeader($0, listed: credentialHeaders) }
    }

    /// Records the hop from `request` to `next` (after `status`) for the observed request, if
    /// any (see ``ExchangeRecorder``).
    func noteHop(
        status: Int, from request: URLRequest, to next: URLRequest,
        recorder: ExchangeRecorder? = ExchangeRecorder.current
    ) {
        guard let recorder else { return }
        recorder.record(
            .redirected(
                statusCode: status, to: Redactor.url(next.url),
                credentialsStripped: stripsCredentials(from: request, to: next.url)))
    }

    /// `request` with the credential headers removed when `target` is another origin than the
    /// original request's; the request's ``RequestWitness`` is told when one was there.
    func strippingCredentials(_ request: URLRequest, for target: URL?) -> URLRequest {
        guard !Origin.isSameOrigin(originalURL, target) else { return request }
        var stripped = request
        var dropped = false
        for header in credentialFields(of: request) {
            stripped.setValue(nil, forHTTPHeaderField: header)
            dropped = true
        }
        if dropped {
            switch witness {
            case .task: RequestWitness.current(for: originalURL)?.noteDroppedCredentials()
            case .captured(let captured): captured?.noteDroppedCredentials()
            }
        }
        return stripped
    }

    /// Where `response`'s `Location` points, resolved against its URL, when that is an `http` or
    /// `https` URL and not a step down from `https` to `http`; `nil` for no `Location`, any other
    /// scheme (`file:`, `ftp:`, `data:`...), or an `http` target of a response that came over
    /// `https`.
    ///
    /// Every transport decides with it, so a redirect that leaves HTTP, or leaves TLS, is never
    /// followed and its 3xx is the response. (corelibs' URLSession would turn `file:///etc/passwd`
    /// into a request for `/etc/passwd` on the same server; an `https` → `http` hop would re-send
    /// a 307's body in clear text and bring an answer that no TLS check or pin protects.) As every
    /// hop out of `https` is refused, a chain that reached `https` stays on it.
    package static func httpTarget(of response: HTTPURLResponse, for request: URLRequest?) -> URL? {
        let base = response.url ?? request?.url
        guard let location = response.value(forHTTPHeaderField: "Location"),
            let target = URL(string: location, relativeTo: base)?.absoluteURL,
            isFollowable(from: base, to: target)
        else {
            return nil
        }
        return target
    }

    /// Whether a redirect from a response at `from` to `target` may be followed at all: `target`
    /// is a URL the transports send (`http` or `https`, with a host and a port in range: see
    /// ``RequestValidator/validateURL(_:)``), and not `http` after `https`. A `Location` of
    /// `https:///x` or `http://h:0/` is not followed on any transport: its 3xx is the response
    /// (libcurl's path refused the next hop as the caller's `.invalidRequest`, corelibs' kept
    /// the 3xx).
    package static func isFollowable(from: URL?, to target: URL) -> Bool {
        guard (try? RequestValidator.validateURL(target)) != nil else { return false }
        return target.scheme?.lowercased() == "https" || from?.scheme?.lowercased() != "https"
    }

    /// Whether a redirect to `target` must not be followed because the session adds a credential
    /// header to every request itself (`configuration.httpAdditionalHeaders`: `Authorization`,
    /// `Cookie`, an API key), which it would put on the next hop again, where no rule of ours can
    /// remove it: `target` is of another origin than `originalURL`, and not the same host moved
    /// to `https` (see ``isUpgrade(from:to:)``). Such a redirect's 3xx is the response. Apple
    /// platforms (and JustNetworking's requester there): on Linux the routed session is made
    /// without those headers, and the transport adds them per request.
    /// `listed` are the credential header names in force (an auth service's own header field
    /// added with ``Origin/withCredentialHeaders(_:isolation:operation:)``, as a tracker holds
    /// them); any name that says it holds a credential counts too.
    package static func sessionCredentialWouldCross(
        to target: URL, from originalURL: URL?, configuration: URLSessionConfiguration,
        listed: [String] = Origin.credentialHeaders
    ) -> Bool {
        guard !Origin.isSameOrigin(originalURL, target), !isUpgrade(from: originalURL, to: target) else { return false }
        let names = configuration.httpAdditionalHeaders?.keys.compactMap { $0.base as? String } ?? []
        return names.contains { Origin.isCredentialHeader($0, listed: listed) }
    }

    /// Whether `target` is `from` moved to `https` on the same host (`http://api/v1` →
    /// `https://api/v1`, default ports): the credentials stay with the same server, now protected.
    package static func isUpgrade(from: URL?, to target: URL) -> Bool {
        guard let from, from.scheme?.lowercased() == "http", target.scheme?.lowercased() == "https",
            let host = from.host?.lowercased(), host == target.host?.lowercased()
        else { return false }
        return (from.port ?? 80) == 80 && (target.port ?? 443) == 443
    }

    /// The request to send after `response` redirected `request`, or `nil` when `response` is
    /// not a followable redirect (no `Location`, or a status such as 304).
    ///
    /// 301 and 302 turn POST into GET, 303 turns everything but HEAD into GET (dropping the
    /// body), and 307 and 308 keep the method and body (RFC 9110 §15.4).
    func nextRequest(after response: HTTPURLResponse, for request: URLRequest) -> URLRequest? {
        guard Self.redirectStatuses.contains(response.statusCode),
            let target = Self.httpTarget(of: response, for: request)
        else {
            return nil
        }
        var next = request
        next.url = target
        let method = (request.httpMethod ?? "GET").uppercased()
        let becomesGet =
            (response.statusCode == 303 && method != "HEAD")
            || ([301, 302].contains(response.statusCode) && method == "POST")
        if becomesGet {
            next.httpMethod = "GET"
            next.httpBody = nil
            next.httpBodyStream = nil
            for header in ["Content-Type", "Content-Length", "Content-Encoding", "Transfer-Encoding"] {
                next.setValue(nil, forHTTPHeaderField: header)
            }
        }
        return strippingCredentials(next, for: target)
    }
}
