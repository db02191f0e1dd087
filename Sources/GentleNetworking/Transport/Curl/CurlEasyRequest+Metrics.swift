#if canImport(CCurl)
    import CCurl
    import Foundation
    import FoundationNetworking

    extension CurlEasyRequest {
        /// The figures libcurl kept for this transfer. Call on the event-loop thread when the
        /// transfer has ended and before the handle goes back to the pool.
        ///
        /// libcurl's times are microseconds from the transfer's start, cumulative (lookup ≤
        /// connect ≤ TLS ≤ request start ≤ first byte ≤ total); a phase it did not go through is
        /// 0 and is reported as `nil`, as are the lookup, connect and TLS of a reused connection.
        /// libcurl 7.88 has no "request sent completely" time, so ``TransactionMetrics/requestEnd``
        /// is `nil`.
        func transactionMetrics(fetchStart: Date, statusCode: Int?, decodedBodyBytes: Int64) -> TransactionMetrics {
            func offset(_ info: CURLINFO) -> TimeInterval? {
                var value: curl_off_t = 0
                guard gn_easy_getinfo_offset(handle, info, &value) == CURLE_OK, value > 0 else { return nil }
                return TimeInterval(value) / 1_000_000
            }
            func count(_ info: CURLINFO) -> Int64? {
                var value: curl_off_t = 0
                guard gn_easy_getinfo_offset(handle, info, &value) == CURLE_OK, value >= 0 else { return nil }
                return Int64(value)
            }
            func long(_ info: CURLINFO) -> Int? {
                var value = 0
                guard gn_easy_getinfo_long(handle, info, &value) == CURLE_OK else { return nil }
                return value
            }
            let reused = long(CURLINFO_NUM_CONNECTS).map { $0 == 0 }
            let fresh = reused == false
            var address: UnsafeMutablePointer<CChar>?
            let remoteAddress =
                gn_easy_getinfo_string(handle, CURLINFO_PRIMARY_IP, &address) == CURLE_OK
                ? address.map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } : nil
            let port = long(CURLINFO_PRIMARY_PORT).flatMap { $0 > 0 ? $0 : nil }
            let bodySent = count(CURLINFO_SIZE_UPLOAD_T)
            // libcurl's request size counts the bytes it sent in the request buffer: the line and
            // headers, plus an in-memory body (`COPYPOSTFIELDS`) that it sends along with them,
            // which libcurl 7.88 does for bodies under 64 KiB. A body read from a file, or a larger
            // one, goes out separately and is not counted there.
            let requestBuffer = long(CURLINFO_REQUEST_SIZE).map { Int64($0) }
            let inlineBody: Int64
            if case .request = source, let body = request.httpBody, !body.isEmpty, body.count < 65_536,
                let requestBuffer, requestBuffer > Int64(body.count)
            {
                inlineBody = Int64(body.count)
            } else {
                inlineBody = 0
            }
            return TransactionMetrics(
                method: method, url: Redactor.url(url), statusCode: statusCode, fetchStart: fetchStart,
                domainLookupEnd: fresh ? offset(CURLINFO_NAMELOOKUP_TIME_T) : nil,
                connectEnd: fresh ? offset(CURLINFO_CONNECT_TIME_T) : nil,
                secureConnectionEnd: fresh ? offset(CURLINFO_APPCONNECT_TIME_T) : nil,
                requestStart: offset(CURLINFO_PRETRANSFER_TIME_T), requestEnd: nil,
                responseStart: statusCode == nil ? nil : offset(CURLINFO_STARTTRANSFER_TIME_T),
                responseEnd: offset(CURLINFO_TOTAL_TIME_T),
                requestHeaderBytes: requestBuffer.map { $0 - inlineBody }, requestBodyBytes: bodySent,
                responseHeaderBytes: statusCode == nil ? nil : long(CURLINFO_HEADER_SIZE).map { Int64($0) },
                responseBodyWireBytes: statusCode == nil ? nil : count(CURLINFO_SIZE_DOWNLOAD_T),
                responseBodyDecodedBytes: statusCode == nil ? nil : decodedBodyBytes,
                networkProtocol: long(CURLINFO_HTTP_VERSION).flatMap(Self.protocolName),
                isReusedConnection: reused, remoteAddress: remoteAddress, remotePort: port, source: .libcurl)
        }

        /// The ALPN name of a `CURLINFO_HTTP_VERSION` value; `nil` for 0 (no response).
        static func protocolName(_ version: Int) -> String? {
            switch version {
            case Int(CURL_HTTP_VERSION_1_0): return "http/1.0"
            case Int(CURL_HTTP_VERSION_1_1): return "http/1.1"
            case Int(CURL_HTTP_VERSION_2_0): return "h2"
            case Int(CURL_HTTP_VERSION_3): return "h3"
            default: return nil
            }
        }
    }
#endif
