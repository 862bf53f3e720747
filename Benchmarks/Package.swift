// swift-tools-version: 6.2
import PackageDescription

/// beacond's benchmarks (ordo-one/benchmark): decode and whole-pipeline
/// throughput, and memory per tracked beacon. Run with
/// `swift package --disable-sandbox benchmark` in this directory;
/// `swift run -c release write-capture FILE` writes their traffic as a
/// btsnoop capture for timing `beacond scan` beside `btmon -r`.
let package = Package(
    name: "BeaconBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "beacond", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.0", traits: ["MallocInterposer"]),
    ],
    targets: [
        .target(
            name: "BenchmarkInputs",
            dependencies: [.product(name: "BeaconCore", package: "beacond")]
        ),
        .executableTarget(name: "write-capture", dependencies: ["BenchmarkInputs"]),
        .executableTarget(
            name: "BeaconBenchmarks",
            dependencies: [
                "BenchmarkInputs",
                .product(name: "BeaconCore", package: "beacond"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/BeaconBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
