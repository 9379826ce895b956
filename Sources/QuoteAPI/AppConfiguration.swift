import AuthJWT
import Foundation

/// Everything the running API needs, resolved from flags and environment by the `quote-server` command.
public struct AppConfiguration: Sendable {
    public var host: String = "127.0.0.1"
    public var port: Int = 8080
    /// A libpq URI or keyword string; the command starts an embedded cluster when none is configured.
    public var databaseURL: String
    public var databasePoolSize: Int = 2 * ProcessInfo.processInfo.activeProcessorCount
    /// Connections kept for public reads (`DB_PUBLIC_POOL_SIZE`): quote pages, search, categories and quotes of
    /// the day never queue behind writes (e.g. writes waiting for a synchronous standby's acknowledgement). Twice
    /// the cores, as `databasePoolSize`: while one connection's backend works, another's answer is being read.
    public var databasePublicPoolSize: Int = max(2, 2 * ProcessInfo.processInfo.activeProcessorCount)
    /// How long a request waits for a free pool connection before it answers 503 (`DB_ACQUIRE_TIMEOUT`).
    public var databaseAcquireTimeout: Duration = .seconds(5)
    /// Read replicas for public reads (`DATABASE_READ_URL`); empty: everything runs on `databaseURL`.
    public var databaseReadURLs: [String] = []
    /// A replica whose replay lags more than this is skipped until it catches up (`REPLICA_MAX_LAG`).
    public var replicaMaxLag: Duration = .seconds(5)
    /// How often each replica's reachability and lag are checked (`REPLICA_CHECK_INTERVAL`).
    public var replicaCheckInterval: Duration = .seconds(1)
    /// On SIGTERM, how long `/ready` answers 503 before the listener closes (`SHUTDOWN_DRAIN_SECONDS`).
    public var shutdownDrain: Duration = .zero
    /// Named prepared statements on pooled connections (`DB_PREPARED_STATEMENTS`); off for PgBouncer's
    /// transaction pooling.
    public var databasePreparedStatements = true
    /// `STATEMENT_TIMEOUT` in milliseconds: PostgreSQL cancels any statement of the pool running longer (503
    /// `statement_timeout`); 0 turns it off.
    public var statementTimeoutMilliseconds = 5000
    /// `EXPENSIVE_CONCURRENCY`: expensive requests (search, `/rest/v1` pattern filters, bulk writes) running at
    /// once in all; nil: half the cores and at most half the smaller pool, at least 1, so the other classes always
    /// keep connections and the cores.
    public var expensiveConcurrency: Int?
    /// Expensive requests running at once from one address.
    public var expensivePerAddress = 2
    /// `EXPENSIVE_STATEMENT_TIMEOUT` in milliseconds: the statement timeout of expensive requests.
    public var expensiveStatementTimeoutMilliseconds = 3000
    /// `DB_CLIENT_SHARE` in milliseconds: a client's database time within the last 10 s (decaying) past which,
    /// while connections were short, its requests are expensive whatever their route.
    public var databaseClientShareMilliseconds = 3000
    /// `DB_CLIENT_BUDGET` in milliseconds: past it (and while connections were short) a client's requests get `429`.
    public var databaseClientBudgetMilliseconds = 10_000
    /// `HTTP_BODY_MIN_RATE` in bytes a second, after a grace of `HTTP_BODY_GRACE` seconds: a body arriving slower
    /// is cut off (Apache mod_reqtimeout's `MinRate`), so a stalled upload frees its share of the budget.
    public var httpBodyMinRate = 4096
    public var httpBodyGrace = 2
    /// The share of the body budget kept for small bodies (credentials, small JSON writes).
    public var httpSmallBodyReserve = 8 << 20
    /// `REFRESH_TOKEN_REUSE_INTERVAL` in seconds: a rotated refresh token presented again within this long of its
    /// rotation (parallel refreshes of one client) gets new tokens instead of revoking the session.
    public var refreshTokenReuseInterval = 10
    /// `ANSWER_CACHE_BYTES`: bytes each cache of public answers (offset pages, search pages) may hold, per
    /// version of the quotes; 0 turns them off.
    public var answerCacheBytes = 4 << 20
    /// HS256 key, at least 32 bytes.
    public var jwtSecret: [UInt8]
    public var accessTokenTTL: Int = 900
    public var refreshTokenTTL: Int = 2_592_000
    public var smtpURL: String?
    public var mailFrom: String = "QuoteVault <no-reply@quotevault.local>"
    public var rateLimitsEnabled: Bool = true
    /// `TRUSTED_PROXIES`: load balancers whose `X-Forwarded-For` names the client, so per-address limits apply to
    /// clients and not to the proxy they all come through.
    public var trustedProxies: [String] = []
    /// libmicrohttpd event threads; measured best on 2 cores with 2 (see bench/README.md).
    public var eventThreads: Int = 2
    public var migrationsDirectory: URL
    /// scrypt cost for new password hashes (`SCRYPT_LN`, `SCRYPT_R`, `SCRYPT_P`); see `ScryptParameters.default`.
    public var scrypt = ScryptParameters.default
    /// Concurrent password hashes; the rest wait in a queue of `hashingQueueLimit`, then get 503.
    public var hashingThreads = max(1, ProcessInfo.processInfo.activeProcessorCount / 2)
    public var hashingQueueLimit = 64
    /// `HASHING_NICENESS`: scheduling niceness of the hashing threads (0–19; default 10: reads go first).
    public var hashingNiceness = 10
    /// The link in reset mails; the token is appended as `?token=…`.
    public var passwordResetURL = "quotevault://reset-password"
    /// The access log's format (`LOG_FORMAT`), the same as every other line's.
    public var logFormat = LogFormat.json

