import Foundation

/// The text of a parameter or form value, as Y-Network writes it (`description`), except where
/// writing it would trap: a `Date` that is not finite (made from NaN or infinity) traps in
/// Foundation's `description`, alone or inside an array, a dictionary, a set, an optional, a
/// tuple, or a struct or enum without a description of its own. Such a date is written as its
/// interval (`nan`, `inf`), and what holds it as Swift prints it (`["a": nan]`,
/// `Event(at: inf)`, `at(nan, 1)`); any other value is exactly its `description`.
enum ValueText {
    static func of(_ value: Any) -> String {
        // The usual scalars need no reflection.
        switch value {
        case let number as Int: return String(number)
        case let number as Double: return number.description
        case let text as Substring: return String(text)
        default: return text(of: value, nested: false, always: false)
        }
    }

    /// The text Swift's printing gives `value` (`nested`: as an element of what holds it, its
    /// debug text), written by reflection wherever a date that cannot be written is reached, or
    /// everywhere with `always` (so tests compare the two on values without such a date).
    static func text(of value: Any, nested: Bool, always: Bool) -> String {
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle != .optional, let date = value as? Date {
            if !date.timeIntervalSinceReferenceDate.isFinite { return "\(date.timeIntervalSinceReferenceDate)" }
            return nested ? String(reflecting: date) : String(describing: date)
        }
        guard always || holdsUnwritableDate(value), isReflected(value, mirror) else {
            return nested ? String(reflecting: value) : String(describing: value)
        }
        func element(_ child: Any) -> String { text(of: child, nested: true, always: always) }
        func list(_ children: Mirror.Children) -> String {
            children.map { child in
                guard let label = child.label, !label.hasPrefix(".") else { return element(child.value) }
                return label + ": " + element(child.value)
            }.joined(separator: ", ")
        }
        let typeName = nested ? String(reflecting: type(of: value)) : String(describing: type(of: value))
        switch mirror.displayStyle {
        case .optional:
            guard let wrapped = mirror.children.first else { return "nil" }
            return "Optional(" + element(wrapped.value) + ")"
        case .collection:
            return "[" + mirror.children.map { element($0.value) }.joined(separator: ", ") + "]"
        case .set:
            let elements = "[" + mirror.children.map { element($0.value) }.joined(separator: ", ") + "]"
            return nested ? "Set(" + elements + ")" : elements
        case .dictionary:
            let pairs = mirror.children.map { child -> String in
                let pair = Array(Mirror(reflecting: child.value).children)
                guard pair.count == 2 else { return element(child.value) }
                return element(pair[0].value) + ": " + element(pair[1].value)
            }
            return pairs.isEmpty ? "[:]" : "[" + pairs.joined(separator: ", ") + "]"
        case .tuple:
            return "(" + list(mirror.children) + ")"
        case .enum:
            // A case with a payload: `name(payload)`, a tuple's elements inside the one pair of
            // parentheses, as Swift prints it; nested, qualified by the type.
            guard let payload = mirror.children.first, let name = payload.label else {
                return nested ? String(reflecting: value) : String(describing: value)
            }
            let prefix = nested ? typeName + "." + name : name
            let inner = Mirror(reflecting: payload.value)
            if inner.displayStyle == .tuple { return prefix + "(" + list(inner.children) + ")" }
            return prefix + "(" + element(payload.value) + ")"
        default:
            return typeName + "(" + list(mirror.children) + ")"
        }
    }

    /// Whether Swift prints `value` by reflecting on it: the stdlib's collections, optionals and
    /// tuples, and structs and enums without a description of their own. A class is printed by
    /// its name alone, and a type with a description prints what it chooses.
    private static func isReflected(_ value: Any, _ mirror: Mirror) -> Bool {
        switch mirror.displayStyle {
        case .optional, .collection, .set, .dictionary, .tuple:
            return true
        case .struct, .enum:
            return !(value is any CustomStringConvertible || value is any CustomDebugStringConvertible)
        default:
            return false
        }
    }

    /// Whether `value` holds a date that is not finite where Swift's printing would reach it.
    private static func holdsUnwritableDate(_ value: Any) -> Bool {
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle != .optional, let date = value as? Date {
            return !date.timeIntervalSinceReferenceDate.isFinite
        }
        guard isReflected(value, mirror) else { return false }
        return mirror.children.contains { holdsUnwritableDate($0.value) }
    }
}
