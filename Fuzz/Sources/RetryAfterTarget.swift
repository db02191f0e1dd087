import Foundation

@testable import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `Retry-After` values (RFC 9110 §10.2.3) as a server sends them: the whole input is the value.
///
/// Asserts: no trap; a delay is never NaN or negative; delta-seconds give exactly their value;
/// through ``RetryPolicy``, a retry never waits longer than the cap or a non-finite time.
enum RetryAfterTarget {
    static let now = Date(timeIntervalSince1970: 1_750_000_000)
    static let url = URL(string: "https://api.example.com/retry")!
    static let policy = RetryPolicy(maxRetries: 3, retryAfterCap: 60)

    static func run(_ input: FuzzInput) {
        let value = input.text
        let delay = RetryAfter.delay(from: value, now: now)
        if let delay {
            if delay.isNaN || delay < 0 { violated("delay \(delay) for \(value.debugDescription)") }
        }
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if !trimmed.isEmpty, trimmed.utf8.allSatisfy({ (0x30...0x39).contains($0) }) {
            guard let delay, delay == Double(trimmed) else {
                violated("delta-seconds \(trimmed.debugDescription) gave \(String(describing: delay))")
            }
        }
        if let date = RetryAfter.httpDate(value), date.timeIntervalSince1970.isNaN {
            violated("NaN date for \(value.debugDescription)")
        }
        // The header as the policy reads it from a 503 (Foundation drops values with CR/LF).
        guard RequestValidator.isValidHeaderValue(value),
            let response = HTTPURLResponse(
                url: url, statusCode: 503, httpVersion: "HTTP/1.1", headerFields: ["Retry-After": value])
        else { return }
        let context = RetryContext(request: URLRequest(url: url), attempt: 0, outcome: .response(response))
        switch policy.decide(context, previousDelay: nil, randomUnit: 0.5, now: now) {
        case .retry(let after):
            if !after.isFinite || after < 0 || after > 60 {
                violated("retry after \(after) for \(value.debugDescription)")
            }
        case .giveUp:
            break
        }
    }
}
