import AuthJWT
import Foundation
import Logging
import PGClient
import QuoteAPI
import QuoteApp
import QuoteVault

/// A user made directly in the database for tests that are not about sign-up: real rows, a real session and
/// a real signed access token, exactly what sign-up would produce.
public struct TestUser: Sendable {
    public let id: UUID
    public let email: String
    public let sessionID: UUID
    public let accessToken: String

    /// `Authorization: Bearer …` for this user.
    public var authorization: [String: String] { ["Authorization": "Bearer \(accessToken)"] }
}

/// The real application on a fresh, migrated database, listening on a free loopback port.
public final class TestApp: Sendable {
    public let application: Application
    public let client: HTTPTestClient
    public let databaseURL: String

    private init(application: Application, databaseURL: String) {
        self.application = application
        self.databaseURL = databaseURL
        self.client = HTTPTestClient(port: application.port)
    }

    /// The repository's root, found from this file's path, for `migrations/` and `data/`.
    public static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Starts the application on a new database. `configure` may change settings (pool size, rate limits...).
    public static func start(
        databaseURL: String? = nil, _ configure: (inout AppConfiguration) -> Void = { _ in }
    ) async throws -> TestApp {
        let url = try databaseURL ?? TestDatabase.makeDatabase()
        var configuration = AppConfiguration(
            databaseURL: url, jwtSecret: Array("test-secret-0123456789-0123456789-abcdef".utf8),
            migrationsDirectory: repositoryRoot.appendingPathComponent("migrations"))
        configuration.port = 0
        configuration.databasePoolSize = 4
        // Cheap hashing keeps the suite fast; a test of its own uses the real defaults.
        configuration.scrypt = ScryptParameters(logN: 10, r: 8, p: 1)
        configure(&configuration)
        var logger = Logger(label: "test")
        logger.logLevel =
            ProcessInfo.processInfo.environment["TEST_LOG_LEVEL"].flatMap { Logger.Level(rawValue: $0) } ?? .critical
        let application = try Application.build(configuration: configuration, logger: logger)
        try await application.migrate()
        try application.start()
        // A change committed before the notification listeners listen reaches no socket or stream: tests wait.
        for _ in 0..<500
        where
            !(application.supabase.realtime.isConnected
            && application.context.live.notificationListener?.backendPID ?? 0 != 0)
        {
            try await Task.sleep(for: .milliseconds(20))
        }
        return TestApp(application: application, databaseURL: url)
    }

    public func stop() async {
        await application.shutdown()
    }

    public var pool: PGPool { application.context.pool }

    /// Runs `body` with a database connection of the app's pool.
    @discardableResult
    public func withConnection<T: Sendable>(_ body: @escaping @Sendable (PGConnection) throws -> T) async throws -> T {
        try await pool.withConnection(body)
    }

    /// Creates a user with a live session and an access token signed with the app's key.
    public func makeUser(email: String? = nil) async throws -> TestUser {
        let email = email ?? "user-\(UUID().uuidString.prefix(8).lowercased())@example.com"
        // A cheap hash: these users never log in with a password; tests of login sign up for real.
        let hash = try PasswordHasher(parameters: ScryptParameters(logN: 4, r: 1, p: 1)).hash("unused-password")
        let ids = try await withConnection { connection in
            try connection.transaction { connection in
                let rows = try connection.query(
                    "INSERT INTO users (email, password_hash) VALUES (\(email), \(hash)) RETURNING id")
                let userID = try rows[rows.startIndex].decode("id", as: UUID.self)
                try connection.query("INSERT INTO profiles (id) VALUES (\(userID))")
                let session = try connection.query(
                    """
                    INSERT INTO sessions (user_id, expires_at) \
                    VALUES (\(userID), now() + interval '30 days') RETURNING id
                    """)
                return (userID, try session[session.startIndex].decode("id", as: UUID.self))
            }
        }
        let now = Int(Date().timeIntervalSince1970)
        let claims = AccessTokenClaims(
            sub: ids.0.uuidString.lowercased(), sid: ids.1.uuidString.lowercased(), email: email, iat: now,
            exp: now + application.context.configuration.accessTokenTTL, role: "authenticated")
        let token = try application.context.signer.sign(claims)
        return TestUser(id: ids.0, email: email, sessionID: ids.1, accessToken: token)
    }
}
