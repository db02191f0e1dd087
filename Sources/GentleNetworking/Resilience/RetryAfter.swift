import Foundation

/// Parses `Retry-After` (RFC 9110 §10.2.3): delta-seconds or an HTTP date.
public enum RetryAfter {
    /// The delay a `Retry-After` value asks for, in seconds from `now`.
    ///
    /// - Returns: `nil` when the value is neither a non-negative integer nor an HTTP date
    ///   (IMF-fixdate, RFC 850 or asctime). A date in the past gives 0.
    public static func delay(from value: String, now: Date) -> TimeInterval? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if !trimmed.isEmpty, trimmed.allSatisfy(\.isASCII), trimmed.allSatisfy(\.isNumber) {
            return TimeInterval(trimmed).map { max(0, $0) }
        }
        guard let date = httpDate(trimmed) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }

    /// Parses the three HTTP date formats.
    ///
    /// - Returns: `nil` for anything else, including any text that is not printable ASCII or is
    ///   longer than 64 bytes (no HTTP date is); such text never reaches `DateFormatter`, which
    ///   traps on some non-ASCII input on Linux (a combining mark after a letter).
    public static func httpDate(_ value: String) -> Date? {
        guard value.utf8.count <= 64, value.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else { return nil }
        for format in ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"] {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            if let date = formatter.date(from: value) { return date }
        }
        return nil
    }
}
