import HTTPServer
import PGClient
import QuoteVault

/// What console handlers need, built once when the console is mounted. Every read and write goes to the primary
/// (`pool`), so an owner sees their change at once even when public reads come from replicas.
public struct ConsoleContext: Sendable {
    let pool: PGPool
    let quotes: QuoteService
    let search: QuoteSearch
    let editor: QuoteEditor
    let imports: QuoteImportDrafts
    let audit: AuditLog
    let undo: QuoteUndo
    let sessions: OwnerSessions
    let signIn: OwnerSignIn
    let secondFactor: OwnerSecondFactor
    let trustedProxies: TrustedProxies
    let pins: QuoteOfTheDayPins
    let accounts: AccountDirectory
    let usage: UsageStatistics
    let favoriteCounts: FavoriteCounts
    let listing: QuoteListing
    /// The app's password reset, whose mail an owner can send for an account (its per-recipient cap holds).
    let passwordResets: AccountService
    /// The caps on exports running at once and their clients' stall limit.
    let exportLimits: ConsoleExportLimits
    let exports: ExportSlots
    /// What the overview reads from the running server; set by the server that mounts the console.
    public var serverStatus = ConsoleServerStatus.none

    /// - Parameters:
    ///   - cursorSecret: the key of the quote list's cursors (the server's JWT key, as `/v1` uses).
    ///   - rateLimits: whether sign-in attempts are throttled (`RATE_LIMITS`).
    ///   - passwordResets: the app's accounts service (`Services.accounts`).
    ///   - exportLimits: the caps on concurrent exports, and how long one waits for a stalled client.
    public init(
        pool: PGPool, cursorSecret: [UInt8], trustedProxies: TrustedProxies, rateLimits: Bool,
        passwordResets: AccountService, exportLimits: ConsoleExportLimits = ConsoleExportLimits()
    ) {
        self.pool = pool
        quotes = QuoteService(pool: pool, cursorSecret: cursorSecret)
        search = QuoteSearch(pool: pool)
        editor = QuoteEditor(pool: pool)
        imports = QuoteImportDrafts(pool: pool)
        audit = AuditLog(pool: pool)
        undo = QuoteUndo(pool: pool)
        sessions = OwnerSessions(pool: pool)
        signIn = OwnerSignIn(pool: pool, throttle: OwnerSignInThrottle(enabled: rateLimits))
        secondFactor = OwnerSecondFactor(pool: pool)
        self.trustedProxies = trustedProxies
        pins = QuoteOfTheDayPins(pool: pool)
        accounts = AccountDirectory(pool: pool)
        usage = UsageStatistics(pool: pool)
        favoriteCounts = FavoriteCounts(pool: pool)
        listing = QuoteListing(pool: pool)
        self.passwordResets = passwordResets
        self.exportLimits = exportLimits
        exports = ExportSlots(exportLimits)
    }
}
