import Foundation

/// Date encoding strategies for JSON APIs.
///
/// ```swift
/// let encoder = JSONEncoder()
/// encoder.dateEncodingStrategy = DateEncodingStrategies.iso8601FractionalSeconds
/// ```
public enum DateEncodingStrategies {
    /// Encodes a date as an ISO 8601 internet date-time in UTC with milliseconds, such as
    /// `2024-01-01T12:34:56.789Z`: what
    /// ``DateDecodingStrategies/iso8601FractionalAndNonFractionalSeconds`` reads back. Finer
    /// precision than a millisecond is dropped.
    public static var iso8601FractionalSeconds: JSONEncoder.DateEncodingStrategy {
        .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(ISO8601DateText.format(date))
        }
    }
}
