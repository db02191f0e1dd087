#if canImport(CCurl)
    import CCurl
    import Foundation

    /// How libcurl validates one host's TLS certificate: built by ``PinningTransport`` from its
    /// evaluators, enforced by libcurl during the handshake, before any request byte is sent.
    struct CurlTrustSettings: Sendable {
        /// SHA-256 hashes of acceptable SubjectPublicKeyInfo (the leaf's key must be one).
        var pinnedKeyHashes: [Data] = []
        /// PEM trust anchors that replace the system roots, when set.
        var trustAnchorsPEM: Data?
        /// Whether the chain must validate (against the system roots, or `trustAnchorsPEM`).
        var verifyPeer = true
        /// Whether the certificate must name the host.
        var verifyHost = true

        func apply(to handle: UnsafeMutableRawPointer, check: (CURLcode, String) throws -> Void) throws {
            try check(gn_easy_setopt_long(handle, CURLOPT_SSL_VERIFYPEER, verifyPeer ? 1 : 0), "SSL_VERIFYPEER")
            try check(gn_easy_setopt_long(handle, CURLOPT_SSL_VERIFYHOST, verifyHost ? 2 : 0), "SSL_VERIFYHOST")
            if var anchors = trustAnchorsPEM {
                try anchors.withUnsafeMutableBytes { raw in
                    guard let base = raw.baseAddress else { return }
                    try check(gn_easy_setopt_blob(handle, CURLOPT_CAINFO_BLOB, base, raw.count), "CAINFO_BLOB")
                }
                // The blob replaces libcurl's CA file only: its CA directory (Debian's libcurl is
                // built with `/etc/ssl/certs`) was still searched, so any certificate a system
                // root issued, for any host, passed as if pinned. No directory, no file: the
                // anchors are the only ones.
                try check(gn_easy_setopt_string(handle, CURLOPT_CAPATH, nil), "CAPATH")
                try check(gn_easy_setopt_string(handle, CURLOPT_CAINFO, nil), "CAINFO")
            }
            if !pinnedKeyHashes.isEmpty {
                let pins = pinnedKeyHashes.map { "sha256//" + $0.base64EncodedString() }.joined(separator: ";")
                try check(gn_easy_setopt_string(handle, CURLOPT_PINNEDPUBLICKEY, pins), "PINNEDPUBLICKEY")
            }
        }
    }
#endif
