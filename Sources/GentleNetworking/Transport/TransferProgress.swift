/// How far a transfer has come, as reported to progress handlers.
public struct TransferProgress: Sendable, Hashable, CustomStringConvertible {
    /// Body bytes received so far.
    public var bytesReceived: Int64
    /// The response body size, when the server announced it.
    public var expectedBytesToReceive: Int64?
    /// Body bytes sent so far.
    public var bytesSent: Int64
    /// The request body size, when known.
    public var expectedBytesToSend: Int64?

    /// Creates a progress value.
    public init(bytesReceived: Int64, expectedBytesToReceive: Int64?, bytesSent: Int64, expectedBytesToSend: Int64?) {
        self.bytesReceived = bytesReceived
        self.expectedBytesToReceive = expectedBytesToReceive
        self.bytesSent = bytesSent
        self.expectedBytesToSend = expectedBytesToSend
    }

    /// The received fraction in 0…1, or `nil` when the size is unknown.
    public var fractionReceived: Double? {
        guard let expected = expectedBytesToReceive, expected > 0 else { return nil }
        return min(1, Double(bytesReceived) / Double(expected))
    }

    /// The sent fraction in 0…1, or `nil` when the size is unknown.
    public var fractionSent: Double? {
        guard let expected = expectedBytesToSend, expected > 0 else { return nil }
        return min(1, Double(bytesSent) / Double(expected))
    }

    /// Such as `received 512/1024, sent 0/0`.
    public var description: String {
        "received \(bytesReceived)/\(expectedBytesToReceive.map(String.init) ?? "?"), "
            + "sent \(bytesSent)/\(expectedBytesToSend.map(String.init) ?? "?")"
    }
}
