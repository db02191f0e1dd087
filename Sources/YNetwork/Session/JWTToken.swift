import Foundation

/// The standard claims of a JSON Web Token (RFC 7519).
public protocol JWTTokenRepresentable: Sendable {
    /// The decoded header.
    var header: [String: Any] { get }
    /// The decoded payload.
    var body: [String: Any] { get }
    /// The signature part (base64url); empty for an unsigned (`alg: none`) token, as in Y-Network.
    var signature: String? { get }
    /// The token as it was given.
    var string: String { get }
    /// `exp`, or `nil`.
    var expiresAt: Date? { get }
    /// `iss`, or `nil`.
    var issuer: String? { get }
    /// `sub`, or `nil`.
    var subject: String? { get }
    /// `aud` (a single audience becomes a one-element array), or `nil`.
    var audience: [String]? { get }
    /// `iat`, or `nil`.
    var issuedAt: Date? { get }
    /// `nbf`, or `nil`.
    var notBefore: Date? { get }
    /// `jti`, or `nil`.
    var identifier: String? { get }
    /// Whether `exp` is now or in the past; `false` for a token without `exp`.
    var isExpired: Bool { get }
}

/// A decoded (not verified) JSON Web Token, for reading its claims, such as its expiry.
///
/// The signature is not checked: use this to decide when to refresh, never to trust a token.
/// Malformed input throws ``JWTDecodeError``; it never crashes.
public struct JWTToken: JWTTokenRepresentable, Equatable {
    /// The token as it was given.
    public let string: String
    /// The signature part, as in Y-Network: `""` for an unsigned (`alg: none`) token, never `nil`.
    public let signature: String?
    /// `exp`, or `nil`.
    public let expiresAt: Date?
    /// `iss`, or `nil`.
    public let issuer: String?
    /// `sub`, or `nil`.
    public let subject: String?
    /// `aud`, or `nil`.
    public let audience: [String]?
    /// `iat`, or `nil`.
    public let issuedAt: Date?
    /// `nbf`, or `nil`.
    public let notBefore: Date?
    /// `jti`, or `nil`.
    public let identifier: String?
    private let headerJSON: Data
    private let bodyJSON: Data
    private let now: @Sendable () -> Date

    /// Decodes `jwtString`.
    ///
    /// - Throws: ``JWTDecodeError/invalidPartCount(_:_:)`` unless there are three `.`-separated
    ///   parts, ``JWTDecodeError/invalidBase64(_:)`` when the header or payload is not base64url
    ///   (spaces and line breaks inside a part are skipped),
    ///   ``JWTDecodeError/invalidJSON(_:)`` when either is not a JSON object.
    public init(jwtString: String) throws {
        try self.init(jwtString: jwtString, now: { Date() })
    }

