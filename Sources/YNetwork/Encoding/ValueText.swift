import Foundation

/// The text of a parameter or form value, as Y-Network writes it (`description`), except where
/// writing it would trap: a `Date` that is not finite (made from NaN or infinity) traps in
/// Foundation's `description`, alone or inside an array, a dictionary, a set, an optional, a
/// tuple, or a struct or enum without a description of its own. Such a date is written as its
/// interval (`nan`, `inf`), and what holds it as Swift would print it otherwise
/// (`["a": nan]`, `Event(at: inf)`); any other value is exactly its `description`.
enum ValueText {
    static func of(_ value: Any) -> String {
        text(of: value, nested: false)
    }

    /// `value`'s text: its `description` (`nested`: its `debugDescription`, as Swift prints
    /// what a collection holds) unless it holds a date that cannot be written.
    private static func text(of value: Any, nested: Bool) -> String {
        if let date = value as? Date, !date.timeIntervalSinceReferenceDate.isFinite {
            return "\(date.timeIntervalSinceReferenceDate)"
        }
        guard holdsUnwritableDate(value) else {
            return nested ? String(reflecting: value) : String(describing: value)
        }
        let mirror = Mirror(reflecting: value)
        let children = mirror.children.map { (label: $0.label, value: $0.value) }
        func list(_ open: String, _ close: String, labelled: Bool) -> String {
            let items = children.map { child in
                let text = text(of: child.value, nested: true)
                guard labelled, let label = child.label, !label.hasPrefix(".") else { return text }
                return label + ": " + text
            }
            return open + items.joined(separator: ", ") + close
        }
        switch mirror.displayStyle {
        case .optional:
            return children.first.map { "Optional(" + text(of: $0.value, nested: true) + ")" } ?? "nil"
        case .collection, .set:
            return list("[", "]", labelled: false)
        case .dictionary:
            let pairs = children.map { child -> String in
                let pair = Mirror(reflecting: child.value).children.map(\.value)
                guard pair.count == 2 else { return text(of: child.value, nested: true) }
                return text(of: pair[0], nested: true) + ": " + text(of: pair[1], nested: true)
            }
            return "[" + pairs.joined(separator: ", ") + "]"
        case .tuple:
            return list("(", ")", labelled: true)
        case .enum:
            // A case with a payload: `name(payload)`, as Swift prints it.
            guard let only = children.first, let name = only.label else { return String(describing: type(of: value)) }
            return name + "(" + text(of: only.value, nested: true) + ")"
        default:
            return String(describing: type(of: value)) + list("(", ")", labelled: true)
        }
    }

    /// Whether `value` holds a date that is not finite where Swift's printing would reach it:
    /// through the stdlib's collections, optionals and tuples, and structs and enums printed by
    /// reflection. A class is printed by its name alone, and a type with a description of its
    /// own prints what it chooses: neither is looked into.
    private static func holdsUnwritableDate(_ value: Any) -> Bool {
        if let date = value as? Date { return !date.timeIntervalSinceReferenceDate.isFinite }
        let mirror = Mirror(reflecting: value)
        switch mirror.displayStyle {
        case .optional, .collection, .set, .dictionary, .tuple:
            break
        case .struct, .enum:
            if value is any CustomStringConvertible || value is any CustomDebugStringConvertible { return false }
        default:
            return false
        }
        return mirror.children.contains { holdsUnwritableDate($0.value) }
    }
}
