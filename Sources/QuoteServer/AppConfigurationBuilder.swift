import ArgumentParser
import AuthJWT
import Foundation
import HTTPServer
import QuoteAPI
import QuoteVault

/// Turns flags and environment into the application's configuration, validating each value.
enum AppConfigurationBuilder {
    /// A whole-number setting: where it goes, its flag (nil: environment only), its variable and its bounds. The
    /// default is the configuration's own.
    private typealias Integer = (
        WritableKeyPath<AppConfiguration, Int>, KeyPath<ServerOptions, Int?>?, String, ClosedRange<Int>
    )

    private static var integers: [Integer] {
        [
            (\.port, \.port, "PORT", 0...65535),
            (\.accessTokenTTL, \.accessTokenTTL, "ACCESS_TOKEN_TTL", .min ... .max),
            (\.refreshTokenTTL, \.refreshTokenTTL, "REFRESH_TOKEN_TTL", .min ... .max),
            (\.databasePoolSize, \.dbPoolSize, "DB_POOL_SIZE", 1 ... .max),
            (\.databasePublicPoolSize, \.dbPublicPoolSize, "DB_PUBLIC_POOL_SIZE", 1 ... .max),
            (\.eventThreads, \.httpThreads, "HTTP_THREADS", 1...64),
            (\.httpConnectionsPerAddress, \.httpConnectionsPerAddress, "HTTP_CONNECTIONS_PER_ADDRESS", .min ... .max),
            (\.httpHeaderTimeout, \.httpHeaderTimeout, "HTTP_HEADER_TIMEOUT", .min ... .max),
            (\.httpBodyTimeout, \.httpBodyTimeout, "HTTP_BODY_TIMEOUT", .min ... .max),
            (
                \.httpNewConnectionsPerAddress, \.httpNewConnectionsPerAddress, "HTTP_NEW_CONNECTIONS_PER_ADDRESS",
                0 ... .max
            ),
            (\.httpBodyBudget, \.httpBodyBudget, "HTTP_BODY_BUDGET", .min ... .max),
            (\.httpRefusalDelay, \.httpRefusalDelay, "HTTP_REFUSAL_DELAY", 0...10_000),
            (\.hashingNiceness, \.hashingNiceness, "HASHING_NICENESS", 0...19),
            (\.statementTimeoutMilliseconds, \.statementTimeout, "STATEMENT_TIMEOUT", .min ... .max),
            (\.refreshTokenReuseInterval, \.refreshTokenReuseInterval, "REFRESH_TOKEN_REUSE_INTERVAL", .min ... .max),
            (\.expensiveStatementTimeoutMilliseconds, nil, "EXPENSIVE_STATEMENT_TIMEOUT", .min ... .max),
            (\.httpBodyMinRate, nil, "HTTP_BODY_MIN_RATE", .min ... .max),
            (\.httpBodyGrace, nil, "HTTP_BODY_GRACE", .min ... .max),
            (\.httpCrowdedHeaderTimeout, nil, "HTTP_CROWDED_HEADER_TIMEOUT", 1 ... .max),
            (\.answerCacheBytes, \.answerCacheBytes, "ANSWER_CACHE_BYTES", 0...(1 << 30)),
            (\.liveFeed.perUser, nil, "LIVE_STREAMS_PER_USER", 0...1000),
            (\.liveFeed.perAddress, nil, "LIVE_STREAMS_PER_ADDRESS", 0...100_000),
            (\.liveFeedKeepAliveSeconds, nil, "LIVE_KEEPALIVE_SECONDS", 1...30),
            (\.realtimeConnectionsPerUser, nil, "REALTIME_CONNECTIONS_PER_USER", 0...1000),
            (\.realtimeConnectionsPerAddress, nil, "REALTIME_CONNECTIONS_PER_ADDRESS", 0...100_000),
            (\.realtimeChannelsPerConnection, nil, "REALTIME_CHANNELS_PER_CONNECTION", 1...1000),
            (\.realtimeMessagesPerSecond, nil, "REALTIME_MESSAGES_PER_SECOND", 1...10_000),
            (\.consoleExports, nil, "CONSOLE_EXPORTS", 1...1000),
            (\.consoleExportsPerOwner, nil, "CONSOLE_EXPORTS_PER_OWNER", 1...1000),
            (\.consoleExportStallSeconds, nil, "CONSOLE_EXPORT_STALL_SECONDS", 1...3600),
        ]
    }

