import ArgumentParser
import Foundation
import Logging
import QuoteAPI

/// Flags shared by every command. Each falls back to the environment variable of the same name, then to the
/// contract's default.
struct ServerOptions: ParsableArguments {
    @Option(help: "libpq URI or keyword string (env DATABASE_URL); unset starts an embedded PostgreSQL.")
    var databaseURL: String?
    @Option(
        name: .customLong("quotevault-data"),
        help: "Embedded database and dev secrets (env QUOTEVAULT_DATA, default ./.quotevault).")
    var dataDirectory: String?
    @Option(help: "Listen address (env HOST, default 127.0.0.1).")
    var host: String?
    @Option(help: "Listen port; 0 picks a free one (env PORT, default 8080).")
    var port: Int?
    @Option(help: "HS256 key of at least 32 bytes (env JWT_SECRET); required with DATABASE_URL.")
    var jwtSecret: String?
    @Option(help: "Access token lifetime in seconds (env ACCESS_TOKEN_TTL, default 900).")
    var accessTokenTTL: Int?
    @Option(help: "Refresh token lifetime in seconds (env REFRESH_TOKEN_TTL, default 2592000).")
    var refreshTokenTTL: Int?
    @Option(help: "SMTP server for mail, e.g. smtp://127.0.0.1:2525 (env SMTP_URL); unset writes mail to the log.")
    var smtpURL: String?
    @Option(help: "Sender address (env MAIL_FROM).")
    var mailFrom: String?
    @Option(help: "on or off (env RATE_LIMITS, default on).")
    var rateLimits: String?
    @Option(help: "Connections per instance (env DB_POOL_SIZE, default 2 x cores).")
    var dbPoolSize: Int?
    @Option(help: "Connections for public reads, apart from writes (env DB_PUBLIC_POOL_SIZE, default 2 x cores).")
    var dbPublicPoolSize: Int?
    @Option(help: "Milliseconds a request waits for a pool connection, then 503 (env DB_ACQUIRE_TIMEOUT, def. 5000).")
    var dbAcquireTimeout: Int?
    @Option(
        name: .customLong("database-read-url"),
        help: "Read replicas for public reads, separated by ';' (env DATABASE_READ_URL); unset reads from DATABASE_URL."
    )
    var databaseReadURL: String?
    @Option(help: "Seconds a replica may lag before reads skip it (env REPLICA_MAX_LAG, default 5).")
    var replicaMaxLag: Double?
    @Option(help: "Seconds between checks of each replica (env REPLICA_CHECK_INTERVAL, default 1).")
    var replicaCheckInterval: Double?
    @Option(
        help: """
            Seconds /ready answers 503 after SIGTERM before the listener closes \
            (env SHUTDOWN_DRAIN_SECONDS, default 0).
            """)
    var shutdownDrainSeconds: Double?
    @Option(
        help: """
            on, or off to run statements unnamed for PgBouncer's transaction pooling \
            (env DB_PREPARED_STATEMENTS, default on).
            """)
    var dbPreparedStatements: String?
    @Option(help: "trace, debug, info, notice, warning, error, critical (env LOG_LEVEL, default info).")
    var logLevel: String?
    @Option(help: "json or text (env LOG_FORMAT, default json).")
    var logFormat: String?
    @Option(name: .customLong("scrypt-ln"), help: "scrypt log2(N) for new password hashes (env SCRYPT_LN, default 14).")
    var scryptLogN: Int?
    @Option(name: .customLong("scrypt-r"), help: "scrypt r (env SCRYPT_R, default 12).")
    var scryptR: Int?
    @Option(name: .customLong("scrypt-p"), help: "scrypt p (env SCRYPT_P, default 1).")
    var scryptP: Int?
    @Option(help: "Link in password-reset mails; ?token= is appended (env PASSWORD_RESET_URL).")
    var passwordResetURL: String?
    @Option(help: "libmicrohttpd event threads (env HTTP_THREADS, default 2; see bench/README.md).")
    var httpThreads: Int?
    @Option(
        help: "The Supabase anon key clients send as apikey (env SUPABASE_ANON_KEY; default: derived from JWT_SECRET).")
    var supabaseAnonKey: String?
    @Option(
        help: "The secret Supabase service role key (env SUPABASE_SERVICE_ROLE_KEY; default: derived from JWT_SECRET).")
    var supabaseServiceRoleKey: String?
    @Option(
        help: """
            This server's public base URL for recovery links and every avatar_url on /v1 and Supabase's APIs \
            (env SUPABASE_PUBLIC_URL; default http://HOST:PORT).
            """)
    var supabasePublicURL: String?
    @Option(
        help: """
            Comma-separated prefixes a recovery redirect_to may start with \
            (env SUPABASE_REDIRECT_ALLOW_LIST, default quotevault://).
            """)
    var supabaseRedirectAllowList: String?
    @Option(help: "Open connections from one IP address (env HTTP_CONNECTIONS_PER_ADDRESS, default 128).")
    var httpConnectionsPerAddress: Int?
    @Option(help: "Open connections in all (env HTTP_MAX_CONNECTIONS; default sized to memory, 256...4096).")
    var httpMaxConnections: Int?
    @Option(help: "Seconds for a request's headers to arrive (env HTTP_HEADER_TIMEOUT, default 10).")
    var httpHeaderTimeout: Int?
    @Option(help: "Seconds for a request's whole body to arrive (env HTTP_BODY_TIMEOUT, default 30).")
    var httpBodyTimeout: Int?
    @Option(
        help: """
            New connections per second from one IP address, bursts of twice that; 0: no limit \
            (env HTTP_NEW_CONNECTIONS_PER_ADDRESS, default 500).
            """)
    var httpNewConnectionsPerAddress: Int?
    @Option(help: "Bytes of request bodies buffered at once (env HTTP_BODY_BUDGET, default 67108864).")
    var httpBodyBudget: Int?
    @Option(
        help: """
            Milliseconds a 429, or a 413 decided from the headers, waits before it is sent; 0: at once \
            (env HTTP_REFUSAL_DELAY, default 1000).
            """)
    var httpRefusalDelay: Int?
    @Option(
        help: """
            Milliseconds a database statement may run before it is cancelled; 0: no limit \
            (env STATEMENT_TIMEOUT, default 5000).
            """)
    var statementTimeout: Int?
    @Option(
        help: """
            Bytes each cache of public answers (offset pages, search pages) may hold; 0: off \
            (env ANSWER_CACHE_BYTES, default 4194304).
            """)
    var answerCacheBytes: Int?
    @Option(
        help: """
            Seconds a rotated refresh token still refreshes \
            (parallel refreshes; env REFRESH_TOKEN_REUSE_INTERVAL, default 10).
            """)
    var refreshTokenReuseInterval: Int?
    @Option(help: "Scheduling niceness of the password-hashing threads, 0-19 (env HASHING_NICENESS, default 10).")
    var hashingNiceness: Int?
    @Option(
        help: """
            Comma-separated IP addresses of load balancers whose X-Forwarded-For names the client \
            (env TRUSTED_PROXIES; default none).
            """)
    var trustedProxies: String?
    @Option(help: "on, or off to serve no owners' console at /console (env CONSOLE, default on).")
    var console: String?
    @Option(help: "Bearer token for /metrics (env METRICS_TOKEN; unset: loopback clients only).")
    var metricsToken: String?
    @Option(help: "Directory of NNNN_name.sql files (env MIGRATIONS_DIR; default: found beside the program).")
    var migrationsDir: String?
    @Option(
        help:
            "Embedded mode: pgBackRest repository directory, or off (env BACKUP_REPO, default QUOTEVAULT_DATA-backups)."
    )
    var backupRepo: String?
    @Option(help: "Embedded mode: a pgBackRest config file with the repository options, e.g. S3 (env BACKUP_CONFIG).")
    var backupConfig: String?
    @Option(help: "Embedded mode: e.g. full=1d,incr=1h, or off (env BACKUP_SCHEDULE, default full=1d,incr=1h).")
    var backupSchedule: String?
    @Option(help: "Embedded mode: full backups kept (env BACKUP_RETENTION, default 7).")
    var backupRetention: Int?

