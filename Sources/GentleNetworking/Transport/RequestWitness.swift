import Foundation

/// What the layers below a decorator learn about one logical request that the decorator needs
/// in order to judge a 401: whether a redirect dropped the request's credential, and whether
/// the credential was put there by the service's auth service. Bound by ``ReauthTransport``,
/// and by ``HTTPNetworkService`` for an endpoint that `requiresAuth` or when it has an
/// invalidation handler; read by ``RedirectTracker`` (both transports) and by them.
///
/// A 401 at the end of a redirect chain that left the request's origin says nothing about the
/// credential, even when the chain came back to the origin (`A → B → A`): the request that got
/// the 401 no longer carried the credential, which a redirect to another origin drops and a hop
/// back does not restore. Comparing the 401's URL with the request's does not see that.
///
/// Once set, ``droppedCredentials`` stays set for the binding (a retry inside it that did not go
/// through such a chain still counts: its 401 is returned as it is rather than refreshed, the
/// cautious side).
final class RequestWitness: Sendable {
    private let dropped = Locked(false)
    /// Whether the service added the request's credential with its auth service (an endpoint
    /// that `requiresAuth`): the credential is the service's, even one the app has replaced since
    /// (a new login while the request was in flight), and never the caller's own.
    let serviceAuthorized: Bool

    init(serviceAuthorized: Bool = false) {
        self.serviceAuthorized = serviceAuthorized
    }

    /// The witness bound for the current task's requests, if any.
    @TaskLocal static var current: RequestWitness?

    /// Whether a redirect dropped a credential since the witness was bound.
    var droppedCredentials: Bool { dropped.current }

    /// Records that a redirect dropped a credential.
    func noteDroppedCredentials() {
        dropped.withLock { $0 = true }
    }

    /// Runs `operation` with a witness bound: the one already in force (an outer decorator's or
    /// the service's), else `make()`. Returns the witness with the result.
    @inline(__always)
    static func watching<T>(
        isolation: isolated (any Actor)? = #isolation, make: () -> RequestWitness = { RequestWitness() },
        _ operation: () async throws -> T
    ) async rethrows -> (T, RequestWitness) {
        if let current { return (try await operation(), current) }
        let witness = make()
        let result = try await $current.withValue(witness) { try await operation() }
        return (result, witness)
    }
}
