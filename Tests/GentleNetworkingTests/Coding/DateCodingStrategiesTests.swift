import Foundation
import GentleNetworking
import Testing

@Suite("Date coding strategies")
struct DateCodingStrategiesTests {
    struct Stamp: Codable, Equatable { let at: Date }

    func decode(_ text: String) throws -> Date {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = DateDecodingStrategies.iso8601FractionalAndNonFractionalSeconds
        return try decoder.decode(Stamp.self, from: Data(#"{"at": "\#(text)"}"#.utf8)).at
    }

    @Test("Whole and fractional seconds, Z and numeric offsets")
    func accepted() throws {
        let base = 1_704_112_496.0  // 2024-01-01T12:34:56Z
        #expect(try decode("2024-01-01T12:34:56Z") == Date(timeIntervalSince1970: base))
        #expect(try abs(decode("2024-01-01T12:34:56.789Z").timeIntervalSince1970 - (base + 0.789)) < 0.000_5)
        #expect(try abs(decode("2024-01-01T12:34:56.5Z").timeIntervalSince1970 - (base + 0.5)) < 0.000_5)
        #expect(try decode("2024-01-01T14:34:56+02:00") == Date(timeIntervalSince1970: base))
        #expect(try decode("1969-12-31T23:59:59Z") == Date(timeIntervalSince1970: -1))
    }

    @Test(
        "Anything else is DecodingError.dataCorrupted at the key, never a crash",
        arguments: [
            "", "2024-01-01", "12:34:56", "2024-13-01T12:34:56Z", "2024-01-01T12:34:56", "2024-01-01 12:34:56Z",
            "not a date", "2024-01-01T12:34:56.Z", String(repeating: "9", count: 10_000) + "T",
        ])
    func rejected(text: String) {
        #expect {
            _ = try decode(text)
        } throws: { error in
            guard case DecodingError.dataCorrupted(let context) = error else { return false }
            return context.codingPath.map(\.stringValue) == ["at"]
        }
    }

    @Test("A non-string value is a DecodingError too")
    func notAString() {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = DateDecodingStrategies.iso8601FractionalAndNonFractionalSeconds
        #expect(throws: DecodingError.self) { try decoder.decode(Stamp.self, from: Data(#"{"at": 12}"#.utf8)) }
    }

    @Test("Encodes UTC with milliseconds, and the decoder reads it back")
    func encodes() throws {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = DateEncodingStrategies.iso8601FractionalSeconds
        let stamp = Stamp(at: Date(timeIntervalSince1970: 1_704_112_496.789))
        let json = String(decoding: try encoder.encode(stamp), as: UTF8.self)
        #expect(json == #"{"at":"2024-01-01T12:34:56.789Z"}"#)
        let whole = String(decoding: try encoder.encode(Stamp(at: Date(timeIntervalSince1970: 0))), as: UTF8.self)
        #expect(whole == #"{"at":"1970-01-01T00:00:00.000Z"}"#)
        #expect(
            try abs(decode("2024-01-01T12:34:56.789Z").timeIntervalSince1970 - stamp.at.timeIntervalSince1970) < 0.001)
    }

    @Test("Safe from many tasks at once: 10 tasks decode the same 2,000 dates, all alike")
    func concurrent() async throws {
        let items = (0..<2_000).map {
            #"{"at": "2024-01-01T12:34:\#(String(format: "%02d", $0 % 60)).\#(String(format: "%03d", $0 % 1000))Z"}"#
        }
        let payload = Data(("[" + items.joined(separator: ",") + "]").utf8)
        // 2024-01-01T12:34:00Z, then the seconds and milliseconds of each item.
        let base = 1_704_112_440.0
        let expected = (0..<2_000).map { base + Double($0 % 60) + Double($0 % 1000) / 1000 }
        try await withThrowingTaskGroup(of: [Double].self) { group in
            for _ in 0..<10 {
                group.addTask {
                    let decoder = JSONDecoder()
                    decoder.dateDecodingStrategy = DateDecodingStrategies.iso8601FractionalAndNonFractionalSeconds
                    return try decoder.decode([Stamp].self, from: payload).map(\.at.timeIntervalSince1970)
                }
            }
            for try await decoded in group {
                #expect(decoded.count == 2_000)
                #expect(zip(decoded, expected).allSatisfy { abs($0 - $1) < 0.0005 })
            }
        }
    }

    @Test(
        "A date RFC 3339 cannot write (NaN, infinite, years 0 and 10000) is EncodingError.invalidValue at the key",
        arguments: [Double.nan, .infinity, -.infinity, -62_135_769_601, 253_402_300_800, 1e300])
    func unwritable(seconds: Double) {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = DateEncodingStrategies.iso8601FractionalSeconds
        // Before: "-4712-01-01T12:00:00.000Z" for NaN, a six-digit year for infinity, which
        // the decoding strategy refuses.
        #expect {
            _ = try encoder.encode(Stamp(at: Date(timeIntervalSince1970: seconds)))
        } throws: { error in
            guard case EncodingError.invalidValue(_, let context) = error else { return false }
            return context.codingPath.map(\.stringValue) == ["at"]
        }
    }

    @Test("The first and last instants RFC 3339 can write are written and read back")
    func edges() throws {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = DateEncodingStrategies.iso8601FractionalSeconds
        for (seconds, text) in [
            // Foundation's calendar is Julian before 1582: its 0001-01-01 is two days before the
            // proleptic Gregorian one.
            (-62_135_769_600.0, "0001-01-01T00:00:00.000Z"), (253_402_300_799.0, "9999-12-31T23:59:59.000Z"),
        ] {
            let data = try encoder.encode(Stamp(at: Date(timeIntervalSince1970: seconds)))
            #expect(String(decoding: data, as: UTF8.self) == #"{"at":"\#(text)"}"#)
            #expect(try decode(text) == Date(timeIntervalSince1970: seconds))
        }
    }
}
