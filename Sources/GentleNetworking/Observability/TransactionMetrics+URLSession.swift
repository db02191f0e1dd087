import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension TransactionMetrics {
    /// The figures of one of a `URLSessionTaskMetrics`' transactions (Apple platforms; corelibs
    /// declares the type but never delivers it). `nil` for a transaction that never started
    /// (no `fetchStartDate`).
    init?(system transaction: URLSessionTaskTransactionMetrics) {
        guard let fetchStart = transaction.fetchStartDate else { return nil }
        func offset(_ date: Date?) -> TimeInterval? {
            date.map { max(0, $0.timeIntervalSince(fetchStart)) }
        }
        let status = (transaction.response as? HTTPURLResponse)?.statusCode
        let request = transaction.request
        self.init(
            method: (request.httpMethod ?? "GET").uppercased(),
            url: Redactor.url(transaction.response?.url ?? request.url), statusCode: status,
            fetchStart: fetchStart, domainLookupEnd: offset(transaction.domainLookupEndDate),
            connectEnd: offset(transaction.connectEndDate),
            secureConnectionEnd: offset(transaction.secureConnectionEndDate),
            requestStart: offset(transaction.requestStartDate), requestEnd: offset(transaction.requestEndDate),
            responseStart: offset(transaction.responseStartDate), responseEnd: offset(transaction.responseEndDate),
            requestHeaderBytes: transaction.countOfRequestHeaderBytesSent,
            requestBodyBytes: transaction.countOfRequestBodyBytesSent,
            responseHeaderBytes: transaction.countOfResponseHeaderBytesReceived,
            responseBodyWireBytes: transaction.countOfResponseBodyBytesReceived,
            responseBodyDecodedBytes: transaction.countOfResponseBodyBytesAfterDecoding,
            networkProtocol: transaction.networkProtocolName,
            isReusedConnection: transaction.isReusedConnection,
            remoteAddress: transaction.remoteAddress, remotePort: Self.port(transaction.remotePort),
            source: .urlSessionTaskMetrics)
    }

    /// Apple's `remotePort` is an `Int?`.
    private static func port(_ port: Int?) -> Int? { port }

    /// corelibs declares `remotePort` as a `String?`.
    private static func port(_ port: String?) -> Int? { port.flatMap { Int($0) } }
}
