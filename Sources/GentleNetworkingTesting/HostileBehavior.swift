import Foundation

/// How a ``HostileServer`` answers a request: a well-formed response, or one of the ways a
/// broken or malicious server misbehaves.
///
/// Every behaviour first reads the whole request (head and body). Behaviours that never end
/// (``endlessBody(chunked:)``, ``endlessHeaders``, ``acceptAndHang``, ``rawThenHold(_:)``) stop
/// when the client closes the connection (the server notices within about 25 ms) or the server
/// shuts down. Unless a case says it keeps the connection, the server closes it after answering.
public enum HostileBehavior: Sendable {
    /// `200 OK` with `body`, `Content-Length` and the extra `headers`, in order. Well formed: the
    /// connection stays open for the next request unless the client asked to close it. A `HEAD`
    /// request gets the head only.
    case ok(body: Data = Data(), headers: [(String, String)] = [])

    /// Any status with `body`, `Content-Length` and the extra `headers` (such as a `503` with
    /// `Retry-After`). Well formed, like ``ok(body:headers:)``.
    case status(_ code: Int, body: Data = Data(), headers: [(String, String)] = [])

    /// A redirect with `Location: location` and an empty body. Well formed.
    case redirect(status: Int = 302, location: String)

    /// An authentication challenge: `status` with `WWW-Authenticate: scheme` (or
    /// `Proxy-Authenticate` when `status` is 407) and `body`. Well formed.
    case challenge(scheme: String = "Basic realm=\"x\"", status: Int = 401, body: Data = Data())

    /// `status` (`200` by default) with no length, then the body `[0,0,0,…` in 64 KiB writes
    /// forever. With `chunked: false` it is framed by connection close (`Connection: close`); with
    /// `chunked: true` by `Transfer-Encoding: chunked`, one 64 KiB chunk (`10000`) a write, no
    /// last chunk.
    case endlessBody(chunked: Bool, status: Int = 200)

    /// `200` with `Content-Encoding: encoding` whose body inflates to `decodedBytes` zero bytes
    /// (about 159 times its compressed size), generated while it is sent, never held in memory.
    ///
    /// `encoding` `"deflate"` sends a zlib stream (RFC 1950); anything else (`"gzip"` by default)
    /// sends gzip bytes labelled with that name. The trailer (CRC-32 and length, or Adler-32) is
    /// correct for any size. With `declareLength` the exact compressed `Content-Length` is sent
    /// and the connection may be reused; without (the default) the body ends at connection close.
    case compressionBomb(decodedBytes: Int64, encoding: String = "gzip", declareLength: Bool = false)

    /// The head at once, then `body` one byte at a time, waiting `interval` before each byte.
    /// With `declareLength` (the default) the head has `Content-Length` and the connection may be
    /// reused; without, the body ends at connection close.
    case drip(status: Int = 200, body: Data, interval: TimeInterval, declareLength: Bool = true)

    /// The status line and headers of `200`, `Content-Length: 2`, one byte at a time with
    /// `interval` between bytes, then the body `ok` at once. The connection may be reused.
    case dripHeaders(interval: TimeInterval)

    /// Exactly `bytes`, nothing added: for malformed status lines, bad chunk sizes,
    /// `Transfer-Encoding` with `Content-Length` and the like. With `thenClose` (the default) the
    /// connection is closed afterwards; without, the server reads the next request on it.
    case raw(Data, thenClose: Bool = true)

    /// Exactly `bytes`, then the connection stays open and silent until the client closes it.
    case rawThenHold(Data)

    /// `200` with `count` headers `X-Flood-1` … `X-Flood-<count>`, each a value of `valueLength`
    /// `a`s, then `Content-Length: 2` and the body `ok`. The head is streamed, never built whole.
    case headerFlood(count: Int, valueLength: Int)

    /// `HTTP/1.1 200 OK` then header lines `X-Endless-<n>: aaa…` (100 `a`s) forever; the head
    /// never ends.
    case endlessHeaders

    /// Reads the request and never answers.
    case acceptAndHang

    /// Reads the request, then resets the connection (TCP RST) before sending anything.
    case resetBeforeHeaders

    /// `200` with `Content-Length: bodyLength`, the first half of the body (`x`s), a 50 ms
    /// pause, then a TCP RST. A negative `bodyLength` counts as 0. The body is streamed in
    /// 64 KiB writes, never built whole, so any length (even `Int.max`) is fine; it stops early
    /// when the client goes away.
    case resetMidBody(bodyLength: Int)

    /// `200` with `Content-Length: declared` (written as given, even when negative), then exactly
    /// `sent` bytes of body (`x`s; none when `sent` is 0 or less) and an orderly close. The body
    /// is streamed in 64 KiB writes, never built whole, so any `sent` (even `Int.max`) is fine;
    /// it stops early when the client goes away.
    case truncatedBody(declared: Int, sent: Int)

    /// `200` with two headers `Content-Length: first` and `Content-Length: second`, then `body`,
    /// then close.
    case conflictingContentLength(first: Int, second: Int, body: Data)

    /// `200` with the single header `Content-Length: <value>`, `value` verbatim (such as
    /// `"27, 47"`), then `body`, then close.
    case contentLengthList(_ value: String, body: Data = Data())

    /// Answers the route's first request with the first behaviour, the second with the second,
    /// and so on, repeating the last one: such as `[.challenge(), .ok(body: …)]`. The count is
    /// kept per route, across connections; a nested sequence is indexed by the same count. An
    /// empty sequence answers `500`.
    case sequence([HostileBehavior])
}
