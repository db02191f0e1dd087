/// What went wrong when a 2xx body could not be decoded.
public struct DecodingFailure: Sendable, Hashable, CustomStringConvertible {
    /// The type the service tried to decode, such as `"[Model]"`.
    public let modelType: String
    /// The coding path to the failing value, such as `"items[2].price"`; empty at the top level.
    public let codingPath: String
    /// What the decoder said, such as `"Expected Int but found a string"`.
    public let reason: String
    /// The HTTP status of the response.
    public let statusCode: Int
    /// The start of the body, at most 512 bytes, with credentials redacted.
    public let bodyExcerpt: String

    /// Creates a description of a decoding failure.
    public init(modelType: String, codingPath: String, reason: String, statusCode: Int, bodyExcerpt: String) {
        self.modelType = modelType
        self.codingPath = codingPath
        self.reason = reason
        self.statusCode = statusCode
        self.bodyExcerpt = bodyExcerpt
    }

    /// One line naming the type, the path, the reason, the status and the excerpt.
    public var description: String {
        let path = codingPath.isEmpty ? "<root>" : codingPath
        return "Could not decode \(modelType) at \(path): \(reason) (status \(statusCode), body: \(bodyExcerpt))"
    }

    /// Builds a failure from a `DecodingError` or any other error a decoder throws.
    /// `secrets`, the request's credential values, are scrubbed from the excerpt and the reason;
    /// control characters (a decoder quotes the server's strings and keys) are escaped
    /// (`PrintableText`).
    static func from(
        _ error: any Error, modelType: String, statusCode: Int, body: Data, secrets: [String] = []
    ) -> DecodingFailure {
        let failure = unscrubbed(error, modelType: modelType, statusCode: statusCode, body: body, secrets: secrets)
        // Scrubbed before the final cut, so a secret across the cut cannot leave its start; cut
        // first to what the scrub can need (the cap plus the longest secret), so a 50 MB reason
        // is not scanned whole.
        let reach = maxTextBytes + (secrets.map(\.utf8.count).max() ?? 0)
        func shown(_ text: String) -> String {
            capped(Redactor.scrub(capped(text, at: reach, marker: ""), secrets: secrets))
        }
        return DecodingFailure(
            modelType: failure.modelType,
            codingPath: PrintableText.escaping(shown(failure.codingPath)),
            reason: PrintableText.escaping(shown(failure.reason)),
            statusCode: failure.statusCode,
            bodyExcerpt: failure.bodyExcerpt)
    }

    /// The longest reason or coding path kept, in bytes: a decoder quotes the server's values
    /// (an invalid enum raw value of 50 MB made a 50 MB error message).
    static let maxTextBytes = 512

    /// `text` cut to `limit` bytes (``maxTextBytes`` by default) at a character boundary, with
    /// `marker` when cut.
    static func capped(_ text: String, at limit: Int = maxTextBytes, marker: String = "…") -> String {
        text.utf8Prefix(limit, marker: marker)
    }

    private static func unscrubbed(
        _ error: any Error, modelType: String, statusCode: Int, body: Data, secrets: [String]
    ) -> DecodingFailure {
        let excerpt = Redactor.bodyExcerpt(body, limit: 512, scrubbing: secrets)
        guard let decodingError = error as? DecodingError else {
            return DecodingFailure(
                modelType: modelType, codingPath: "", reason: String(describing: error),
                statusCode: statusCode, bodyExcerpt: excerpt)
        }
        let context: DecodingError.Context
        let reason: String
        switch decodingError {
        case .typeMismatch(let type, let ctx):
            context = ctx
            reason = "type mismatch, expected \(type): \(ctx.debugDescription)"
        case .valueNotFound(let type, let ctx):
            context = ctx
            reason = "missing value of type \(type): \(ctx.debugDescription)"
        case .keyNotFound(let key, let ctx):
            context = ctx
            reason = "missing key \"\(key.stringValue)\": \(ctx.debugDescription)"
        case .dataCorrupted(let ctx):
            context = ctx
            reason = "data corrupted: \(ctx.debugDescription)"
        @unknown default:
            return DecodingFailure(
                modelType: modelType, codingPath: "", reason: String(describing: decodingError),
                statusCode: statusCode, bodyExcerpt: excerpt)
        }
        // Under a field whose name looks secret (`session_token`, `password`), the decoder's
        // text may quote the value, which the excerpt redacts: only the kind of failure is kept.
        let secretField = context.codingPath.contains { $0.intValue == nil && Redactor.isSensitiveName($0.stringValue) }
        return DecodingFailure(
            modelType: modelType, codingPath: Self.render(context.codingPath),
            reason: secretField
                ? Self.kind(of: decodingError) + " (the decoder's text is withheld: a secret field)" : reason,
            statusCode: statusCode, bodyExcerpt: excerpt)
    }

