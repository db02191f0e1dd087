import Foundation

/// The HTTP method of a ``NetworkRequest``; `.GET` by default.
public enum HttpMethod: String, Sendable, CaseIterable {
    /// `GET`
    case GET
    /// `POST`
    case POST
    /// `PUT`
    case PUT
    /// `PATCH`
    case PATCH
    /// `DELETE`
    case DELETE
}
