// Stand-ins for the Security framework's keychain item API (SecItem.h) and the result codes our
// sources compare against, as Apple documents them. Declarations only, for the Apple type-check
// (AppleCheck/Package.swift): no body ever runs. Apple imports the C constants as read-only
// globals; here they are computed globals, used the same way. Functions are
// `@discardableResult`, as imported C functions are (see SecTrust.swift).

/// Returns the keychain items that match `query`, or copies their attributes or data.
@available(iOS 2.0, macOS 10.6, tvOS 9.0, watchOS 2.0, visionOS 1.0, *)
@discardableResult
public func SecItemCopyMatching(_ query: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    fatalError("declaration only")
}

/// Adds an item to a keychain.
@available(iOS 2.0, macOS 10.6, tvOS 9.0, watchOS 2.0, visionOS 1.0, *)
@discardableResult
public func SecItemAdd(_ attributes: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    fatalError("declaration only")
}

/// Modifies the items that match `query`.
@available(iOS 2.0, macOS 10.6, tvOS 9.0, watchOS 2.0, visionOS 1.0, *)
@discardableResult
public func SecItemUpdate(_ query: CFDictionary, _ attributesToUpdate: CFDictionary) -> OSStatus {
    fatalError("declaration only")
}

/// Deletes the items that match `query`.
@available(iOS 2.0, macOS 10.6, tvOS 9.0, watchOS 2.0, visionOS 1.0, *)
@discardableResult
public func SecItemDelete(_ query: CFDictionary) -> OSStatus {
    fatalError("declaration only")
}

/// No error.
public var errSecSuccess: OSStatus { fatalError("declaration only") }
/// The specified item could not be found in the keychain.
public var errSecItemNotFound: OSStatus { fatalError("declaration only") }
/// The specified item already exists in the keychain.
public var errSecDuplicateItem: OSStatus { fatalError("declaration only") }

/// The key of an item's class.
@available(iOS 2.0, macOS 10.6, tvOS 9.0, watchOS 2.0, visionOS 1.0, *)
public var kSecClass: CFString { fatalError("declaration only") }
/// The generic password item class.
@available(iOS 2.0, macOS 10.6, tvOS 9.0, watchOS 2.0, visionOS 1.0, *)
public var kSecClassGenericPassword: CFString { fatalError("declaration only") }
/// The key of an item's service name.
@available(iOS 2.0, macOS 10.6, tvOS 9.0, watchOS 2.0, visionOS 1.0, *)
public var kSecAttrService: CFString { fatalError("declaration only") }
/// The key of an item's account name.
@available(iOS 2.0, macOS 10.6, tvOS 9.0, watchOS 2.0, visionOS 1.0, *)
public var kSecAttrAccount: CFString { fatalError("declaration only") }
/// The key of when an item's data can be read.
@available(iOS 4.0, macOS 10.9, tvOS 9.0, watchOS 2.0, visionOS 1.0, *)
public var kSecAttrAccessible: CFString { fatalError("declaration only") }
/// Readable after the first unlock following a restart; never migrated to another device.
@available(iOS 4.0, macOS 10.9, tvOS 9.0, watchOS 2.0, visionOS 1.0, *)
public var kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly: CFString { fatalError("declaration only") }
/// The key of whether a macOS keychain item behaves like an iOS one (the data protection
/// keychain); ignored on the other platforms.
@available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, *)
public var kSecUseDataProtectionKeychain: CFString { fatalError("declaration only") }
/// The key of whether to return an item's data.
@available(iOS 2.0, macOS 10.6, tvOS 9.0, watchOS 2.0, visionOS 1.0, *)
public var kSecReturnData: CFString { fatalError("declaration only") }
/// The key of an item's data.
@available(iOS 2.0, macOS 10.6, tvOS 9.0, watchOS 2.0, visionOS 1.0, *)
public var kSecValueData: CFString { fatalError("declaration only") }
/// The key of the most results to return.
@available(iOS 2.0, macOS 10.6, tvOS 9.0, watchOS 2.0, visionOS 1.0, *)
public var kSecMatchLimit: CFString { fatalError("declaration only") }
/// A match limit of one item.
@available(iOS 2.0, macOS 10.6, tvOS 9.0, watchOS 2.0, visionOS 1.0, *)
public var kSecMatchLimitOne: CFString { fatalError("declaration only") }
