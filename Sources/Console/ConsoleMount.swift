import HTTPServer

/// The owners' console as routes of the server, mounted beside the APIs (`CONSOLE=off` leaves it out).
public enum ConsoleMount {
    public static func routes(_ context: ConsoleContext) -> [Route] {
        ConsoleRouteTable.routes.map { $0.route(context) }
    }
}