    /// Decodes `jwtString`, reading the current time from `now` (for tests).
    public init(jwtString: String, now: @escaping @Sendable () -> Date) throws {
        let parts = jwtString.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw JWTDecodeError.invalidPartCount(jwtString, parts.count) }
        let headerJSON = try Self.decodePart(parts[0])
        let bodyJSON = try Self.decodePart(parts[1])
        guard let body = try? JSONSerialization.jsonObject(with: bodyJSON) as? [String: Any] else {
            throw JWTDecodeError.invalidJSON(String(parts[1]))
        }
        guard (try? JSONSerialization.jsonObject(with: headerJSON) as? [String: Any]) != nil else {
            throw JWTDecodeError.invalidJSON(String(parts[0]))
        }
        self.string = jwtString
        self.signature = String(parts[2])
        self.headerJSON = headerJSON
        self.bodyJSON = bodyJSON
        self.now = now
        self.expiresAt = Self.date(body["exp"])
        self.issuedAt = Self.date(body["iat"])
        self.notBefore = Self.date(body["nbf"])
        self.issuer = body["iss"] as? String
        self.subject = body["sub"] as? String
        self.identifier = body["jti"] as? String
        if let single = body["aud"] as? String {
            self.audience = [single]
        } else {
            self.audience = (body["aud"] as? [Any])?.compactMap { $0 as? String }
        }
    }

    /// The decoded header.
    public var header: [String: Any] {
        (try? JSONSerialization.jsonObject(with: headerJSON) as? [String: Any]) ?? [:]
    }

    /// The decoded payload.
    public var body: [String: Any] {
        (try? JSONSerialization.jsonObject(with: bodyJSON) as? [String: Any]) ?? [:]
    }

    /// Whether `exp` is now or in the past; `false` without `exp`.
    public var isExpired: Bool {
        guard let expiresAt else { return false }
        return expiresAt <= now()
    }

    /// Tokens are equal when their text is.
    public static func == (lhs: JWTToken, rhs: JWTToken) -> Bool {
        lhs.string == rhs.string
    }

    /// A part as bytes. Spaces, tabs and line breaks inside it are skipped, as Y-Network's
    /// decoder skipped them (a token written over several lines of a multi-line literal keeps
    /// its indentation); any other character outside base64url is an error.
    private static func decodePart(_ part: Substring) throws -> Data {
        let compact = part.filter { $0 != " " && $0 != "\t" && $0 != "\n" && $0 != "\r" && $0 != "\r\n" }
        var base64 = compact.replacingOccurrences(of: "-", with: "+", options: .literal).replacingOccurrences(
            of: "_", with: "/", options: .literal)
        let remainder = base64.count % 4
        if remainder == 1 { throw JWTDecodeError.invalidBase64(String(part)) }
        if remainder > 0 { base64 += String(repeating: "=", count: 4 - remainder) }
        guard let data = Data(base64Encoded: base64) else { throw JWTDecodeError.invalidBase64(String(part)) }
        return data
    }

    /// Seconds since 1970, as a number or a numeric string written in decimal; `nil` for
    /// anything else, and for a value that is not finite (`"nan"`, `"inf"`, `"1e999"`: a NaN
    /// expiry never expired) or is hexadecimal (`"0x1p40"`, which `Double` reads).
    private static func date(_ value: Any?) -> Date? {
        let seconds: Double?
        switch value {
        case let number as NSNumber: seconds = number.doubleValue
        case let text as String:
            let decimal = text.utf8.allSatisfy { byte in
                (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: ".")
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "e")
                    || byte == UInt8(ascii: "E")
            }
            seconds = decimal ? Double(text) : nil
        default: seconds = nil
        }
        guard let seconds, seconds.isFinite else { return nil }
        return Date(timeIntervalSince1970: seconds)
    }
}

/// Why a string is not a JSON Web Token.
///
/// The associated strings are the token (or the part of it) that did not decode, for a caller
/// that matches on them; no printed form of the error shows them: `description`,
/// `String(reflecting:)` and `dump` (a mirror with the case and the text's length) all leave
/// the credential out.
public enum JWTDecodeError: Error, Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// A part is not valid base64url.
    case invalidBase64(String)
    /// The header or payload is not a JSON object.
    case invalidJSON(String)
    /// The token does not have three `.`-separated parts: the token and the count found.
    case invalidPartCount(String, Int)

    /// A sentence without the token itself (it is a credential).
    public var description: String {
        switch self {
        case .invalidBase64: "A part of the JWT is not valid base64url."
        case .invalidJSON: "The JWT header or payload is not a JSON object."
        case .invalidPartCount(_, let count): "A JWT has 3 parts separated by '.'; this one has \(count)."
        }
    }

    /// The description, prefixed with the type: the token stays out.
    public var debugDescription: String { "JWTDecodeError: \(description)" }

    /// The case and the length of the text that did not decode, never the text: `dump(error)`
    /// and debuggers otherwise print associated values in full.
    public var customMirror: Mirror {
        switch self {
        case .invalidBase64(let part):
            Mirror(self, children: ["case": "invalidBase64", "bytes": part.utf8.count], displayStyle: .enum)
        case .invalidJSON(let part):
            Mirror(self, children: ["case": "invalidJSON", "bytes": part.utf8.count], displayStyle: .enum)
        case .invalidPartCount(let token, let count):
            Mirror(
                self, children: ["case": "invalidPartCount", "bytes": token.utf8.count, "parts": count],
                displayStyle: .enum)
        }
    }
}
