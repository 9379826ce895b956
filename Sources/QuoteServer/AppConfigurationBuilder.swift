import ArgumentParser
import AuthJWT
import Foundation
import HTTPServer
import QuoteAPI
import QuoteVault

/// Turns flags and environment into the application's configuration, validating each value.
enum AppConfigurationBuilder {
    static func build(_ options: ServerOptions, database: Database) throws -> AppConfiguration {
        let migrations = try Migration.locateDirectory(explicit: options.value(options.migrationsDir, "MIGRATIONS_DIR"))
        var configuration = AppConfiguration(
            databaseURL: database.url, jwtSecret: try database.jwtSecret(options), migrationsDirectory: migrations)
        configuration.host = options.value(options.host, "HOST") ?? "127.0.0.1"
        configuration.port = try options.intValue(options.port, "PORT", default: 8080, within: 0...65535)
        configuration.accessTokenTTL = try options.intValue(options.accessTokenTTL, "ACCESS_TOKEN_TTL", default: 900)
        configuration.refreshTokenTTL = try options.intValue(
            options.refreshTokenTTL, "REFRESH_TOKEN_TTL", default: 2_592_000)
        guard configuration.accessTokenTTL > 0, configuration.refreshTokenTTL > 0 else {
            throw ValidationError("token lifetimes must be positive")
        }
        configuration.smtpURL = options.value(options.smtpURL, "SMTP_URL")
        if let from = options.value(options.mailFrom, "MAIL_FROM") { configuration.mailFrom = from }
        configuration.rateLimitsEnabled = try options.switchValue(options.rateLimits, "RATE_LIMITS")
        configuration.databasePoolSize = try options.intValue(
            options.dbPoolSize, "DB_POOL_SIZE", default: 2 * ProcessInfo.processInfo.activeProcessorCount,
            within: 1 ... .max)
        configuration.databasePublicPoolSize = try options.intValue(
            options.dbPublicPoolSize, "DB_PUBLIC_POOL_SIZE", default: configuration.databasePublicPoolSize,
            within: 1 ... .max)
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
        configuration.eventThreads = try options.intValue(
            options.httpThreads, "HTTP_THREADS", default: 2, within: 1...64)
        configuration.httpConnectionsPerAddress = try options.intValue(
            options.httpConnectionsPerAddress, "HTTP_CONNECTIONS_PER_ADDRESS",
            default: configuration.httpConnectionsPerAddress)
        if options.value(options.httpMaxConnections.map(String.init), "HTTP_MAX_CONNECTIONS") != nil {
            configuration.httpMaxConnections = try options.intValue(
                options.httpMaxConnections, "HTTP_MAX_CONNECTIONS", default: 0)
        }
        configuration.httpHeaderTimeout = try options.intValue(
            options.httpHeaderTimeout, "HTTP_HEADER_TIMEOUT", default: configuration.httpHeaderTimeout)
        configuration.httpBodyTimeout = try options.intValue(
            options.httpBodyTimeout, "HTTP_BODY_TIMEOUT", default: configuration.httpBodyTimeout)
        configuration.httpNewConnectionsPerAddress = try options.intValue(
            options.httpNewConnectionsPerAddress, "HTTP_NEW_CONNECTIONS_PER_ADDRESS",
            default: configuration.httpNewConnectionsPerAddress, within: 0 ... .max)
        configuration.httpBodyBudget = try options.intValue(
            options.httpBodyBudget, "HTTP_BODY_BUDGET", default: configuration.httpBodyBudget)
        configuration.httpRefusalDelay = try options.intValue(
            options.httpRefusalDelay, "HTTP_REFUSAL_DELAY", default: configuration.httpRefusalDelay, within: 0...10_000)
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
        configuration.hashingNiceness = try options.intValue(
            options.hashingNiceness, "HASHING_NICENESS", default: configuration.hashingNiceness, within: 0...19)
        configuration.statementTimeoutMilliseconds = try options.intValue(
            options.statementTimeout, "STATEMENT_TIMEOUT", default: configuration.statementTimeoutMilliseconds)
        configuration.refreshTokenReuseInterval = try options.intValue(
            options.refreshTokenReuseInterval, "REFRESH_TOKEN_REUSE_INTERVAL",
            default: configuration.refreshTokenReuseInterval)
        guard configuration.statementTimeoutMilliseconds >= 0, configuration.refreshTokenReuseInterval >= 0 else {
            throw ValidationError("STATEMENT_TIMEOUT and REFRESH_TOKEN_REUSE_INTERVAL must not be negative")
        }
        if options.value(nil, "EXPENSIVE_CONCURRENCY") != nil {
            configuration.expensiveConcurrency = try options.intValue(
                nil, "EXPENSIVE_CONCURRENCY", default: 1, within: 1 ... .max)
        }
        configuration.expensiveStatementTimeoutMilliseconds = try options.intValue(
            nil, "EXPENSIVE_STATEMENT_TIMEOUT", default: configuration.expensiveStatementTimeoutMilliseconds)
        configuration.httpBodyMinRate = try options.intValue(
            nil, "HTTP_BODY_MIN_RATE", default: configuration.httpBodyMinRate)
        configuration.httpBodyGrace = try options.intValue(nil, "HTTP_BODY_GRACE", default: configuration.httpBodyGrace)
        guard configuration.expensiveStatementTimeoutMilliseconds >= 0, configuration.httpBodyMinRate >= 0,
            configuration.httpBodyGrace >= 1
        else {
            throw ValidationError("EXPENSIVE_STATEMENT_TIMEOUT, HTTP_BODY_MIN_RATE must be >= 0, HTTP_BODY_GRACE >= 1")
        }
        configuration.answerCacheBytes = try options.intValue(
            options.answerCacheBytes, "ANSWER_CACHE_BYTES", default: configuration.answerCacheBytes,
            within: 0...(1 << 30))
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