    /// The flag if given, else the environment variable, else nil. Empty variables count as unset.
    func value(_ flag: String?, _ variable: String) -> String? {
        flag ?? ProcessInfo.processInfo.environment[variable].flatMap { $0.isEmpty ? nil : $0 }
    }

    func intValue(
        _ flag: Int?, _ variable: String, default fallback: Int, within range: ClosedRange<Int> = .min ... .max
    ) throws -> Int {
        let number = try parsed(flag, variable, default: fallback, kind: "a whole number")
        guard range.contains(number) else {
            let bounds =
                range.upperBound == .max ? "at least \(range.lowerBound)" : "\(range.lowerBound)...\(range.upperBound)"
            throw ValidationError("\(variable) must be \(bounds)")
        }
        return number
    }

    func secondsValue(_ flag: Double?, _ variable: String, default fallback: Double, within range: ClosedRange<Double>)
        throws -> Duration
    {
        let seconds = try parsed(flag, variable, default: fallback, kind: "a number of seconds")
        guard range.contains(seconds) else {
            throw ValidationError("\(variable) must be \(range.lowerBound)...\(range.upperBound) seconds")
        }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }

    /// The flag, else the variable read as `kind` (e.g. "a whole number"), else `fallback`.
    private func parsed<Number: LosslessStringConvertible>(
        _ flag: Number?, _ variable: String, default fallback: Number, kind: String
    ) throws -> Number {
        if let flag { return flag }
        guard let text = value(nil, variable) else { return fallback }
        guard let number = Number(text) else { throw ValidationError("\(variable) must be \(kind), got \(text)") }
        return number
    }

    /// `on` or `off` (any case), from the flag or the environment; on when neither is set.
    func switchValue(_ flag: String?, _ variable: String) throws -> Bool {
        guard let text = value(flag, variable) else { return true }
        switch text.lowercased() {
        case "on": return true
        case "off": return false
        default: throw ValidationError("\(variable) must be on or off")
        }
    }

    var resolvedDataDirectory: URL {
        URL(fileURLWithPath: value(dataDirectory, "QUOTEVAULT_DATA") ?? "./.quotevault").standardizedFileURL
    }

    func resolvedLogFormat() throws -> LogFormat {
        guard let format = LogFormat(rawValue: value(logFormat, "LOG_FORMAT") ?? "json") else {
            throw ValidationError("LOG_FORMAT must be json or text")
        }
        return format
    }

    func makeLogger() throws -> Logger {
        let levelText = value(logLevel, "LOG_LEVEL") ?? "info"
        guard let level = Logger.Level(rawValue: levelText.lowercased()) else {
            throw ValidationError("LOG_LEVEL must be one of trace, debug, info, notice, warning, error, critical")
        }
        LoggingBootstrap.once(level: level, format: try resolvedLogFormat())
        return Logger(label: "quote-server")
    }
}
