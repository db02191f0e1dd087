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
    ///
    /// A date that RFC 3339 cannot write (not finite, such as one made from `Double.nan`, or
    /// outside the years 0001–9999) throws `EncodingError.invalidValue` (through
    /// ``HTTPNetworkService``, a ``NetworkError`` of kind ``NetworkError/Kind/encodingFailed``, and nothing is sent): the
    /// format style wrote `-4712-01-01T12:00:00.000Z` for a NaN date and a six-digit year for an
    /// infinite one, which no RFC 3339 reader, ours included, reads back.
    public static var iso8601FractionalSeconds: JSONEncoder.DateEncodingStrategy {
        .custom { date, encoder in
            guard ISO8601DateText.canFormat(date) else {
                // The value is the seconds, not the `Date`: describing a NaN `Date` traps in
                // Foundation, and a logger describes the error.
                throw EncodingError.invalidValue(
                    date.timeIntervalSince1970,
                    EncodingError.Context(
                        codingPath: encoder.codingPath,
                        debugDescription:
                            "The date (\(date.timeIntervalSince1970) s since 1970) is not finite or is outside "
                            + "the years 0001–9999: RFC 3339 cannot write it."))
            }
            var container = encoder.singleValueContainer()
            try container.encode(ISO8601DateText.format(date))
        }
    }
}
