import AuthJWT
import Foundation
import HTTPServer
import Logging
import PGClient
import QuoteAPI
import QuoteVault
import SupabaseAPI

/// The composition root: builds the database pools and the services once, mounts the `/v1` and Supabase surfaces
/// on them side by side, and serves them. `main` and the tests both build it through `Application.build`, so tests
/// run exactly what production runs.
public final class Application: Sendable {
    public let context: AppContext
    /// The Supabase surface's context (its Realtime hub is started and stopped with the server).
    public let supabase: SupabaseContext
    public let server: HTTPServer
    /// The database time each client used recently, which the pools and `CostAdmission` share fairly by.
    public let databaseTime: DatabaseTimeLedger

    private init(
        context: AppContext, supabase: SupabaseContext, server: HTTPServer, databaseTime: DatabaseTimeLedger
    ) {
        self.context = context
        self.supabase = supabase
        self.server = server
        self.databaseTime = databaseTime
    }

    /// Builds the application. Nothing listens or connects until `start()`.
    public static func build(configuration: AppConfiguration, logger: Logger) throws -> Application {
        let statementTimeout: Duration? =
            configuration.statementTimeoutMilliseconds > 0
            ? .milliseconds(configuration.statementTimeoutMilliseconds) : nil
        // Every pool charges its connection time to the same clients (`CostAdmission`, `FairShare`).
        let ledger = DatabaseTimeLedger()
        let pool = PGPool(
            connectionString: configuration.databaseURL, size: configuration.databasePoolSize,
            acquireTimeout: configuration.databaseAcquireTimeout, statementTimeout: statementTimeout,
            preparedStatements: configuration.databasePreparedStatements, ledger: ledger, logger: logger)
        // Public reads have connections of their own on the primary, so they never queue behind writes (which may
        // all wait for a synchronous standby); with replicas it is where reads fall back to.
        let publicPool = PGPool(
            connectionString: configuration.databaseURL, size: configuration.databasePublicPoolSize,
            acquireTimeout: configuration.databaseAcquireTimeout, statementTimeout: statementTimeout,
            preparedStatements: configuration.databasePreparedStatements, ledger: ledger, logger: logger)
        // What a user writes or reads back about themselves stays on `pool` (read-your-writes); public data may
        // come from a replica a moment behind.
        let readPool =
            configuration.databaseReadURLs.isEmpty
            ? publicPool
            : PGPool(
                replicas: configuration.databaseReadURLs, primary: publicPool, size: configuration.databasePoolSize,
                maxLag: configuration.replicaMaxLag, checkInterval: configuration.replicaCheckInterval,
                acquireTimeout: configuration.databaseAcquireTimeout, statementTimeout: statementTimeout,
                preparedStatements: configuration.databasePreparedStatements, ledger: ledger, logger: logger)
        let signer = JWTSigner(secret: configuration.jwtSecret)
        let services = Services(
            pool: pool, publicPool: publicPool, readPool: readPool,
            migrator: try Migrator(migrationsDirectory: configuration.migrationsDirectory, logger: logger),
            secret: configuration.jwtSecret,
            hashing: PasswordHashingQueue(
                hasher: PasswordHasher(parameters: configuration.scrypt), threads: configuration.hashingThreads,
                queueLimit: configuration.hashingQueueLimit, niceness: Int32(configuration.hashingNiceness)),
            sessions: SessionIssuer(
                signer: signer, secret: configuration.jwtSecret, accessTokenTTL: configuration.accessTokenTTL,
                refreshTokenTTL: configuration.refreshTokenTTL,
                refreshTokenReuseInterval: configuration.refreshTokenReuseInterval),
            mail: MailDelivery(
                pool: pool, smtpURL: configuration.smtpURL, from: configuration.mailFrom, logger: logger),
            housekeeping: AccountHousekeeping(pool: pool, logger: logger),
            rateLimits: configuration.rateLimitsEnabled, resetLinkBase: configuration.passwordResetURL,
            publicURL: configuration.publicURL)
        let context = AppContext(
            configuration: configuration, services: services, metrics: ServerMetrics(), logger: logger,
            sync: SyncContext(pool: pool, secret: configuration.jwtSecret, logger: logger))
        var http = HTTPServerConfiguration(
            host: configuration.host, port: configuration.port, eventThreads: configuration.eventThreads,
            connectionLimit: configuration.httpMaxConnections,
            connectionsPerAddress: configuration.httpConnectionsPerAddress,
            headerTimeout: .seconds(configuration.httpHeaderTimeout),
            bodyTimeout: .seconds(configuration.httpBodyTimeout),
            bodyBudget: configuration.httpBodyBudget,
            newConnectionsPerAddressPerSecond: configuration.httpNewConnectionsPerAddress,
            trustedProxies: TrustedProxies(configuration.trustedProxies),
            refusalDelay: .milliseconds(configuration.httpRefusalDelay))
        let supabase = SupabaseContext(
            anonKey: configuration.supabaseAnonKey, serviceRoleKey: configuration.supabaseServiceRoleKey,
            services: services, publicURL: configuration.publicURL,
            redirects: RedirectAllowList(
                siteURL: configuration.passwordResetURL, prefixes: configuration.supabaseRedirectAllowList),
            realtimeLimits: Self.realtimeLimits(configuration, connectionLimit: http.connectionLimit), logger: logger)
        let router = Router(
            routes: RouteTable.routes(context, supabase: supabase, costs: CostAdmission(configuration, ledger: ledger)))
        let metrics = context.metrics
        let realtime = supabase.realtime
        metrics.include { realtime.exposition() }
        let requestLog = logger.logLevel <= .info ? RequestLog(format: configuration.logFormat) : nil
        http.smallBodyReserve = configuration.httpSmallBodyReserve
        http.bodyMinRate = configuration.httpBodyMinRate
        http.bodyGrace = .seconds(configuration.httpBodyGrace)
        http.crowdedHeaderTimeout = .seconds(configuration.httpCrowdedHeaderTimeout)
        let server = HTTPServer(
            configuration: http,
            router: router, logger: logger,
            observer: { request in
                metrics.observe(request)
                requestLog?.record(request)
            },
            classify: Failure.init(classifying:),
            scope: configuration.rateLimitsEnabled ? FairShare.chargingTheClient : nil)
        return Application(context: context, supabase: supabase, server: server, databaseTime: ledger)
    }

