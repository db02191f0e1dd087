// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "GentleNetworking",
    platforms: [
        .iOS(.v15),
        .macOS(.v12),
        .tvOS(.v15),
        .watchOS(.v8),
    ],
    products: [
        .library(name: "GentleNetworking", targets: ["GentleNetworking"]),
        .library(name: "GentleNetworkingTesting", targets: ["GentleNetworkingTesting"]),
        // The JustNetworking and Y-Network APIs, for users of those libraries, on our core.
        .library(name: "JustNetworking", targets: ["JustNetworking"]),
        .library(name: "YNetwork", targets: ["YNetwork"]),
        .executable(name: "gentle-demo", targets: ["gentle-demo"]),
        .executable(name: "gentle-bench", targets: ["gentle-bench"]),
    ],
    targets: [
        // libcurl, for CurlTransport on Linux (Debian: libcurl4-openssl-dev).
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        .target(
            name: "GentleNetworking",
            dependencies: [.target(name: "CCurl", condition: .when(platforms: [.linux]))]
        ),
        .target(
            name: "JustNetworking",
            dependencies: ["GentleNetworking"]
        ),
        .target(
            name: "YNetwork",
            dependencies: ["GentleNetworking"]
        ),
        .target(
            name: "GentleNetworkingTesting",
            dependencies: ["GentleNetworking"]
        ),
        .executableTarget(
            name: "gentle-demo",
            dependencies: ["GentleNetworking", "GentleNetworkingTesting"]
        ),
        // A child process for tests that measure peak memory against hostile servers.
        .executableTarget(
            name: "gentle-probe",
            dependencies: ["GentleNetworking", "YNetwork", "JustNetworking"]
        ),
        .executableTarget(
            name: "gentle-bench",
            dependencies: ["GentleNetworking", "GentleNetworkingTesting", "YNetwork"]
        ),
        .testTarget(
            name: "GentleNetworkingTests",
            // The compatibility modules for the fault table's rows through their APIs.
            dependencies: ["GentleNetworking", "GentleNetworkingTesting", "JustNetworking", "YNetwork"]
        ),
        .testTarget(
            name: "JustNetworkingTests",
            dependencies: ["JustNetworking", "GentleNetworking", "GentleNetworkingTesting"]
        ),
        .testTarget(
            name: "YNetworkTests",
            dependencies: ["YNetwork", "GentleNetworking", "GentleNetworkingTesting"]
        ),
        .testTarget(
            name: "GentleNetworkingTestingTests",
            dependencies: ["GentleNetworking", "GentleNetworkingTesting"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
