import HTTPServer
import Logging

/// The owners' console as routes of the server, mounted beside the APIs (`CONSOLE=off` leaves it out).
public enum ConsoleMount {
    public static func routes(_ context: ConsoleContext, logger: Logger) -> [Route] {
        ConsoleRouteTable.routes.map { ConsolePipeline.route($0, context: context, logger: logger) }
    }
}
