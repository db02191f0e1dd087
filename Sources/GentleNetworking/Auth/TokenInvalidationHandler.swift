/// Told when the server rejects the caller's credentials, so the app can sign out, clear the
/// stored token or show a login screen.
///
/// ``HTTPNetworkService`` awaits ``handleInvalidToken()`` on every 401 response (for an
/// endpoint with or without `requiresAuth`; after ``ReauthTransport`` gave up, when one is in
/// the stack, unless its refresh failed for a transient reason: ``ReauthError/isTransient``),
/// then throws ``NetworkError/httpStatusError(_:)`` with `.unauthorized`. It is
/// called once per failed call, never for other statuses or transport failures. The handler
/// runs on the calling task: a slow one delays the throw, and cancelling the call does not
/// cancel a handler that already started. A 401 from another origin than the request's (after a
/// redirect there, which carried no credential) says nothing about the token and calls nothing.
public protocol TokenInvalidationHandler: Sendable {
    /// Called after a 401, before the call throws.
    func handleInvalidToken() async
}
