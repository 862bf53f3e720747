@testable import BeaconCore
@testable import BeaconService
import BeaconTestSupport
import BeacondAPI
import BeacondBus
import DBus
import Foundation
import Synchronization
import Testing

/// beacond's D-Bus side in this process, fed snapshots made by hand, so a
/// test chooses what each publication changes: the order in which readers
/// on the bus see the answers and the objects they name.
@Suite struct BusPublicationTests {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
    static let t0 = Timestamp.milliseconds(1_000_000)

    static func ranged(_ major: UInt16, _ minor: UInt16, distance: Double, venue: String? = nil) -> RangedBeacon {
        RangedBeacon(
            identity: BeaconIdentity(uuid: uuid, major: major, minor: minor), rssi: -60, filteredRSSI: -60, measuredPower: -59, advertisedPower: -59,
            distance: distance, accuracy: 0.1, proximity: .near, isStationary: false, lastSeen: t0,
            address: BluetoothAddress(0xC0, 0, 0, 0, 0, 1), venueID: venue)
    }

    /// Each round a new beacon is nearest, so GetNearestVenue names an object
    /// that this very publication exports, while a client keeps asking. The
    /// bus hands dbus-monitor the messages in the order beacond sent them:
    /// no answer may name a beacon before its InterfacesAdded. Many venues
    /// and strangers make each publication's work long enough for a call to
    /// land in the middle of it.
    @Test func noAnswerNamesABeaconBeforeItsObjectIsExported() async throws {
        let bus = try PrivateBus()
        let monitor = try await ServiceBusTests.BusMonitor(
            bus, rules: ["type='method_return'", "type='signal',member='InterfacesAdded'", "type='method_call',member='Ping'"])
        let venues = (0..<200).map { VenueDefinition(id: "venue-\($0)", name: "Venue \($0)", constraint: BeaconConstraint(uuid: Self.uuid, major: 1, minor: UInt16($0))) }
        let engine = BeaconEngine(configuration: Configuration(venues: venues), now: Self.t0)
        var snapshot = ServiceSnapshot(time: Self.t0, engine: engine, available: true, availabilityReason: "", source: .simulate(scenario: nil))
        let service = try await BusService.start(
            bus: .address(bus.address), snapshot: snapshot, version: "test", limits: ServiceLimits(), enqueue: { _ in true })
        defer { service.connection.close() }
        let client = try await DBusConnection.connect(.address(bus.address))
        defer { client.close() }
        let strangers = (0..<2_000).map { Self.ranged(1_000, UInt16($0), distance: 5) }
        final class Answers: Sendable { let count = Mutex(0) }
        let answers = Answers()
        let asking = Task {
            while !Task.isCancelled {
                await withTaskGroup(of: Void.self) { group in
                    for _ in 0..<20 {
                        group.addTask {
                            if (try? await client.call(
                                destination: Beacond.busName, path: Beacond.root, interface: Beacond.Manager1.name,
                                member: Beacond.Manager1.getNearestVenue.name)) != nil
                            {
                                answers.count.withLock { $0 += 1 }
                            }
                        }
                    }
                }
            }
        }
        // Ten publications at least, and on until 100 answers came (a starved suite's client asks slowly).
        var round = 0
        while round < 10 || (answers.count.withLock { $0 } < 100 && round < venues.count - 1) {
            round += 1
            let nearest = Self.ranged(1, UInt16(round), distance: 1, venue: "venue-\(round)")
            snapshot.time = Self.t0 + .milliseconds(Int64(round) * 1_100)
            snapshot.ranged = [nearest] + strangers
            snapshot.nearest = NearestVenue(
                venueID: "venue-\(round)", name: "Venue \(round)", source: .ranging, beacon: nearest, runnerUpID: nil, margin: 1,
                isStationary: false)
            service.publish(snapshot, events: [])
            // Paced as the engine publishes (not a wait for anything): the calls go on meanwhile.
            try await Task.sleep(for: .milliseconds(20))
        }
        asking.cancel()
        _ = await asking.result
        // Every reply above was routed before this call was sent.
        _ = try await client.call(destination: Beacond.busName, path: Beacond.root, interface: "org.freedesktop.DBus.Peer", member: "Ping")
        try #require(await eventually { monitor.captured.contains("member=Ping") })
        var announced: Set<Substring> = []
        var named = 0
        var early: [Substring] = []
        var header: Substring = ""
        for line in monitor.captured.split(separator: "\n") {
            if !line.hasPrefix(" ") {
                header = line
                continue
            }
            guard let start = line.range(of: "object path \"/org/beacond/beacon/") else { continue }
            let path = line[line.index(start.lowerBound, offsetBy: 13)...].dropLast()
            if header.hasPrefix("signal") {
                announced.insert(path)
            } else if header.hasPrefix("method return") {
                named += 1
                if !announced.contains(path) { early.append(path) }
            }
        }
        // Batches of 20 calls go on through the publications, which go on until 100 answers came
        // (GetNearestVenue names a beacon once one is nearest); before the fix thousands of answers were early.
        #expect(named >= 40, "too few answers named a beacon to tell anything")
        #expect(early.count == 0, "\(early.count) of \(named) answers named a beacon before its InterfacesAdded: \(early.prefix(5))")
    }

