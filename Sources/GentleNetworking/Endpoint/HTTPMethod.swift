/// The HTTP request method of an endpoint.
///
/// The raw value is the method token sent on the wire (`"GET"`, `"POST"`, …).
public enum HTTPMethod: String, Sendable, CaseIterable, Hashable, Codable {
    /// `GET`: reads a resource. Safe and idempotent.
    case get = "GET"
    /// `POST`: creates or acts. Not idempotent.
    case post = "POST"
    /// `PUT`: replaces a resource. Idempotent.
    case put = "PUT"
    /// `DELETE`: removes a resource. Idempotent.
    case delete = "DELETE"
    /// `PATCH`: partially updates a resource. Not idempotent.
    case patch = "PATCH"
    /// `HEAD`: like `GET` without a response body.
    case head = "HEAD"
    /// `OPTIONS`: asks which methods and headers a resource supports.
    case options = "OPTIONS"

    /// Whether repeating the request has the same effect as sending it once (RFC 9110 §9.2.2).
    public var isIdempotent: Bool {
        switch self {
        case .get, .put, .delete, .head, .options: true
        case .post, .patch: false
        }
    }
}
