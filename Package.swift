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
        .executable(name: "gentle-demo", targets: ["gentle-demo"]),
    ],
    targets: [
        .target(name: "GentleNetworking"),
        .target(
            name: "GentleNetworkingTesting",
            dependencies: ["GentleNetworking"]
        ),
        .executableTarget(
            name: "gentle-demo",
            dependencies: ["GentleNetworking", "GentleNetworkingTesting"]
        ),
        .testTarget(
            name: "GentleNetworkingTests",
            dependencies: ["GentleNetworking", "GentleNetworkingTesting"]
        ),
        .testTarget(
            name: "GentleNetworkingTestingTests",
            dependencies: ["GentleNetworking", "GentleNetworkingTesting"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
