// swift-tools-version: 6.2
import PackageDescription

/// beacond: iBeacon scanning, region monitoring and ranging for Linux.
///
/// Layout, as swift-nio separates NIOCore from NIOPosix:
/// - `BeaconCore`: pure values and functions (frames, HCI events, recordings,
///   regions, ranging, venues). No I/O, no clock: time is passed in.
/// - `BeaconSimulation`: a seeded radio and a walking listener, pure as the core.
/// - `BeaconEvaluation`: beacond beside naive baselines, on scenarios and traces.
/// - `BeaconConfiguration`: `beacons.yaml` (libyaml), validated with file:line messages.
/// - `BeaconSources`: where advertisements come from (replay, simulate, hci, bluez).
/// - `BeaconThreads`: a POSIX thread for blocking work (the HCI socket, libmosquitto's loop), outside the pure core.
/// - `BeaconFiles`: a named file read whole and bounded (configurations, captures, traces, secrets).
/// - `BeaconService`: the service's main job: source → engine → log, state on disk.
/// - `BeacondAPI`: org.beacond declared once (names, types, keys, errors), pure; the reference is generated from it.
/// - `BeacondBus`: that declaration on the binding: dispatch, values to and from D-Bus, the introspection XML.
/// - `BeaconClient`: a Swift client of beacond: typed calls and async sequences.
/// - `DBus`: a general libdbus-1 binding (objects, properties, signals, client calls).
/// - `BeaconMQTT`: the MQTT publisher (topics, payloads, Home Assistant discovery, pure) on libmosquitto.
/// - `CBluetooth`, `CDBus`, `CLibYAML`, `CMosquitto`, `CSystemd`: BlueZ's libbluetooth, libdbus-1, libyaml, libmosquitto and libsystemd, linked for real.
/// - `beacond`, `beaconctl`: the service and its client.
let package = Package(
    name: "beacond",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "beacond", targets: ["beacond"]),
        .executable(name: "beaconctl", targets: ["beaconctl"]),
        .library(name: "BeaconCore", targets: ["BeaconCore"]),
        .library(name: "BeaconConfiguration", targets: ["BeaconConfiguration"]),
        .library(name: "BeaconSources", targets: ["BeaconSources"]),
        .library(name: "BeaconSimulation", targets: ["BeaconSimulation"]),
        .library(name: "BeaconEvaluation", targets: ["BeaconEvaluation"]),
        .library(name: "BeaconClient", targets: ["BeaconClient"]),
        .library(name: "BeacondAPI", targets: ["BeacondAPI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.6.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.0"),
    ],
    targets: [
        .target(name: "BeaconCore"),
        .target(name: "BeaconSimulation", dependencies: ["BeaconCore"]),
        .target(name: "BeaconEvaluation", dependencies: ["BeaconCore", "BeaconSimulation"]),
        .target(
            name: "BeaconConfiguration",
            dependencies: ["BeaconCore", "BeaconSimulation", "BeaconFiles", "CLibYAML"]
        ),
        .systemLibrary(
            name: "CLibYAML",
            pkgConfig: "yaml-0.1",
            providers: [.apt(["libyaml-dev"])]
        ),
        .systemLibrary(
            name: "CBluetooth",
            pkgConfig: "bluez",
            providers: [.apt(["libbluetooth-dev"])]
        ),
        .systemLibrary(
            name: "CDBus",
            pkgConfig: "dbus-1",
            providers: [.apt(["libdbus-1-dev"])]
        ),
        .systemLibrary(
            name: "CSystemd",
            pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]
        ),
        .systemLibrary(
            name: "CMosquitto",
            pkgConfig: "libmosquitto",
            providers: [.apt(["libmosquitto-dev"])]
        ),
        .target(
            name: "BeaconMQTT",
            dependencies: ["BeaconCore", "BeaconThreads", "BeaconFiles", "CMosquitto", .product(name: "Logging", package: "swift-log")]
        ),
        .target(
            name: "BeaconSources",
            dependencies: ["BeaconCore", "BeaconConfiguration", "BeaconSimulation", "BeaconThreads", "BeaconFiles", "CBluetooth", "DBus"]
        ),
        .target(name: "BeaconThreads"),
        .target(name: "BeaconFiles"),
        .target(name: "DBus", dependencies: ["BeaconThreads", "CDBus"]),
        .target(name: "BeacondAPI", dependencies: ["BeaconCore"]),
        .target(name: "BeacondBus", dependencies: ["BeacondAPI", "BeaconCore", "DBus"]),
        .target(name: "BeaconClient", dependencies: ["BeacondAPI", "BeacondBus", "BeaconCore", "DBus"]),
        .executableTarget(name: "generate-api", dependencies: ["BeacondAPI", "BeacondBus"]),
        // An example of BeaconClient, built with the package so the tests build and run it.
        .executableTarget(name: "kiosk-menu", dependencies: ["BeaconClient", "BeacondAPI"], path: "Examples/KioskMenu"),
        .target(
            name: "BeaconService",
            dependencies: [
                "BeaconCore", "BeaconConfiguration", "BeaconSources", "BeaconMQTT", "BeaconFiles", "DBus", "BeacondAPI", "BeacondBus",
                "CSystemd",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(
            name: "beacond",
            dependencies: [
                "BeaconCore", "BeaconConfiguration", "BeaconSources", "BeaconEvaluation", "BeaconSimulation",
                "BeaconService", "BeaconMQTT", "BeaconFiles", "DBus",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            // lld packs the relative relocations (DT_RELR, glibc 2.36+: bookworm): a
            // position-independent beacond otherwise carries 1 MB of them, all read at
            // every start and resident (docs/benchmarks.md, "Memory of the running service").
            linkerSettings: [.unsafeFlags(["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs"])]
        ),
        .executableTarget(
            name: "beaconctl",
            dependencies: [
                "BeaconClient", "BeacondAPI", "BeacondBus", "DBus",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(
            name: "BeaconCoreTests",
            dependencies: ["BeaconCore", "BeaconTestSupport", .product(name: "PropertyBased", package: "swift-property-based")]
        ),
        .testTarget(
            name: "BeaconConfigurationTests",
            dependencies: ["BeaconConfiguration", "BeaconCore", "BeaconSimulation"]
        ),
        .target(name: "BeaconTestSupport", path: "Tests/Support"),
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "BeaconCore", "BeaconSources", "BeaconTestSupport", "BeacondAPI", "BeacondBus", "BeaconClient", "BeaconService",
                .product(name: "Logging", package: "swift-log"), .product(name: "InMemoryLogging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "EngineTests",
            dependencies: ["BeaconCore", "BeaconSimulation", "BeaconEvaluation", "BeaconService", "BeaconMQTT", "BeacondAPI", "BeaconTestSupport"]
        ),
        .testTarget(
            name: "SourcesTests",
            dependencies: ["BeaconCore", "BeaconSources", "BeaconThreads", "DBus"]
        ),
        .testTarget(name: "BeaconFilesTests", dependencies: ["BeaconFiles", "BeaconTestSupport"]),
        .testTarget(
            name: "MQTTTests",
            dependencies: ["BeaconMQTT", "BeaconCore", "BeaconConfiguration", "BeaconTestSupport"]
        ),
        .testTarget(
            name: "DBusTests",
            dependencies: ["DBus", "BeaconTestSupport"]
        ),
    ]
)
