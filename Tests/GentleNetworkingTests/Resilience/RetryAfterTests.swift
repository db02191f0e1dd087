import Foundation
import GentleNetworking
import Testing

/// Regression tests for inputs the `retry-after` fuzz target found (Fuzz/Corpus/retry-after).
@Suite("RetryAfter parsing of hostile values")
struct RetryAfterTests {
    let now = Date(timeIntervalSince1970: 1_700_000_000)

    @Test("A letter with a combining mark is no date, not a DateFormatter trap")
    func combiningMarkIsNotADate() {
        // Given the value the fuzzer found: "M" + U+0659 (crash-dateformatter-combining-mark),
        // which made corelibs' DateFormatter trap with "Incorrect range CFRange"
        let value = "M\u{0659}"
        // Then it is simply not a Retry-After value
        #expect(RetryAfter.httpDate(value) == nil)
        #expect(RetryAfter.delay(from: value, now: now) == nil)
    }

    @Test("Non-ASCII and overlong values are no dates; the three HTTP formats still parse")
    func onlyASCIIDatesParse() {
        #expect(RetryAfter.httpDate("Tue, 14 Nov 2023 22:13:40 GMT\u{0301}") == nil)
        #expect(RetryAfter.httpDate("Tue, 14 Nov 2023 22:13:40 GMT" + String(repeating: " ", count: 64)) == nil)
        #expect(RetryAfter.delay(from: "Tue, 14 Nov 2023 22:13:40 GMT", now: now) == 20)
        #expect(RetryAfter.delay(from: "Tuesday, 14-Nov-23 22:13:40 GMT", now: now) == 20)
        #expect(RetryAfter.delay(from: "Tue Nov 14 22:13:40 2023", now: now) == 20)
    }
}
