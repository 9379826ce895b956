import AuthJWT
import HTTPServer

/// The console's owner routes refused before their body is read when the request carries no session cookie at
/// all (or a malformed one): nobody can make the server buffer an 8 MiB upload without one. The pipeline still
/// checks the session fully (this only reads the headers, no database).
public enum ConsoleAdmission {
    private struct Key: Hashable {
        let method: HTTPMethod
        let pattern: String
    }

    private static let ownerRoutes = Set(ConsoleRouteTable.routes.filter { $0.access == .owner }.map {
        Key(method: $0.method, pattern: $0.pattern)
    })

    /// The refusal of `request` to `route`, or nil to read its body (any route not the console's is left alone).
    public static func refusal(_ route: Route, _ request: Request) -> Response? {
        // Every request of every surface passes here: the other surfaces' leave at the first bytes of their pattern.
        guard route.pattern.utf8.starts(with: "/console".utf8),
              ownerRoutes.contains(Key(method: route.method, pattern: route.pattern)) else { return nil }
        if let token = SessionCookie.token(in: request), OpaqueToken.isWellFormed(token) { return nil }
        var response = ConsoleFailurePage.response(.signInRequired, for: request)
        ConsoleHeaders.apply(to: &response)
        return response
    }
}
