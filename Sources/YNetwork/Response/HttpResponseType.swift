import Foundation

/// A response body as JSON where it is JSON: a dictionary, an array, or the raw bytes otherwise.
///
/// Sendable for what this library makes of a body (``Foundation/Data/toHttpResponse()``): the
/// payloads come from `JSONSerialization`, values and immutable Foundation objects, never
/// mutated. The cases are public, with Y-Network's `Any` payloads, so a value built by hand can
/// hold anything: one holding a mutable object of yours must not cross tasks, and the compiler
/// cannot tell you so.
public enum HttpResponseType: @unchecked Sendable {
    // @unchecked: see above. The `Any` payloads are Y-Network's API; checked Sendable payloads
    // would break code written for it.

    /// An empty body.
    case none
    /// A JSON object.
    case jsonDictionary([String: Any])
    /// A JSON array.
    case jsonArray([Any])
    /// Anything else, as it arrived.
    case raw(Data)
}

extension Data {
    /// The body read as ``HttpResponseType``: `.none` when empty, a JSON object or array when it
    /// parses as one, and `.raw` otherwise (including JSON scalars).
    public func toHttpResponse() -> HttpResponseType {
        if isEmpty { return .none }
        switch try? JSONSerialization.jsonObject(with: self, options: [.fragmentsAllowed]) {
        case let dictionary as [String: Any]: return .jsonDictionary(dictionary)
        case let array as [Any]: return .jsonArray(array)
        default: return .raw(self)
        }
    }
}
