import Foundation

/// The text of a parameter or form value, as Y-Network writes it (`description`), except where
/// writing it would trap: a `Date` that is not finite (made from NaN or infinity) traps in
/// Foundation's `description`; it is written as its interval (`nan`, `inf`) instead.
enum ValueText {
    static func of(_ value: Any) -> String {
        if let date = value as? Date, !date.timeIntervalSinceReferenceDate.isFinite {
            return "\(date.timeIntervalSinceReferenceDate)"
        }
        return String(describing: value)
    }
}