    /// An object's getters answer from the step that changes the object, not
    /// from the engine's side before it: a Venue1 a Reload dropped must read
    /// as itself until its object goes, never as an empty venue, while the
    /// publication is worked out (many venues and strangers make that long enough for a
    /// read to land in the middle of it).
    @Test func aDroppedVenueReadsAsItselfUntilItsObjectGoes() async throws {
        let bus = try PrivateBus()
        let venues = (0..<200).map { VenueDefinition(id: "venue-\($0)", name: "Venue \($0)", constraint: BeaconConstraint(uuid: Self.uuid, major: 1, minor: UInt16($0))) }
        let venue = venues[0]
        var snapshot = ServiceSnapshot(
            time: Self.t0, engine: BeaconEngine(configuration: Configuration(venues: venues), now: Self.t0), available: true,
            availabilityReason: "", source: .simulate(scenario: nil))
        let service = try await BusService.start(
            bus: .address(bus.address), snapshot: snapshot, version: "test", limits: ServiceLimits(), enqueue: { _ in true })
        defer { service.connection.close() }
        let client = try await DBusConnection.connect(.address(bus.address))
        defer { client.close() }
        final class Reads: Sendable { let ids = Mutex<[String]>([]) }
        let reads = Reads()
        let reading = Task {
            while !Task.isCancelled {
                await withTaskGroup(of: Void.self) { group in
                    for _ in 0..<20 {
                        group.addTask {
                            let reply = try? await client.call(
                                destination: Beacond.busName, path: BusPaths.venue(venue.id), interface: "org.freedesktop.DBus.Properties",
                                member: "GetAll", arguments: [.string(Beacond.Venue1.name)])
                            if let id = reply?.first?.stringKeyedEntries?[Beacond.Venue1.id.name]?.string { reads.ids.withLock { $0.append(id) } }
                        }
                    }
                }
            }
        }
        let strangers = (0..<2_000).map { Self.ranged(1_000, UInt16($0), distance: 5) }
        // Twenty publications at least, and on until 100 reads came (a starved suite's client reads slowly).
        var round = 0
        while round < 20 || (reads.ids.withLock { $0.count } < 100 && round < 400) {
            round += 1
            snapshot.time = Self.t0 + .milliseconds(Int64(round) * 1_100)
            snapshot.configuration = Configuration(venues: round % 2 == 0 ? venues : Array(venues.dropFirst()))
            snapshot.ranged = strangers
            service.publish(snapshot, events: [])
            // Paced as the engine publishes (not a wait for anything): the reads go on meanwhile.
            try await Task.sleep(for: .milliseconds(20))
        }
        reading.cancel()
        _ = await reading.value
        let read = reads.ids.withLock { $0 }
        #expect(read.count >= 40, "too few reads of the venue to tell anything")
        let empty = read.filter { $0 != venue.id }.count
        #expect(empty == 0, "\(empty) of \(read.count) reads of the venue answered another id (empty: dropped in the middle of its publication)")
    }
}
