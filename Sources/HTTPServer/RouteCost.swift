/// What serving a route costs the server, by class: admission caps the expensive class so it can never take what
/// every other client needs (database connections, CPU).
public enum CostClass: String, Sendable, CaseIterable {
    /// Pages, categories, one quote, health: indexed reads, often answered from a cache.
    case cheapRead = "cheap_read"
    /// Sign-up, login, refresh, reset: bounded by the password-hashing queue and the per-address throttles.
    case auth
    /// Small writes of one account's data.
    case write
    /// Search, `/rest/v1` pattern filters, exports, bulk writes: may run for a large part of a second or more.
    case expensive
}

/// A route's declared cost class; a route whose cost depends on the request (a `/rest/v1` read with a pattern
/// filter) declares the condition under which it is expensive, so the class is still read off the route table.
public struct RouteCost: Sendable {
    public let declared: CostClass
    private let expensiveWhen: (@Sendable (Request) -> Bool)?

    private init(_ declared: CostClass, expensiveWhen: (@Sendable (Request) -> Bool)? = nil) {
        self.declared = declared
        self.expensiveWhen = expensiveWhen
    }

    public static let cheapRead = RouteCost(.cheapRead)
    public static let auth = RouteCost(.auth)
    public static let write = RouteCost(.write)
    public static let expensive = RouteCost(.expensive)

    /// `base`, or `.expensive` for the requests `condition` picks.
    public static func upgraded(
        _ base: CostClass, expensiveWhen condition: @escaping @Sendable (Request) -> Bool
    ) -> RouteCost {
        RouteCost(base, expensiveWhen: condition)
    }

    /// The class of one request to the route.
    public func of(_ request: Request) -> CostClass {
        if let expensiveWhen, expensiveWhen(request) { return .expensive }
        return declared
    }

    /// The class of a route declared without one: reads are cheap, anything else a write.
    public static func byMethod(_ method: HTTPMethod) -> RouteCost {
        method == .get || method == .head ? .cheapRead : .write
    }
}
