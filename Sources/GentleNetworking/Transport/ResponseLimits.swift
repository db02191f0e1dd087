import Foundation

/// How much of a response a transport accepts before it gives up with
/// ``TransportError/Code/responseTooLarge`` and closes the connection.
///
/// The defaults protect a caller who never reads this: a server that sends an endless body,
/// a compression bomb or a flood of headers gets a typed error, and the process's memory stays
/// within the limit plus a small constant.
///
/// - ``maxBodyBytes`` bounds bodies held in memory (`data(for:)`, so every
///   ``HTTPNetworkService`` call and both compatibility modules). The **decoded** size counts,
///   so a 10 MB gzip body that inflates to 10 GiB stops at the limit. A `Content-Length` above
///   the limit fails before any of the body is read.
/// - Streams and downloads to a file are constant-memory and have no size limit unless one is
///   given to them. A download's body is unlimited only for a 2xx: the body of any other status
///   written to a file (an error page, a redirect's own body) is held to ``maxBodyBytes``.
/// - ``maxHeaderCount`` and ``maxHeaderBytes`` bound the response head on every kind of request.
public struct ResponseLimits: Sendable, Hashable {
    /// The most decoded body bytes held in memory; 100 MiB by default; `nil` for no limit.
    public var maxBodyBytes: Int64?
    /// The most header fields in one response head; 256 by default.
    public var maxHeaderCount: Int
    /// The most bytes of response head (status lines and fields, interim 1xx heads included);
    /// 256 KiB by default.
    public var maxHeaderBytes: Int

    /// 100 MiB.
    public static let defaultMaxBodyBytes: Int64 = 100 * 1024 * 1024

    /// Creates limits.
    ///
    /// - Parameters:
    ///   - maxBodyBytes: 100 MiB by default; `nil` for none. Negative values count as 0.
    ///   - maxHeaderCount: 256 by default; values below 1 count as 1.
    ///   - maxHeaderBytes: 256 KiB by default; values below 1 KiB count as 1 KiB.
    public init(
        maxBodyBytes: Int64? = ResponseLimits.defaultMaxBodyBytes, maxHeaderCount: Int = 256,
        maxHeaderBytes: Int = 256 * 1024
    ) {
        self.maxBodyBytes = maxBodyBytes.map { max(0, $0) }
        self.maxHeaderCount = max(1, maxHeaderCount)
        self.maxHeaderBytes = max(1024, maxHeaderBytes)
    }

    /// The in-memory body limit for the requests of the current task, set by
    /// ``withMaxBodyBytes(_:operation:)``; `nil` when the transport's own limit applies.
    @TaskLocal static var bodyLimitOverride: Int64??

    /// Runs `operation` with `limit` as the in-memory body limit of every request it sends,
    /// through any decorator stack, instead of the transport's configured one. This is how an
    /// endpoint's ``EndpointProtocol/maxResponseBytes`` reaches the transport.
    ///
    /// - Parameters:
    ///   - limit: The most decoded body bytes; `nil` for no limit.
    ///   - operation: The work whose requests the limit applies to.
    public static func withMaxBodyBytes<T: Sendable>(
        _ limit: Int64?, operation: () async throws -> T
    ) async rethrows -> T {
        try await $bodyLimitOverride.withValue(.some(limit.map { max(0, $0) })) {
            try await operation()
        }
    }

    /// A ceiling on the in-memory body limit for the requests of the current task, set by
    /// ``withBodyLimitCap(_:operation:)``: the limit in force is lowered to it, never raised.
    @TaskLocal static var bodyLimitCap: Int64?

    /// Runs `operation` with the in-memory body limit of its requests at most `cap` (and at most
    /// any cap already in force): a download to a file given a limit, run through memory, must
    /// stop at that limit, but a large one must not lift the memory limit (a 2 GiB download limit
    /// let a 2 GiB body, of any status, into memory).
    package static func withBodyLimitCap<T: Sendable>(
        _ cap: Int64, operation: () async throws -> T
    ) async rethrows -> T {
        let lowered = min(bodyLimitCap ?? .max, max(0, cap))
        return try await $bodyLimitCap.withValue(lowered) { try await operation() }
    }

    /// The body limit in force for a request of the current task: the task's override, if any,
    /// else `configured`; lowered to the task's cap, if any.
    static func effectiveBodyLimit(configured: Int64?) -> Int64? {
        let limit: Int64? = if let override = bodyLimitOverride { override } else { configured }
        guard let cap = bodyLimitCap else { return limit }
        return min(limit ?? cap, cap)
    }
}

extension ResponseLimits {
    /// The most interim (1xx) responses before the final one, on every transport: a server
    /// sending a 103 now and then, forever, kept a call going past every idle timeout.
    static let maxInterimResponses = 16

    /// The error for a response that sent more than ``maxInterimResponses`` interim responses.
    static func tooManyInterimResponses(url: URL?) -> TransportError {
        TransportError(
            .badResponse, url: url, message: "The server sent more than \(maxInterimResponses) interim (1xx) responses."
        )
    }
}
