// swift-tools-version: 6.0
// The Apple type-check (see Docs/ARCHITECTURE.md, "The Apple type-check"): compiles the
// GentleNetworking and YNetwork sources on Linux with their Apple branches taken, against
// declaration-only stand-ins for what Linux lacks (`Security`, and the Foundation members
// corelibs leaves out). Never shipped, never run: `scripts/apple-typecheck` builds it.
import PackageDescription

/// Swift 6 mode (complete strict concurrency) and warnings as errors, for every target.
let strict: [SwiftSetting] = [.unsafeFlags(["-warnings-as-errors"])]

/// The checked sources take their Apple branches: `canImport(Security)` is true because the
/// stand-in module exists, `canImport(CCurl)` is false because no such module is built here,
/// and `GENTLE_APPLE_TYPECHECK` selects the Darwin side of `canImport(Darwin)` conditions
/// (Darwin itself, libc, cannot be stood in for). The Foundation additions are imported
/// into every file implicitly, as Apple's Foundation declares them.
let checked: [SwiftSetting] =
    strict + [
        .define("GENTLE_APPLE_TYPECHECK"),
        .unsafeFlags(["-Xfrontend", "-import-module", "-Xfrontend", "AppleFoundationAdditions"]),
    ]

let package = Package(
    name: "AppleCheck",
    targets: [
        // Declarations only, from Apple's documentation: CoreFoundation's types and the
        // Security framework functions and constants our sources use.
        .target(name: "Security", swiftSettings: strict),
        // Declarations only: Foundation members Apple documents and corelibs lacks or marks
        // unavailable (server trust, background sessions).
        .target(name: "AppleFoundationAdditions", dependencies: ["Security"], swiftSettings: strict),
        // Symbolic links to ../Sources: the library's own files, unchanged.
        .target(
            name: "GentleNetworking",
            dependencies: ["Security", "AppleFoundationAdditions"],
            exclude: ["GentleNetworking.docc", "Transport/Curl"],
            swiftSettings: checked
        ),
        .target(
            name: "YNetwork",
            dependencies: ["GentleNetworking", "AppleFoundationAdditions"],
            swiftSettings: checked
        ),
        .target(
            name: "JustNetworking",
            dependencies: ["GentleNetworking", "AppleFoundationAdditions"],
            swiftSettings: checked
        ),
        // Client code in the seeds' Apple-only shapes (a `SecTrust` evaluator), which must keep
        // compiling against our library.
        .target(
            name: "SeedStyleClients",
            dependencies: ["GentleNetworking", "Security", "AppleFoundationAdditions"],
            swiftSettings: checked
        ),
    ],
    swiftLanguageModes: [.v6]
)
