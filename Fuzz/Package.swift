// swift-tools-version: 6.1
import PackageDescription

/// libFuzzer target for BeaconCore's decoders and `beacond evaluate`'s trace reader. Build and run with `./run.sh`
/// (it passes `-sanitize=fuzzer,address -parse-as-library`: libFuzzer supplies `main`).
let package = Package(
    name: "BeaconFuzz",
    dependencies: [
        .package(name: "beacond", path: ".."),
    ],
    targets: [
        .executableTarget(
            name: "BeaconFuzz",
            dependencies: [
                .product(name: "BeaconCore", package: "beacond"),
                .product(name: "BeaconEvaluation", package: "beacond"),
            ]
        ),
    ]
)
