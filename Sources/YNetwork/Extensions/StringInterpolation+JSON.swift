import Foundation

extension String.StringInterpolation {
    /// Appends `json` pretty-printed, for debugging: `"\(json: data)"`.
    ///
    /// Appends `Invalid JSON data` when `json` does not parse (a JSON fragment such as `"text"`
    /// or `42` does). The whole value is printed: do not log bodies that may hold secrets.
    public mutating func appendInterpolation(json: Data) {
        guard let text = PrettyJSON.text(json) else {
            appendLiteral("Invalid JSON data")
            return
        }
        appendLiteral(text)
    }
}

/// Pretty-printed JSON text.
enum PrettyJSON {
    /// `data` parsed and pretty-printed, or `nil` when it is not JSON.
    static func text(_ data: Data) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) else {
            return nil
        }
        return text(object: object)
    }

    /// `object` (from `JSONSerialization`) pretty-printed with sorted keys.
    static func text(object: Any) -> String? {
        guard
            let pretty = try? JSONSerialization.data(
                withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .fragmentsAllowed])
        else { return nil }
        return String(decoding: pretty, as: UTF8.self)
    }
}
