import Foundation

extension String {
    /// Whether a match of the regular expression `pattern` occurs anywhere in the string
    /// (anchor it with `^` and `$` to match the whole string).
    ///
    /// - Returns: `false` when there is no match, and also when `pattern` is not a valid
    ///   regular expression (it never throws or traps).
    public func matches(regex pattern: String) -> Bool {
        guard let expression = try? NSRegularExpression(pattern: pattern) else { return false }
        return expression.firstMatch(in: self, range: NSRange(startIndex..., in: self)) != nil
    }
}