    private static func realtimeLimits(_ configuration: AppConfiguration, connectionLimit: Int) -> RealtimeLimits {
        var limits = RealtimeLimits()
        limits.sockets = RealtimeLimits.socketShare(ofConnectionTable: connectionLimit)
        limits.connectionsPerUser = configuration.realtimeConnectionsPerUser
        limits.connectionsPerAddress = configuration.realtimeConnectionsPerAddress
        limits.channelsPerConnection = configuration.realtimeChannelsPerConnection
        limits.messagesPerSecond = configuration.realtimeMessagesPerSecond
        return limits
    }

    /// Applies pending migrations (safe when several instances start at once).
    public func migrate() async throws {
        try await context.migrator.migrate(using: context.pool)
    }

    /// Points stored avatar URLs at this instance's public URL (see `ProfileService.rebaseAvatarURLs`); run by
    /// `serve`, whose configuration is the one clients reach, never by a one-off `migrate`.
    public func rebaseAvatarURLs() async throws {
        let changed = try await context.profiles.rebaseAvatarURLs()
        guard changed > 0 else { return }
        context.logger.info("avatar URLs rebased", metadata: ["profiles": .stringConvertible(changed)])
    }

    /// Starts listening.
    public func start() throws {
        try server.start()
        context.mail.start()
        context.sync.maintenance.start()
        context.housekeeping.start()
        context.live.start(databaseURL: context.configuration.databaseURL)
        supabase.realtime.start(databaseURL: context.configuration.databaseURL)
        context.logger.info(
            "listening",
            metadata: [
                "host": .string(server.configuration.host), "port": .stringConvertible(server.port),
            ])
    }

    public var port: Int { server.port }

    /// Takes the instance out of a load balancer's rotation before it stops: `/ready` answers 503 for `period`
    /// while every other request is still served, so the balancer's health checks stop sending new requests
    /// before the listener closes.
    public func drain(for period: Duration) async {
        context.drain.begin()
        context.logger.info(
            "draining: /ready answers 503", metadata: ["seconds": .stringConvertible(period.components.seconds)])
        try? await Task.sleep(for: period)
    }

    /// Graceful stop: no new connections, requests in flight finish (≤ 10 s), background loops end, then the pools
    /// close. It returns once nothing of the server still runs (each wait bounded): a thread still at work while the
    /// process exits races the libraries freeing their state at exit.
    public func shutdown() async {
        let context = self.context
        let supabase = self.supabase
        // Before the server: a notification arriving meanwhile would write to streams being ended.
        context.live.stop()
        supabase.realtime.stop()
        await server.shutdown()
        context.mail.stop()
        context.sync.maintenance.stop()
        context.housekeeping.stop()
        context.hashing.stop()
        // A pass in flight finishes first; one stuck (a mail to an SMTP server that never answers) is not waited for.
        await Self.wait(atMost: .seconds(2)) {
            context.mail.hasEnded && context.sync.maintenance.hasEnded && context.housekeeping.hasEnded
                && context.live.notificationListener?.isRunning != true && !supabase.realtime.isListening
        }
        let pools = [context.readPool, context.publicPool, context.pool]  // a read pool closes its replicas' only
        for pool in pools { pool.shutdown() }
        // Worker threads close their connections themselves once idle.
        await Self.wait(atMost: .seconds(2)) {
            context.hashing.hasEnded && !pools.contains { $0.stats.open > 0 }
        }
        LogSink.standardError.flush()
    }

    private static func wait(atMost bound: Duration, until done: () -> Bool) async {
        let deadline = ContinuousClock.now + bound
        while !done(), ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(5))
        }
    }
}

extension Application {
    /// The OpenAPI document of the routes `build` mounts, for `quote-server openapi`: the application is built
    /// (nothing listens or connects) only to read its routes' declarations.
    public static func openAPIDocument(migrationsDirectory: URL) throws -> [UInt8] {
        var configuration = AppConfiguration(
            databaseURL: "", jwtSecret: Array(repeating: 0, count: 32), migrationsDirectory: migrationsDirectory)
        configuration.hashingThreads = 1
        let application = try build(configuration: configuration, logger: Logger(label: "openapi"))
        defer { application.context.hashing.stop() }
        return OpenAPIDocument.bytes(routes: application.server.router.routes)
    }
}
