// Stand-ins for the Security framework's certificate, policy and trust API, as Apple documents
// it (developer.apple.com/documentation/security). Declarations only, for the Apple
// type-check (AppleCheck/Package.swift): no body ever runs.
//
// Availability is written as Apple documents it; Linux ignores platform availability, so a
// symbol deprecated at or before our deployment targets (macOS 12, iOS 15, tvOS 15, watchOS 8)
// also carries an unconditional deprecation, which the check's warnings-as-errors turns into a
// failure, as Xcode would warn. Only what our sources use (or must not use) is declared.
// Every function is `@discardableResult`, as Swift imports every C function on Apple platforms:
// an ignored `OSStatus` compiles there without a warning, so it must here too (our code checks
// each status by choice, not because the compiler asks).

/// A trust management object: a certificate chain and the policies to evaluate it with.
public final class SecTrust {
    private init() {}
}

/// An X.509 certificate.
public final class SecCertificate {
    private init() {}
}

/// A trust policy (SSL server, basic X.509, …).
public final class SecPolicy {
    private init() {}
}

/// Creates a certificate object from a DER representation; `nil` if `data` is not a valid
/// DER-encoded X.509 certificate.
@available(iOS 2.0, macOS 10.6, tvOS 9.0, watchOS 2.0, visionOS 1.0, *)
@discardableResult
public func SecCertificateCreateWithData(_ allocator: CFAllocator?, _ data: CFData) -> SecCertificate? {
    fatalError("declaration only")
}

/// The DER representation of a certificate.
@available(iOS 2.0, macOS 10.6, tvOS 9.0, watchOS 2.0, visionOS 1.0, *)
@discardableResult
public func SecCertificateCopyData(_ certificate: SecCertificate) -> CFData {
    fatalError("declaration only")
}

/// A policy for evaluating SSL certificate chains; with `hostname`, the leaf must match it.
@available(iOS 2.0, macOS 10.6, tvOS 9.0, watchOS 2.0, visionOS 1.0, *)
@discardableResult
public func SecPolicyCreateSSL(_ server: Bool, _ hostname: CFString?) -> SecPolicy {
    fatalError("declaration only")
}

/// The default X.509 policy (no host name check).
@available(iOS 2.0, macOS 10.6, tvOS 9.0, watchOS 2.0, visionOS 1.0, *)
@discardableResult
public func SecPolicyCreateBasicX509() -> SecPolicy {
    fatalError("declaration only")
}

/// Sets the policies (one `SecPolicy` or an array of them) a trust object is evaluated with.
@available(iOS 6.0, macOS 10.3, tvOS 9.0, watchOS 2.0, visionOS 1.0, *)
@discardableResult
public func SecTrustSetPolicies(_ trust: SecTrust, _ policies: CFTypeRef) -> OSStatus {
    fatalError("declaration only")
}

/// Sets the anchor certificates a trust object is evaluated against.
@available(iOS 2.0, macOS 10.3, tvOS 9.0, watchOS 2.0, visionOS 1.0, *)
@discardableResult
public func SecTrustSetAnchorCertificates(_ trust: SecTrust, _ anchorCertificates: CFArray?) -> OSStatus {
    fatalError("declaration only")
}

/// With `true`, only the anchors set with `SecTrustSetAnchorCertificates` are trusted.
@available(iOS 2.0, macOS 10.6, tvOS 9.0, watchOS 2.0, visionOS 1.0, *)
@discardableResult
public func SecTrustSetAnchorCertificatesOnly(_ trust: SecTrust, _ anchorCertificatesOnly: Bool) -> OSStatus {
    fatalError("declaration only")
}

/// Evaluates trust; `true` if the certificate is trusted, otherwise `false` and `error` says why.
@available(iOS 12.0, macOS 10.14, tvOS 12.0, watchOS 5.0, visionOS 1.0, *)
@discardableResult
public func SecTrustEvaluateWithError(_ trust: SecTrust, _ error: UnsafeMutablePointer<CFError?>?) -> Bool {
    fatalError("declaration only")
}

/// The certificate chain of a trust object (leaf first), an array of `SecCertificate`.
@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
@discardableResult
public func SecTrustCopyCertificateChain(_ trust: SecTrust) -> CFArray? {
    fatalError("declaration only")
}

/// A certificate of the evaluated chain by index. Deprecated: use
/// `SecTrustCopyCertificateChain(_:)`.
@available(iOS, introduced: 2.0, deprecated: 15.0, message: "Use SecTrustCopyCertificateChain(_:)")
@available(macOS, introduced: 10.7, deprecated: 12.0, message: "Use SecTrustCopyCertificateChain(_:)")
@available(tvOS, introduced: 9.0, deprecated: 15.0, message: "Use SecTrustCopyCertificateChain(_:)")
@available(watchOS, introduced: 1.0, deprecated: 8.0, message: "Use SecTrustCopyCertificateChain(_:)")
@available(*, deprecated, message: "Deprecated at our deployment targets: use SecTrustCopyCertificateChain(_:)")
@discardableResult
public func SecTrustGetCertificateAtIndex(_ trust: SecTrust, _ ix: CFIndex) -> SecCertificate? {
    fatalError("declaration only")
}
