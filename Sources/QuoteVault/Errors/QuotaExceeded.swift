import PGClient

/// A write past a per-account quota: collections per account and quotes per collection (migration 0011, refused
/// by the database whichever door wrote it), results of sync operations kept per account. Every surface answers it
/// as `403` in its own dialect.
public struct QuotaExceeded: Error, Sendable, Hashable {
    /// The quota's name (`collections_per_account`, `quotes_per_collection`).
    public let quota: String
    /// For people: the quota and its number (the database's message; no row data).
    public let message: String

    static let sqlState: PGError.SQLState = "QV001"

    public init(quota: String, message: String) {
        self.quota = quota
        self.message = message
    }

    /// The quota `error` ran into, or nil.
    public init?(_ error: any Error) {
        guard let error = error as? PGError, error.sqlState == Self.sqlState else { return nil }
        quota = error.constraint ?? "quota"
        message = error.message
    }
}
