// Stand-ins for the Foundation members Apple documents and swift-corelibs-foundation lacks or
// marks unavailable, used by our Apple code. Declarations only, for the Apple type-check
// (AppleCheck/Package.swift): no body ever runs. The checked targets import this module into
// every file implicitly, as Apple's Foundation declares these members itself.
import Foundation
import Security

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The server-trust authentication method (corelibs marks its declaration unavailable).
@available(iOS 3.0, macOS 10.6, tvOS 9.0, watchOS 2.0, visionOS 1.0, *)
public var NSURLAuthenticationMethodServerTrust: String { fatalError("declaration only") }

extension URLProtectionSpace {
    /// The server's trust, for a server-trust challenge; `nil` otherwise.
    @available(iOS 3.0, macOS 10.6, tvOS 9.0, watchOS 2.0, visionOS 1.0, *)
    public var serverTrust: SecTrust? { fatalError("declaration only") }
}

extension URLCredential {
    /// A credential that accepts `trust` for a server-trust challenge.
    @available(iOS 3.0, macOS 10.6, tvOS 9.0, watchOS 2.0, visionOS 1.0, *)
    public convenience init(trust: SecTrust) { fatalError("declaration only") }
}

extension URLSessionConfiguration {
    /// A configuration whose upload and download tasks the system performs in a separate
    /// process, identified by `identifier` (not `nil`, not empty) across relaunches.
    @available(iOS 8.0, macOS 10.10, tvOS 9.0, watchOS 2.0, visionOS 1.0, *)
    public class func background(withIdentifier identifier: String) -> URLSessionConfiguration {
        fatalError("declaration only")
    }
}
