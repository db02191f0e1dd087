import Foundation

/// What the layers below a decorator learn about one logical request that the decorator needs
/// in order to judge a 401: whether a redirect dropped the request's credential, and which
/// credential the service's auth service put on it. Bound by ``ReauthTransport``, and by
/// ``HTTPNetworkService`` for an endpoint that `requiresAuth` or when it has an invalidation
/// handler; told by ``RedirectTracker`` (both transports).
///
/// A 401 at the end of a redirect chain that left the request's origin says nothing about the
/// credential, even when the chain came back to the origin (`A → B → A`): the request that got
/// the 401 no longer carried the credential, which a redirect to another origin drops and a hop
/// back does not restore. Comparing the 401's URL with the request's does not see that.
///
/// A witness is for one request (its URL): a request made while it is bound (by a logger, in a
/// task started there) that is not that request neither tells it nor takes it over.
/// ``droppedCredentials`` describes the current attempt: ``RetryTransport`` clears it before
/// each retry, so a retry that reaches the origin directly is judged by its own 401, not by an
/// earlier attempt's chain.
package final class RequestWitness: Sendable {
    /// What the layers below told: one lock box per witness (a witness is made per request).
    private struct Told {
        var droppedCredentials = false
        var refreshedCredentials: [String] = []
    }
    private let told = Locked(Told())
    /// The URL of the request the witness is for.
    let url: URL?
    /// The header and value of the credential the service added with its auth service (an
    /// endpoint that `requiresAuth`): that credential is the service's, even when the app has
    /// replaced it since (a new login while the request was in flight). `nil` otherwise.
    let serviceCredential: (name: String, value: String)?

    init(url: URL?, serviceCredential: (name: String, value: String)? = nil) {
        self.url = url
        self.serviceCredential = serviceCredential
    }

    /// The witness bound for the current task's requests, if any.
    @TaskLocal static var current: RequestWitness?

    /// The witness in force when it is for a request to `url`.
    static func current(for url: URL?) -> RequestWitness? {
        guard let current, current.url == url else { return nil }
        return current
    }

    /// Whether a redirect dropped a credential since the witness was bound.
    package var droppedCredentials: Bool { told.current.droppedCredentials }

    /// Records that a redirect dropped a credential.
    func noteDroppedCredentials() {
        told.withLock { $0.droppedCredentials = true }
    }

    /// Credential header values the request was sent with after a refresh (``ReauthTransport``'s
    /// retry), newest last: scrubbed from the request's error texts as its own credential is.
    var refreshedCredentials: [String] { told.current.refreshedCredentials }

    /// Records that the request was sent again with `value` (a refreshed credential).
    func noteRefreshedCredential(_ value: String) {
        told.withLock { $0.refreshedCredentials.append(value) }
    }

    /// Forgets what an earlier attempt's redirects did: a new attempt of the same request starts.
    func noteNewAttempt() {
        told.withLock { $0.droppedCredentials = false }
    }

    /// Whether `value` in header `name` is the credential the service added.
    func isServiceCredential(_ value: String, in name: String) -> Bool {
        guard let serviceCredential else { return false }
        return serviceCredential.value == value && serviceCredential.name.equalsIgnoringASCIICase(name)
    }

    /// Runs `operation` (the exchange of `request`) with a witness bound: the one in force when
    /// it is for `request` (an outer decorator's or the service's), else `make()`. Returns the
    /// witness with the result.
    @inline(__always)
    package static func watching<T>(
        _ request: URLRequest, isolation: isolated (any Actor)? = #isolation,
        make: (URLRequest) -> RequestWitness = { RequestWitness(url: $0.url) },
        _ operation: () async throws -> T
    ) async rethrows -> (T, RequestWitness) {
        if let current = current(for: request.url) { return (try await operation(), current) }
        let witness = make(request)
        let result = try await $current.withValue(witness) { try await operation() }
        return (result, witness)
    }
}
