/// How many exports run at once and how long one may wait for its client (`CONSOLE_EXPORTS`,
/// `CONSOLE_EXPORTS_PER_OWNER`, `CONSOLE_EXPORT_STALL_SECONDS`). An export is cheap per page but runs for as long
/// as its download lasts, after its fair-queue place was given back; these bound what many at once can hold.
public struct ConsoleExportLimits: Sendable {
    /// Exports streaming at once, all owners together.
    public var inAll = 4
    /// Exports streaming at once for one owner.
    public var perOwner = 2
    /// A client that takes nothing for this long is cut off (its download fails, visibly truncated).
    public var stall: Duration = .seconds(60)
    /// The `Retry-After` of a refusal past a cap: about what a whole export of 100,000 quotes takes.
    public static let retryAfterSeconds = 5

    public init() {}
}