    /// The kind of a `DecodingError`, without the decoder's text.
    private static func kind(of error: DecodingError) -> String {
        switch error {
        case .typeMismatch(let type, _): return "type mismatch, expected \(type)"
        case .valueNotFound(let type, _): return "missing value of type \(type)"
        case .keyNotFound(let key, _): return "missing key \"\(key.stringValue)\""
        case .dataCorrupted: return "data corrupted"
        @unknown default: return "decoding error"
        }
    }

    static func render(_ path: [any CodingKey]) -> String {
        var result = ""
        for key in path {
            if let index = key.intValue {
                result += "[\(index)]"
            } else {
                result += result.isEmpty ? key.stringValue : "." + key.stringValue
            }
        }
        return result
    }
}

extension DecodingFailure {
    /// `error` fit to hand on as it is by the compatibility modules, whose callers expect the
    /// decoder's own error type: a `DecodingError` becomes one of the same case and coding path,
    /// whose text is what ``from(_:modelType:statusCode:body:secrets:)`` keeps (at most
    /// ``maxTextBytes``, the credential values of `request` scrubbed, control characters
    /// escaped, withheld under a field whose name looks secret), with the path's keys scrubbed
    /// and escaped too (a dictionary's keys are the server's), at most ``maxTextBytes`` of them
    /// in all (the rest one `…` key), and no underlying error (it can quote the body). Any other
    /// error is returned unchanged.
    ///
    /// - Parameter alsoHeaders: Headers of `request` whose values are secrets besides the usual
    ///   ones (the session's own header names).
    ///
    /// A decoder quotes the server's values: an invalid enum raw value of 50 MB made a 50 MB
    /// error, and a credential the server echoed into such a field reached every log of it.
    package static func sanitized(
        _ error: any Error, sentWith request: URLRequest?, alsoHeaders: [String] = []
    ) -> any Error {
        guard let decodingError = error as? DecodingError else { return error }
        let secrets = request.map { Redactor.credentialValues(of: $0, alsoHeaders: alsoHeaders) } ?? []
        let reach = maxTextBytes + (secrets.map(\.utf8.count).max() ?? 0)
        func shown(_ text: String) -> String {
            PrintableText.escaping(capped(Redactor.scrub(capped(text, at: reach, marker: ""), secrets: secrets)))
        }
        func path(_ keys: [any CodingKey]) -> [any CodingKey] {
            var kept: [any CodingKey] = []
            var bytes = 0
            for key in keys {
                let shownKey = SanitizedCodingKey(key, shown: shown(key.stringValue))
                bytes += shownKey.stringValue.utf8.count
                guard bytes <= maxTextBytes else {
                    kept.append(SanitizedCodingKey.ellipsis)
                    break
                }
                kept.append(shownKey)
            }
            return kept
        }
        func context(_ original: DecodingError.Context) -> DecodingError.Context {
            let secretField = original.codingPath.contains {
                $0.intValue == nil && Redactor.isSensitiveName($0.stringValue)
            }
            let text =
                secretField ? "The decoder's text is withheld: a secret field." : shown(original.debugDescription)
            return DecodingError.Context(codingPath: path(original.codingPath), debugDescription: text)
        }
        switch decodingError {
        case .typeMismatch(let type, let original): return DecodingError.typeMismatch(type, context(original))
        case .valueNotFound(let type, let original): return DecodingError.valueNotFound(type, context(original))
        case .keyNotFound(let key, let original):
            return DecodingError.keyNotFound(SanitizedCodingKey(key, shown: shown(key.stringValue)), context(original))
        case .dataCorrupted(let original): return DecodingError.dataCorrupted(context(original))
        @unknown default:
            return DecodingError.dataCorrupted(
                DecodingError.Context(codingPath: [], debugDescription: "The value could not be decoded."))
        }
    }
}

/// A coding key as a decoding error may show it: its name as ``DecodingFailure/sanitized(_:sentWith:alsoHeaders:)``
/// shows text (a dictionary's keys are the server's), its index kept.
private struct SanitizedCodingKey: CodingKey {
    let stringValue: String
    let intValue: Int?

    /// The key standing for the keys left out of a path too long to show.
    static let ellipsis = SanitizedCodingKey(shownName: "…")

    init(_ key: any CodingKey, shown: String) {
        stringValue = shown
        intValue = key.intValue
    }

    private init(shownName: String) {
        stringValue = shownName
        intValue = nil
    }

    init?(stringValue: String) {
        self.stringValue = stringValue
        intValue = nil
    }

    init?(intValue: Int) {
        stringValue = String(intValue)
        self.intValue = intValue
    }
}