    /// The HTTP listener's limits against hostile clients (see `HTTPServerConfiguration`): connections per
    /// address (`HTTP_CONNECTIONS_PER_ADDRESS`) and in all (`HTTP_MAX_CONNECTIONS`, nil: sized to memory),
    /// deadlines for a request's headers and body in seconds, the budget of buffered request bodies in bytes.
    public var httpConnectionsPerAddress = 128
    /// Streams of live changes (`LIVE_STREAMS_PER_USER`, `LIVE_STREAMS_PER_ADDRESS`, `LIVE_KEEPALIVE_SECONDS`).
    public var liveFeed = LiveFeedLimits()
    /// Realtime sockets (`/realtime/v1/websocket`) per user and per address, channels per socket, messages per
    /// second per socket (`REALTIME_CONNECTIONS_PER_USER`, `REALTIME_CONNECTIONS_PER_ADDRESS`,
    /// `REALTIME_CHANNELS_PER_CONNECTION`, `REALTIME_MESSAGES_PER_SECOND`).
    public var realtimeConnectionsPerUser = 16
    public var realtimeConnectionsPerAddress = 64
    public var realtimeChannelsPerConnection = 100
    public var realtimeMessagesPerSecond = 50
    public var httpMaxConnections: Int?
    public var httpHeaderTimeout = 10
    /// `HTTP_CROWDED_HEADER_TIMEOUT`: seconds for a new connection's first headers while the connection table is
    /// more than three quarters full.
    public var httpCrowdedHeaderTimeout = 2
    public var httpBodyTimeout = 30
    public var httpBodyBudget = 64 << 20
    /// `HTTP_NEW_CONNECTIONS_PER_ADDRESS`: new connections per second from one address (bursts of twice that).
    public var httpNewConnectionsPerAddress = 500
    /// `HTTP_REFUSAL_DELAY`: milliseconds a `429` or a `413` from the headers waits before it is sent (a flooding
    /// client pays with time); 0: at once.
    public var httpRefusalDelay = 1000
    /// `CONSOLE`: whether the owners' console is served at `/console` (`off` leaves it out).
    public var consoleEnabled = true
    /// The console's exports streaming at once, in all (`CONSOLE_EXPORTS`) and per owner
    /// (`CONSOLE_EXPORTS_PER_OWNER`); past either, `429` with `Retry-After`.
    public var consoleExports = 4
    public var consoleExportsPerOwner = 2
    /// `CONSOLE_EXPORT_STALL_SECONDS`: an export whose client takes nothing for this long is cut off.
    public var consoleExportStallSeconds = 60
    /// `METRICS_TOKEN`: when set, `/metrics` wants `Authorization: Bearer <token>`; when unset, it answers only
    /// clients on the loopback interface.
    public var metricsToken: String?

    /// The key Supabase clients send as `apikey` (and as the bearer token before sign-in): the anonymous role.
    /// Publishable, not secret; by default derived from the JWT key so every instance agrees on it.
    public var supabaseAnonKey: String
    /// The secret key of Supabase's `service_role` (`SUPABASE_SERVICE_ROLE_KEY`): row rules do not apply to it on
    /// `/rest/v1`. By default derived from the JWT key (as secret as it); it grants nothing on `/v1`.
    public var supabaseServiceRoleKey: String
    /// This server's public base URL, for the links in recovery mail and every `avatar_url` on both APIs
    /// (`SUPABASE_PUBLIC_URL`; default `http://HOST:PORT`, see `publicURL`). Never taken from a request's Host header.
    public var supabasePublicURL: String?
    /// The public base URL in effect: `supabasePublicURL`, else the server's own address.
    public var publicURL: String { supabasePublicURL ?? "http://\(host):\(port)" }
    /// The global cap on expensive requests in effect.
    public var expensiveConcurrencyInEffect: Int {
        expensiveConcurrency
            ?? max(1, min(ProcessInfo.processInfo.activeProcessorCount, databasePoolSize, databasePublicPoolSize) / 2)
    }
    /// Prefixes a recovery link's `redirect_to` may start with (`SUPABASE_REDIRECT_ALLOW_LIST`, comma-separated);
    /// others go to `passwordResetURL`.
    public var supabaseRedirectAllowList = ["quotevault://"]

    public init(databaseURL: String, jwtSecret: [UInt8], migrationsDirectory: URL) {
        self.databaseURL = databaseURL
        self.jwtSecret = jwtSecret
        self.supabaseAnonKey = SupabaseAnonKey.derived(fromJWTSecret: jwtSecret)
        self.supabaseServiceRoleKey = SupabaseServiceRoleKey.derived(fromJWTSecret: jwtSecret)
        self.migrationsDirectory = migrationsDirectory
    }
}