    static func build(_ options: ServerOptions, database: Database) throws -> AppConfiguration {
        let migrations = try Migration.locateDirectory(explicit: options.value(options.migrationsDir, "MIGRATIONS_DIR"))
        var configuration = AppConfiguration(
            databaseURL: database.url, jwtSecret: try database.jwtSecret(options), migrationsDirectory: migrations)
        configuration.host = options.value(options.host, "HOST") ?? "127.0.0.1"
        for (setting, flag, variable, range) in integers {
            configuration[keyPath: setting] = try options.intValue(
                flag.flatMap { options[keyPath: $0] }, variable, default: configuration[keyPath: setting], within: range
            )
        }
        guard configuration.accessTokenTTL > 0, configuration.refreshTokenTTL > 0 else {
            throw ValidationError("token lifetimes must be positive")
        }
        configuration.smtpURL = options.value(options.smtpURL, "SMTP_URL")
        if let from = options.value(options.mailFrom, "MAIL_FROM") { configuration.mailFrom = from }
        configuration.rateLimitsEnabled = try options.switchValue(options.rateLimits, "RATE_LIMITS")
        let acquireTimeout = try options.intValue(
            options.dbAcquireTimeout, "DB_ACQUIRE_TIMEOUT", default: 5000, within: 1...60_000)
        configuration.databaseAcquireTimeout = .milliseconds(acquireTimeout)
        if let readURLs = options.value(options.databaseReadURL, "DATABASE_READ_URL") {
            // ';' because a libpq URI may itself list several hosts with ','.
            configuration.databaseReadURLs = readURLs.split(separator: ";").map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            .filter { !$0.isEmpty }
        }
        configuration.replicaMaxLag = try options.secondsValue(
            options.replicaMaxLag, "REPLICA_MAX_LAG", default: 5, within: 0...86_400)
        configuration.replicaCheckInterval = try options.secondsValue(
            options.replicaCheckInterval, "REPLICA_CHECK_INTERVAL", default: 1, within: 0.05...3_600)
        configuration.shutdownDrain = try options.secondsValue(
            options.shutdownDrainSeconds, "SHUTDOWN_DRAIN_SECONDS", default: 0, within: 0...60)
        configuration.databasePreparedStatements = try options.switchValue(
            options.dbPreparedStatements, "DB_PREPARED_STATEMENTS")
        let scrypt = ScryptParameters(
            logN: try options.intValue(options.scryptLogN, "SCRYPT_LN", default: ScryptParameters.default.logN),
            r: try options.intValue(options.scryptR, "SCRYPT_R", default: ScryptParameters.default.r),
            p: try options.intValue(options.scryptP, "SCRYPT_P", default: ScryptParameters.default.p))
        guard scrypt.isSupported else {
            throw ValidationError("SCRYPT_LN/SCRYPT_R/SCRYPT_P are out of the supported range")
        }
        configuration.scrypt = scrypt
        if let link = options.value(options.passwordResetURL, "PASSWORD_RESET_URL") {
            configuration.passwordResetURL = link
        }
        configuration.logFormat = try options.resolvedLogFormat()
        if options.value(options.httpMaxConnections.map(String.init), "HTTP_MAX_CONNECTIONS") != nil {
            configuration.httpMaxConnections = try options.intValue(
                options.httpMaxConnections, "HTTP_MAX_CONNECTIONS", default: 0)
        }
        guard configuration.httpConnectionsPerAddress >= 1, (configuration.httpMaxConnections ?? 1) >= 1,
            configuration.httpHeaderTimeout >= 1, configuration.httpBodyTimeout >= 1, configuration.httpBodyBudget >= 1
        else { throw ValidationError("HTTP_* limits must be positive") }
        configuration.metricsToken = options.value(options.metricsToken, "METRICS_TOKEN")
        configuration.consoleEnabled = try options.switchValue(options.console, "CONSOLE")
        configuration.trustedProxies = (options.value(options.trustedProxies, "TRUSTED_PROXIES") ?? "")
            .split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        if let bad = configuration.trustedProxies.first(where: { !TrustedProxies.isAddress($0) }) {
            throw ValidationError("TRUSTED_PROXIES must list IP addresses; \(bad) is not one")
        }
        guard configuration.statementTimeoutMilliseconds >= 0, configuration.refreshTokenReuseInterval >= 0 else {
            throw ValidationError("STATEMENT_TIMEOUT and REFRESH_TOKEN_REUSE_INTERVAL must not be negative")
        }
        if options.value(nil, "EXPENSIVE_CONCURRENCY") != nil {
            configuration.expensiveConcurrency = try options.intValue(
                nil, "EXPENSIVE_CONCURRENCY", default: 1, within: 1 ... .max)
        }
        configuration.databaseClientShareMilliseconds = try options.intValue(
            nil, "DB_CLIENT_SHARE", default: configuration.databaseClientShareMilliseconds, within: 1...600_000)
        configuration.databaseClientBudgetMilliseconds = try options.intValue(
            nil, "DB_CLIENT_BUDGET", default: configuration.databaseClientBudgetMilliseconds,
            within: configuration.databaseClientShareMilliseconds...600_000)
        guard configuration.expensiveStatementTimeoutMilliseconds >= 0, configuration.httpBodyMinRate >= 0,
            configuration.httpBodyGrace >= 1
        else {
            throw ValidationError("EXPENSIVE_STATEMENT_TIMEOUT, HTTP_BODY_MIN_RATE must be >= 0, HTTP_BODY_GRACE >= 1")
        }
        if let anonKey = options.value(options.supabaseAnonKey, "SUPABASE_ANON_KEY") {
            guard !anonKey.isEmpty else { throw ValidationError("SUPABASE_ANON_KEY must not be empty") }
            configuration.supabaseAnonKey = anonKey
        }
        if let serviceKey = options.value(options.supabaseServiceRoleKey, "SUPABASE_SERVICE_ROLE_KEY") {
            guard serviceKey.utf8.count >= 32 else {
                throw ValidationError("SUPABASE_SERVICE_ROLE_KEY must be at least 32 characters")
            }
            configuration.supabaseServiceRoleKey = serviceKey
        }
        if let publicURL = options.value(options.supabasePublicURL, "SUPABASE_PUBLIC_URL") {
            guard let url = URL(string: publicURL), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else {
                throw ValidationError("SUPABASE_PUBLIC_URL must be an http(s) URL")
            }
            configuration.supabasePublicURL = publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL
        }
        if let list = options.value(options.supabaseRedirectAllowList, "SUPABASE_REDIRECT_ALLOW_LIST") {
            configuration.supabaseRedirectAllowList = list.split(separator: ",").map {
                $0.trimmingCharacters(in: .whitespaces)
            }
        }
        guard configuration.supabaseServiceRoleKey != configuration.supabaseAnonKey else {
            throw ValidationError("SUPABASE_SERVICE_ROLE_KEY must differ from the anon key")
        }
        return configuration
    }
}
