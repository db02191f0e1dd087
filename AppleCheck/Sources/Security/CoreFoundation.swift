// Stand-ins for the CoreFoundation types that Apple's Security framework re-exports and our
// Apple code names. Declarations only, for the Apple type-check (AppleCheck/Package.swift).
//
// On Apple platforms each of these is a distinct CF type, toll-free bridged to the Foundation
// class named here; `data as CFData`, `string as CFString`, `array as CFArray`,
// `dictionary as CFDictionary` and `cfArray as? [T]` are the documented bridging casts.
// corelibs Foundation has no CF types, so they are type aliases of those Foundation classes:
// every bridging cast type-checks as it does on Apple platforms. The one thing this is laxer
// about: an NSData method called on a CFData would type-check here and not on Apple platforms.
import Foundation

/// CoreFoundation's `CFTypeRef`: any CF object (`AnyObject` in Swift on Apple platforms).
public typealias CFTypeRef = AnyObject

/// CoreFoundation's `CFData`, toll-free bridged to `NSData`.
public typealias CFData = NSData

/// CoreFoundation's `CFString`, toll-free bridged to `NSString`.
public typealias CFString = NSString

/// CoreFoundation's `CFArray`, toll-free bridged to `NSArray`.
public typealias CFArray = NSArray

/// CoreFoundation's `CFDictionary`, toll-free bridged to `NSDictionary`.
public typealias CFDictionary = NSDictionary

/// CoreFoundation's `CFError`, toll-free bridged to `NSError` (and an `Error` in Swift).
public typealias CFError = NSError

/// CoreFoundation's `CFBoolean`, toll-free bridged to `NSNumber`.
public typealias CFBoolean = NSNumber

/// CoreFoundation's `CFIndex` (`Int` in Swift).
public typealias CFIndex = Int

/// CoreFoundation's `CFAllocator`; Security's create functions take `CFAllocator?` (`nil` for
/// the default allocator).
public final class CFAllocator {
    private init() {}
}

/// MacTypes' `OSStatus`: the result code of Security functions.
public typealias OSStatus = Int32
