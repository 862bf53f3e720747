import BeaconClient
import BeacondAPI

#if canImport(Glibc)
import Glibc
#endif

/// A kiosk that shows the menu of the nearest counter and changes it as the
/// listener moves: BeaconClient's `nearestVenueUpdates()` in a dozen lines.
///
///     kiosk-menu [system | session | unix:path=…]
@main
struct KioskMenu {
    /// What each venue of the shipped beacons.yaml sells.
    static let menus: [String: [String]] = [
        "counter-1": ["Espresso 2.10", "Cappuccino 3.20", "Croissant 2.40"],
        "counter-2": ["Flat white 3.40", "Chai latte 3.60", "Banana bread 2.90"],
        "coffee-bar": ["手冲咖啡 28", "冷萃 30", "抹茶拿铁 32"],
        "kaffeehaus-theke": ["Melange 4.20", "Einspänner 4.80", "Sachertorte 5.50"],
    ]

    static func main() async {
        let bus = CommandLine.arguments.dropFirst().first.map(BeaconClient.Bus.init(argument:)) ?? .system
        do {
            let client = try await BeaconClient.connect(bus: bus)
            var shown: String?? = .none
            for try await update in client.nearestVenueUpdates() where update.venue?.id != shown {
                shown = update.venue?.id
                print(screen(update.venue))
                fflush(nil)
            }
        } catch {
            print("kiosk-menu: \(error)")
            exit(1)
        }
    }

    static func screen(_ venue: Beacond.Venue?) -> String {
        guard let venue else { return "== Welcome ==\nWalk up to a counter to see its menu.\n" }
        let items = menus[venue.id] ?? ["(no menu for \(venue.id))"]
        return "== \(venue.name) ==\n" + items.map { "  \($0)" }.joined(separator: "\n") + "\n"
    }
}
