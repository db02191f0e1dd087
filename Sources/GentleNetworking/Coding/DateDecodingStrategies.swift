import Foundation

/// Date decoding strategies for JSON APIs.
///
/// ```swift
/// let decoder = JSONDecoder()
/// decoder.dateDecodingStrategy = DateDecodingStrategies.iso8601FractionalAndNonFractionalSeconds
/// ```
public enum DateDecodingStrategies {
    /// Decodes ISO 8601 internet date-times (RFC 3339) with or without fractional seconds:
    /// `2024-01-01T12:34:56Z` and `2024-01-01T12:34:56.789Z`, and with a numeric offset such as
    /// `+02:00` instead of `Z`.
    ///
    /// A value that is not a string, or a string that is not such a date, throws
    /// `DecodingError.dataCorrupted` with the coding path; it never crashes.
    ///
    /// It uses `Date.ISO8601FormatStyle`, a value type, so it is safe from any task and creates
    /// no formatter object per call.
    public static var iso8601FractionalAndNonFractionalSeconds: JSONDecoder.DateDecodingStrategy {
        .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = ISO8601DateText.parse(text) else {
                throw DecodingError.dataCorrupted(
                    DecodingError.Context(
                        codingPath: container.codingPath,
                        debugDescription: "Expected an ISO 8601 date-time such as 2024-01-01T12:34:56Z."))
            }
            return date
        }
    }
}

/// ISO 8601 date-time text, as the strategies read and write it.
enum ISO8601DateText {
    private static let fractional = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
    private static let whole = Date.ISO8601FormatStyle()

    /// The date `text` names, with or without fractional seconds; `nil` when it names none.
    static func parse(_ text: String) -> Date? {
        // The format style accepts more than RFC 3339 (a date alone, odd separators); the
        // separator check keeps the accepted forms to date-times.
        guard text.count <= 64, text.contains("T") else { return nil }
        if text.contains("."), let date = try? fractional.parse(text) { return date }
        return try? whole.parse(text)
    }

    /// `date` in UTC with milliseconds, such as `2024-01-01T12:34:56.789Z`.
    static func format(_ date: Date) -> String {
        fractional.format(date)
    }

    /// Whether ``format(_:)`` writes `date` with a four-digit year, as RFC 3339 requires:
    /// finite, from the instant it writes as 0001-01-01T00:00:00Z (Foundation's calendar is
    /// Julian before 1582, two days off the proleptic Gregorian one there) up to, not including,
    /// 10000-01-01T00:00:00Z.
    static func canFormat(_ date: Date) -> Bool {
        let seconds = date.timeIntervalSince1970
        return seconds >= -62_135_769_600 && seconds < 253_402_300_800
    }
}
