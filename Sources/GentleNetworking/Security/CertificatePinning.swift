import Foundation

/// Helpers that turn certificates into the values pins are made of, without CryptoKit.
///
/// A public-key pin is the SHA-256 of the certificate's DER-encoded SubjectPublicKeyInfo: the
/// same value as
/// `openssl x509 -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary`,
/// curl's `--pinnedpubkey sha256//…` and HPKP.
public enum CertificatePinning {
    /// Why a certificate could not be read.
    public enum Failure: Error, Sendable, Hashable {
        /// The text has no `-----BEGIN CERTIFICATE-----` block with valid base64.
        case invalidPEM
        /// The bytes are not a DER X.509 certificate this parser understands.
        case invalidCertificate(String)
    }

    /// The SHA-256 of the SubjectPublicKeyInfo of a DER certificate.
    public static func publicKeyHash(ofCertificateDER der: Data) throws(Failure) -> Data {
        SHA256Digest.hash(try subjectPublicKeyInfo(ofCertificateDER: der))
    }

    /// The SHA-256 of the SubjectPublicKeyInfo of the first certificate in PEM text.
    public static func publicKeyHash(ofCertificatePEM pem: String) throws(Failure) -> Data {
        guard let first = try certificatesDER(fromPEM: pem).first else { throw .invalidPEM }
        return try publicKeyHash(ofCertificateDER: first)
    }

    /// The DER bytes of every `CERTIFICATE` block in PEM text, in order.
    public static func certificatesDER(fromPEM pem: String) throws(Failure) -> [Data] {
        var certificates: [Data] = []
        var collecting: String?
        for rawLine in pem.split(whereSeparator: \.isNewline) {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line == "-----BEGIN CERTIFICATE-----" {
                collecting = ""
            } else if line == "-----END CERTIFICATE-----" {
                guard let body = collecting, let der = Data(base64Encoded: body) else { throw .invalidPEM }
                certificates.append(der)
                collecting = nil
            } else if collecting != nil {
                collecting? += line
            }
        }
        guard !certificates.isEmpty, collecting == nil else { throw .invalidPEM }
        return certificates
    }

    /// PEM text for DER certificates.
    public static func pem(fromDER certificates: [Data]) -> String {
        certificates.map { der in
            let base64 = der.base64EncodedString()
            var lines: [String] = []
            var index = base64.startIndex
            while index < base64.endIndex {
                let end = base64.index(index, offsetBy: 64, limitedBy: base64.endIndex) ?? base64.endIndex
                lines.append(String(base64[index..<end]))
                index = end
            }
            return "-----BEGIN CERTIFICATE-----\n" + lines.joined(separator: "\n") + "\n-----END CERTIFICATE-----\n"
        }.joined()
    }

    /// The DER SubjectPublicKeyInfo (tag, length and contents) of a DER X.509 certificate.
    public static func subjectPublicKeyInfo(ofCertificateDER der: Data) throws(Failure) -> Data {
        let bytes = [UInt8](der)
        let certificate = try element(in: bytes, at: 0, expecting: 0x30, "Certificate")
        let tbs = try element(in: bytes, at: certificate.contentStart, expecting: 0x30, "TBSCertificate")
        var cursor = tbs.contentStart
        if cursor < bytes.count, bytes[cursor] == 0xA0 {  // [0] EXPLICIT version
            cursor = try element(in: bytes, at: cursor, expecting: 0xA0, "version").end
        }
        for (tag, name) in [
            (UInt8(0x02), "serialNumber"), (0x30, "signature"), (0x30, "issuer"), (0x30, "validity"), (0x30, "subject"),
        ] {
            cursor = try element(in: bytes, at: cursor, expecting: tag, name).end
        }
        let spki = try element(in: bytes, at: cursor, expecting: 0x30, "subjectPublicKeyInfo")
        guard spki.end <= tbs.end else { throw .invalidCertificate("subjectPublicKeyInfo overruns the certificate") }
        return Data(bytes[spki.start..<spki.end])
    }

    private struct Element {
        let start: Int
        let contentStart: Int
        let end: Int
    }

    /// Reads one DER TLV at `offset`.
    private static func element(
        in bytes: [UInt8], at offset: Int, expecting tag: UInt8, _ name: String
    )
        throws(Failure) -> Element
    {
        guard offset + 2 <= bytes.count else { throw .invalidCertificate("\(name) is missing") }
        guard bytes[offset] == tag else {
            throw .invalidCertificate("\(name): expected tag \(tag), found \(bytes[offset])")
        }
        var length = Int(bytes[offset + 1])
        var contentStart = offset + 2
        if length & 0x80 != 0 {
            let count = length & 0x7F
            guard (1...4).contains(count), contentStart + count <= bytes.count else {
                throw .invalidCertificate("\(name) has an invalid length")
            }
            length = bytes[contentStart..<contentStart + count].reduce(0) { $0 << 8 | Int($1) }
            contentStart += count
        }
        // Compared as what is left: `contentStart + length` traps where `Int` is 32 bits
        // (arm64_32) for a four-byte length near 2^31.
        guard length >= 0, length <= bytes.count - contentStart else {
            throw .invalidCertificate("\(name) is truncated")
        }
        return Element(start: offset, contentStart: contentStart, end: contentStart + length)
    }
}
