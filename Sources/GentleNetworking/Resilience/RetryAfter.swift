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
    public static func httpDate(_ value: String) -> Date? {
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
