import Foundation

/// A response body as JSON where it is JSON: a dictionary, an array, or the raw bytes otherwise.
public enum HttpResponseType: @unchecked Sendable {
    // @unchecked: the payloads come from JSONSerialization and are never mutated after parsing;
    // they are value types or immutable Foundation objects.

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
