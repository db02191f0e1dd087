#if canImport(CCurl)
    import CCurl
    import Foundation
    import FoundationNetworking

    /// One request on one libcurl easy handle: configures the handle, collects the response
    /// through libcurl's callbacks, and resumes its caller exactly once.
    ///
    /// Callbacks run on the event-loop thread; `cancel` may run on any thread.
    final class CurlEasyRequest: @unchecked Sendable {
        // @unchecked: `head` and `body` are written only by libcurl callbacks on the event-loop
        // thread and read there in `finish`; `completion` is guarded by its lock.
        let handle: UnsafeMutableRawPointer
        let request: URLRequest
        private let pool: CurlHandlePool
        private var headerList: UnsafeMutablePointer<curl_slist>?
        private var head = ResponseHead()
        private var body = Data()
        private let sink: Sink
        private let source: Source
        private let progress: (@Sendable (TransferProgress) -> Void)?
        private var lastProgress: TransferProgress?
        private var headDelivered = false
        private var sinkFailure: (any Error)?

        /// Where the response body goes.
        enum Sink {
            /// Collected in memory and returned.
            case memory
            /// Written to an open file descriptor as it arrives (constant memory); the request
            /// closes it in `cleanup`.
            case file(Int32)
            /// Handed to a stream consumer, with backpressure; the caller resumes at the head.
            case stream(CurlStreamBuffer)
        }

        /// Where the request body comes from.
        enum Source {
            /// `request.httpBody`, if any.
            case request
            /// Read from an open file descriptor, of a known size; the request closes it in `cleanup`.
            case file(Int32, size: Int64)
        }
        private let completion = Locked<CheckedContinuation<(Data, ResponseHead), any Error>?>(nil)
        private let cancelled = Locked(false)

        struct ResponseHead: Sendable {
            var statusCode = 0
            var httpVersion = "HTTP/1.1"
            var headers: [(String, String)] = []
        }

        /// Creates and configures the easy handle for `request`.
        init(
            request: URLRequest, configuration: CurlTransport.Configuration, trust: CurlTrustSettings?,
            pool: CurlHandlePool, sink: Sink = .memory, source: Source = .request,
            progress: (@Sendable (TransferProgress) -> Void)? = nil
        ) throws {
            // Every hop is checked (a redirect's target too); headers are checked in `configure`.
            guard let url = request.url else {
                Self.release(sink: sink, source: source)
                throw TransportError(.invalidRequest, url: nil, message: "The request has no URL.")
            }
            do throws(TransportError) {
                try RequestValidator.validateURL(url)
            } catch {
                Self.release(sink: sink, source: source)
                throw error
            }
            guard let handle = pool.take() else {
                Self.release(sink: sink, source: source)
                throw TransportError(.other, url: url, message: "libcurl could not create a handle.")
            }
            self.handle = handle
            self.pool = pool
            self.request = request
            self.sink = sink
            self.source = source
            self.progress = progress
            do {
                try configure(url: url, configuration: configuration, trust: trust)
            } catch {
                cleanup()
                throw error
            }
        }

        private func configure(url: URL, configuration: CurlTransport.Configuration, trust: CurlTrustSettings?) throws {
            func check(_ code: CURLcode, _ what: String) throws {
                guard code == CURLE_OK else {
                    throw TransportError(
                        .other, url: url,
                        message: "libcurl rejected \(what): \(String(cString: curl_easy_strerror(code)))")
                }
            }
            try check(gn_easy_setopt_string(handle, CURLOPT_URL, url.absoluteString), "the URL")
            try check(gn_easy_setopt_long(handle, CURLOPT_NOSIGNAL, 1), "NOSIGNAL")
            try check(gn_easy_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0), "FOLLOWLOCATION")
            // Only HTTP(S), whatever the URL or a redirect says (redirects are followed by us,
            // and checked again, but libcurl is restricted too).
            try check(gn_easy_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https"), "PROTOCOLS_STR")
            try check(gn_easy_setopt_string(handle, CURLOPT_REDIR_PROTOCOLS_STR, "http,https"), "REDIR_PROTOCOLS_STR")
            try check(gn_easy_setopt_string(handle, CURLOPT_ACCEPT_ENCODING, ""), "ACCEPT_ENCODING")
            try check(gn_easy_setopt_long(handle, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS)), "HTTP/2")
            try check(gn_easy_setopt_long(handle, CURLOPT_TCP_KEEPALIVE, 1), "TCP_KEEPALIVE")
            let timeout = request.timeoutInterval > 0 ? request.timeoutInterval : configuration.connectTimeout
            let connectTimeout = min(configuration.connectTimeout, timeout)
            try check(
                gn_easy_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, Int(max(1, connectTimeout * 1000))),
                "CONNECTTIMEOUT")
            if let total = configuration.totalTimeout, total > 0 {
                try check(gn_easy_setopt_long(handle, CURLOPT_TIMEOUT_MS, Int(total * 1000)), "TIMEOUT")
            }
            // URLRequest.timeoutInterval is an idle timeout: fail when no byte arrives for that long.
            try check(gn_easy_setopt_long(handle, CURLOPT_LOW_SPEED_LIMIT, 1), "LOW_SPEED_LIMIT")
            try check(
                gn_easy_setopt_long(handle, CURLOPT_LOW_SPEED_TIME, Int(max(1, timeout.rounded(.up)))), "LOW_SPEED_TIME"
            )

            let method = (request.httpMethod ?? "GET").uppercased()
            switch source {
            case .file(_, let size):
                if method == "POST" {
                    try check(gn_easy_setopt_long(handle, CURLOPT_POST, 1), "POST")
                    try check(gn_easy_setopt_offset(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(size)), "body size")
                } else {
                    try check(gn_easy_setopt_long(handle, CURLOPT_UPLOAD, 1), "UPLOAD")
                    try check(gn_easy_setopt_offset(handle, CURLOPT_INFILESIZE_LARGE, curl_off_t(size)), "body size")
                    try check(gn_easy_setopt_string(handle, CURLOPT_CUSTOMREQUEST, method), "the method")
                }
                try check(gn_easy_setopt_data_callback(handle, CURLOPT_READFUNCTION, curlReadCallback), "READFUNCTION")
                try check(
                    gn_easy_setopt_pointer(handle, CURLOPT_READDATA, Unmanaged.passUnretained(self).toOpaque()),
                    "READDATA")
            case .request:
                let body = request.httpBody
                switch method {
                case "GET" where body == nil:
                    try check(gn_easy_setopt_long(handle, CURLOPT_HTTPGET, 1), "GET")
                case "HEAD":
                    try check(gn_easy_setopt_long(handle, CURLOPT_NOBODY, 1), "HEAD")
                default:
                    if method != "POST" {
                        try check(gn_easy_setopt_string(handle, CURLOPT_CUSTOMREQUEST, method), "the method")
                    }
                }
                if method != "HEAD", let body = body ?? (method == "POST" ? Data() : nil) {
                    try check(
                        gn_easy_setopt_offset(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count)), "body size")
                    try body.withUnsafeBytes { raw in
                        if let base = raw.baseAddress, !raw.isEmpty {
                            try check(
                                gn_easy_setopt_pointer(
                                    handle, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: base)),
                                "the body")
                        } else {
                            try check(gn_easy_setopt_string(handle, CURLOPT_COPYPOSTFIELDS, ""), "the empty body")
                        }
                    }
                }
            }
            if progress != nil {
                try check(gn_easy_setopt_long(handle, CURLOPT_NOPROGRESS, 0), "NOPROGRESS")
                try check(gn_easy_setopt_progress_callback(handle, curlProgressCallback), "XFERINFOFUNCTION")
                try check(
                    gn_easy_setopt_pointer(handle, CURLOPT_XFERINFODATA, Unmanaged.passUnretained(self).toOpaque()),
                    "XFERINFODATA")
            }

            let fields = request.allHTTPHeaderFields ?? [:]
            var headers: [String] = []
            headers.reserveCapacity(fields.count + 3)
            var hasContentType = false
            var hasUserAgent = false
            for (name, value) in fields.sorted(by: { $0.key < $1.key }) {
                try RequestValidator.validateHeader(name: name, value: value, url: url)
                switch name.lowercased() {
                case "accept-encoding":
                    try check(gn_easy_setopt_string(handle, CURLOPT_ACCEPT_ENCODING, value), "Accept-Encoding")
                    continue
                case "content-type": hasContentType = true
                case "user-agent": hasUserAgent = true
                default: break
                }
                headers.append(value.isEmpty ? "\(name);" : "\(name): \(value)")
            }
            headers.append("Expect:")  // no 100-continue round trip
            if !hasContentType { headers.append("Content-Type:") }  // no form-urlencoded default
            if !hasUserAgent { headers.append("User-Agent: \(CurlTransport.userAgent)") }
            for line in headers {
                guard let appended = curl_slist_append(headerList, line) else {
                    throw TransportError(.other, url: url, message: "libcurl could not store a header.")
                }
                headerList = appended
            }
            try check(gn_easy_setopt_slist(handle, CURLOPT_HTTPHEADER, headerList), "the headers")

            let context = Unmanaged.passUnretained(self).toOpaque()
            try check(gn_easy_setopt_data_callback(handle, CURLOPT_WRITEFUNCTION, curlWriteCallback), "WRITEFUNCTION")
            try check(gn_easy_setopt_pointer(handle, CURLOPT_WRITEDATA, context), "WRITEDATA")
            try check(
                gn_easy_setopt_data_callback(handle, CURLOPT_HEADERFUNCTION, curlHeaderCallback), "HEADERFUNCTION")
            try check(gn_easy_setopt_pointer(handle, CURLOPT_HEADERDATA, context), "HEADERDATA")
            if let trust {
                try trust.apply(to: handle, check: check)
            }
        }

        /// Registers the caller waiting for this request.
        func setContinuation(_ continuation: CheckedContinuation<(Data, ResponseHead), any Error>) {
            completion.withLock { $0 = continuation }
        }

        /// Closes the file descriptors of `sink` and `source`, for a request that will never own them.
        static func release(sink: Sink, source: Source) {
            if case .file(let descriptor) = sink { close(descriptor) }
            if case .file(let descriptor, _) = source { close(descriptor) }
        }

        /// Marks the request cancelled and resumes its caller with `CancellationError` at once.
        func cancel() {
            cancelled.withLock { $0 = true }
            resume(.failure(CancellationError()))
        }

        var isCancelled: Bool { cancelled.current }

        /// Resumes the caller, if it has not been resumed yet.
        func resume(_ result: Result<(Data, ResponseHead), any Error>) {
            let continuation = completion.withLock {
                value -> CheckedContinuation<(Data, ResponseHead), any Error>? in
                defer { value = nil }
                return value
            }
            continuation?.resume(with: result)
        }

        // MARK: Callbacks (event-loop thread)

        /// Takes body bytes; returns how many were taken, or `CURL_WRITEFUNC_PAUSE`.
        func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Int {
            switch sink {
            case .memory:
                body.append(contentsOf: bytes)
            case .file(let descriptor):
                guard let base = bytes.baseAddress else { return bytes.count }
                var offset = 0
                while offset < bytes.count {
                    let written = write(descriptor, base + offset, bytes.count - offset)
                    if written < 0 {
                        if errno == EINTR { continue }
                        sinkFailure = TransportError(
                            .other, url: request.url, message: "Writing the download failed: errno \(errno).")
                        return 0
                    }
                    offset += written
                }
            case .stream(let buffer):
                if !deliverHead() { return 0 }
                if !buffer.offer(Data(bytes)) { return Int(CURL_WRITEFUNC_PAUSE) }
            }
            return bytes.count
        }

        /// Parses one raw header line (status line, field, or the blank line ending the head).
        func receiveHeaderLine(_ bytes: UnsafeRawBufferPointer) {
            var end = bytes.count
            while end > 0, bytes[end - 1] == 0x0A || bytes[end - 1] == 0x0D || bytes[end - 1] == 0x20 { end -= 1 }
            if end == 0 {
                if head.statusCode >= 200, case .stream = sink { _ = deliverHead() }
                return
            }
            let line = UnsafeRawBufferPointer(rebasing: bytes[0..<end])
            if end > 5, line[0] == UInt8(ascii: "H"), line[1] == UInt8(ascii: "T"), line[2] == UInt8(ascii: "T"),
                line[3] == UInt8(ascii: "P"), line[4] == UInt8(ascii: "/")
            {
                // A new status line starts a new head (after 1xx interim responses).
                // "HTTP/1.1 200 OK": the version, then three digits (scanned as bytes: this runs per response).
                head = ResponseHead()
                let space = line.firstIndex(of: 0x20) ?? end
                head.httpVersion = String(decoding: UnsafeRawBufferPointer(rebasing: line[0..<space]), as: UTF8.self)
                var code = 0
                var digits = 0
                var index = space + 1
                while index < end, digits < 4, (0x30...0x39).contains(line[index]) {
                    code = code * 10 + Int(line[index] - 0x30)
                    digits += 1
                    index += 1
                }
                head.statusCode = digits == 3 && (index == end || line[index] == 0x20) ? code : 0
                return
            }
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return }
            var valueStart = colon + 1
            while valueStart < end, line[valueStart] == 0x20 || line[valueStart] == 0x09 { valueStart += 1 }
            let name = String(decoding: UnsafeRawBufferPointer(rebasing: line[0..<colon]), as: UTF8.self)
            let value = String(decoding: UnsafeRawBufferPointer(rebasing: line[valueStart..<end]), as: UTF8.self)
            head.headers.append((name, value))
        }

        /// For streams: resumes the caller with the response head, once.
        private func deliverHead() -> Bool {
            if headDelivered { return true }
            headDelivered = true
            guard (100...999).contains(head.statusCode) else {
                resume(
                    .failure(
                        TransportError(.badResponse, url: request.url, message: "The server sent no valid status line.")
                    ))
                return false
            }
            resume(.success((Data(), head)))
            return true
        }

        func reportProgress(_ current: TransferProgress) {
            guard current != lastProgress else { return }
            lastProgress = current
            progress?(current)
        }

        func readBody(into buffer: UnsafeMutableRawPointer, capacity: Int) -> Int {
            guard case .file(let descriptor, _) = source else { return 0 }
            while true {
                let count = read(descriptor, buffer, capacity)
                if count < 0 && errno == EINTR { continue }
                return count < 0 ? Int(CURL_READFUNC_ABORT) : count
            }
        }

        /// The response for a parsed head, or `nil` for an invalid status line.
        static func makeResponse(url: URL?, head: ResponseHead) -> HTTPURLResponse? {
            var fields: [String: String] = Dictionary(minimumCapacity: head.headers.count)
            var spelling: [String: String] = Dictionary(minimumCapacity: head.headers.count)  // lowercased → first seen
            for (name, value) in head.headers {
                let key = name.lowercased()
                if let existing = spelling[key] {
                    fields[existing] = (fields[existing] ?? "") + ", " + value
                } else {
                    spelling[key] = name
                    fields[name] = value
                }
            }
            guard let url, (100...999).contains(head.statusCode) else { return nil }
            return HTTPURLResponse(
                url: url, statusCode: head.statusCode, httpVersion: head.httpVersion, headerFields: fields)
        }

        /// Called on the event-loop thread when libcurl is done with the transfer.
        func finish(_ code: CURLcode) {
            let failure: (any Error)? =
                code == CURLE_OK ? nil : sinkFailure ?? CurlTransport.error(for: code, url: request.url)
            if case .stream(let buffer) = sink {
                if let failure { resume(.failure(failure)) } else { _ = deliverHead() }
                buffer.finish(failure)
                return
            }
            if let failure {
                resume(.failure(failure))
                return
            }
            if let last = lastProgress {
                // Make the final callback report completion, whatever libcurl's last tick saw.
                let received = last.expectedBytesToReceive ?? last.bytesReceived
                let sent = last.expectedBytesToSend ?? last.bytesSent
                reportProgress(
                    TransferProgress(
                        bytesReceived: max(last.bytesReceived, received),
                        expectedBytesToReceive: last.expectedBytesToReceive,
                        bytesSent: max(last.bytesSent, sent), expectedBytesToSend: last.expectedBytesToSend))
            }
            // The HTTPURLResponse is built by the caller's task, not here: on Linux it costs more
            // than the transfer itself, and this thread serves every request of the transport.
            resume(.success((body, head)))
        }

        /// Fails the request (and its stream, if any) without libcurl: the loop is shutting down.
        func abandon(_ error: any Error) {
            resume(.failure(error))
            if case .stream(let buffer) = sink { buffer.finish(error) }
        }

        /// Frees the handle and header list. Call once, after libcurl is done with the handle.
        func cleanup() {
            pool.give(handle)
            // The request owns its file descriptors, so they are closed only once libcurl can no
            // longer call back into them.
            Self.release(sink: sink, source: source)
            if let headerList { curl_slist_free_all(headerList) }
            headerList = nil
        }
    }

    private let curlWriteCallback: gn_data_callback = { buffer, size, count, userdata in
        guard let userdata else { return 0 }
        let request = Unmanaged<CurlEasyRequest>.fromOpaque(userdata).takeUnretainedValue()
        let length = size * count
        if request.isCancelled { return 0 }  // aborts the transfer
        return request.receiveBody(UnsafeRawBufferPointer(start: buffer, count: length))
    }

    private let curlReadCallback: gn_data_callback = { buffer, size, count, userdata in
        guard let userdata, let buffer else { return Int(CURL_READFUNC_ABORT) }
        let request = Unmanaged<CurlEasyRequest>.fromOpaque(userdata).takeUnretainedValue()
        if request.isCancelled { return Int(CURL_READFUNC_ABORT) }
        return request.readBody(into: buffer, capacity: size * count)
    }

    private let curlProgressCallback: gn_progress_callback = {
        userdata, downloadTotal, downloaded, uploadTotal, uploaded in
        guard let userdata else { return 0 }
        let request = Unmanaged<CurlEasyRequest>.fromOpaque(userdata).takeUnretainedValue()
        if request.isCancelled { return 1 }
        request.reportProgress(
            TransferProgress(
                bytesReceived: Int64(downloaded),
                expectedBytesToReceive: downloadTotal > 0 ? Int64(downloadTotal) : nil,
                bytesSent: Int64(uploaded), expectedBytesToSend: uploadTotal > 0 ? Int64(uploadTotal) : nil))
        return 0
    }

    private let curlHeaderCallback: gn_data_callback = { buffer, size, count, userdata in
        guard let userdata, let buffer else { return 0 }
        let request = Unmanaged<CurlEasyRequest>.fromOpaque(userdata).takeUnretainedValue()
        let length = size * count
        request.receiveHeaderLine(UnsafeRawBufferPointer(start: buffer, count: length))
        return length
    }
#endif
