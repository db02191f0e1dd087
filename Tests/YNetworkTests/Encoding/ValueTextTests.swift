import Foundation
import Testing

@testable import YNetwork

/// Shapes a parameter or form value can take, holding `date`.
private struct Event { let at: Date }
private enum Slot {
    case at(Date, Int)
    case labelled(date: Date)
    case single(Date)
    case none
}
private final class Box {
    let date: Date
    init(_ date: Date) { self.date = date }
}

private func shapes(_ date: Date) -> [Any] {
    [
        date, ["a": date] as [String: Any], [date, 1] as [Any], [["x": date]] as [Any], Event(at: date),
        (date, "s") as (Date, String), (when: date, n: 1) as (when: Date, n: Int), Slot.at(date, 1),
        Slot.labelled(date: date), Slot.single(date), [Slot.at(date, 2), Slot.none] as [Any],
        [Optional(date), nil] as [Date?], Set([date]), [Set([date])] as [Any], [Event(at: date)],
        ["k": [date]] as [String: Any], [String: Date](), Optional(Optional(date)) as Any, Box(date),
    ]
}

@Suite("ValueText: parameter and form values as Swift prints them, a non-finite Date never a trap")
struct ValueTextTests {
    @Test("Written by reflection, every shape reads exactly as Swift prints it (finite dates)")
    func sameAsSwift() {
        for value in shapes(Date(timeIntervalSinceReferenceDate: 12_345)) {
            #expect(ValueText.text(of: value, nested: false, always: true) == String(describing: value))
            #expect(ValueText.text(of: value, nested: true, always: true) == String(reflecting: value))
        }
    }

    @Test("A date that is not finite is its interval wherever Swift's printing reaches it")
    func nonFinite() {
        let nan = Date(timeIntervalSinceReferenceDate: .nan)
        let expected: [(Any, String)] = [
            (["a": nan] as [String: Any], #"["a": nan]"#), (Event(at: nan), "Event(at: nan)"),
            (Slot.at(nan, 1), "at(nan, 1)"), (Slot.labelled(date: nan), "labelled(date: nan)"),
            ([Optional(nan)], "[Optional(nan)]"), ([Set([nan])] as [Any], "[Set([nan])]"),
            ((nan, "s") as (Date, String), #"(nan, "s")"#),
            (Set([Date(timeIntervalSinceReferenceDate: .infinity)]), "[inf]"),
        ]
        for (value, text) in expected {
            #expect(ValueText.of(value) == text)
        }
        // Every shape: no trap, and the interval where the date was.
        for value in shapes(nan) where !(value is Box) && !(value is [String: Date]) {
            #expect(ValueText.of(value).contains("nan"), "\(ValueText.of(value))")
        }
    }

    @Test("Through the query and form encoders, which every parameter goes through")
    func throughTheEncoders() {
        let nan = Date(timeIntervalSinceReferenceDate: .nan)
        let value = ["a": nan] as [String: Any]
        let encoded = URLBuilder().queryParameterString(field: "v", value: value, contentType: .JSON)
        #expect(encoded?.removingPercentEncoding == #"v=["a": nan]"#)
    }
}
