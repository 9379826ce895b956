import Foundation
import QuoteAPI
import AuthJWT
import TestSupport
import XCTest

/// The `quote-server` executable itself: configuration, the embedded database, signals.
final class ServerCommandTests: XCTestCase {
    private let secret = "command-test-secret-0123456789-0123456789"

    func testServeMigratesServesAndExitsZeroOnSIGTERM() async throws {
        let url = try TestDatabase.makeDatabase()
        let server = try ServerProcess(
            ["serve"],
            environment: [
                "DATABASE_URL": url, "JWT_SECRET": secret, "PORT": "0", "LOG_FORMAT": "json",
            ])
        let port = try await server.waitForPort()
        let client = HTTPTestClient(port: port)
        let health = try client.get("/health")
        XCTAssertEqual(health.status, 200)
        XCTAssertEqual(try client.get("/ready").status, 200, "serve applied the migrations")
        XCTAssertEqual(try client.get("/v1/quotes/not-a-uuid?access_token=secret-looking").status, 404)
        // Its allocator is jemalloc (Package.swift links it; glibc's slowed requests beside many WebSockets).
        // /proc files say they are empty: read to the end.
        let maps =
            try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/\(server.pid)/maps")).readToEnd()
            .map { String(decoding: $0, as: UTF8.self) } ?? ""
        XCTAssertTrue(maps.contains("/libjemalloc.so"), "quote-server runs without jemalloc")
        server.signal(SIGTERM)
        let status = try await server.waitForExit()
        XCTAssertEqual(status, 0, server.output)
        XCTAssertThrowsError(try client.get("/health"), "no longer listening")
        // Every log line is JSON; each request has its access line, without query strings.
        var requests: [[String: Any]] = []
        for line in server.output.split(separator: "\n") {
            XCTAssertNoThrow(try JSONSerialization.jsonObject(with: Data(line.utf8)), String(line))
            if let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                object["msg"] as? String == "request"
            {
                requests.append(object)
            }
        }
        let healthLine = try XCTUnwrap(
            requests.first { $0["request_id"] as? String == health.header("X-Request-Id") }, server.output)
        XCTAssertEqual(healthLine["level"] as? String, "info")
        XCTAssertEqual(healthLine["method"] as? String, "GET")
        XCTAssertEqual(healthLine["route"] as? String, "/health")
        XCTAssertEqual(healthLine["status"] as? Int, 200)
        XCTAssertNotNil(healthLine["duration_ms"] as? Double)
        XCTAssertNotNil(healthLine["ts"] as? String)
        XCTAssertTrue(requests.contains { $0["route"] as? String == "/v1/quotes/{id}" && $0["status"] as? Int == 404 })
        XCTAssertFalse(server.output.contains("secret-looking"), "query strings are not logged")
    }

    func testHealthcheckCommandPassesAgainstARunningServerAndFailsOtherwise() async throws {
        let url = try TestDatabase.makeDatabase()
        let server = try ServerProcess(
            ["serve"],
            environment: [
                "DATABASE_URL": url, "JWT_SECRET": secret, "HOST": "127.0.0.1", "PORT": "0",
            ])
        let port = try await server.waitForPort()
        // The image sets HOST=0.0.0.0: the check then asks 127.0.0.1.
        for host in ["127.0.0.1", "0.0.0.0"] {
            let check = try ServerProcess(["healthcheck"], environment: ["HOST": host, "PORT": String(port)])
            let status = try await check.waitForExit()
            XCTAssertEqual(status, 0, "HOST=\(host): \(check.output)")
        }

        // A listener that accepts but never answers: the check gives up after its timeout.
        let silent = try SilentListener()
        let hung = try ServerProcess(["healthcheck", "--timeout", "1"], environment: ["PORT": String(silent.port)])
        let hungStatus = try await hung.waitForExit(timeout: .seconds(10))
        XCTAssertEqual(hungStatus, 1, hung.output)
        XCTAssertTrue(hung.output.contains("timed out"), hung.output)

        // Nothing listening.
        let closedPort = silent.port
        silent.close()
        let refused = try ServerProcess(["healthcheck"], environment: ["PORT": String(closedPort)])
        let refusedStatus = try await refused.waitForExit(timeout: .seconds(10))
        XCTAssertEqual(refusedStatus, 1, refused.output)
        XCTAssertTrue(refused.output.contains("unhealthy"), refused.output)

        // A bad timeout is refused before anything is asked.
        let invalid = try ServerProcess(["healthcheck", "--timeout", "0"], environment: ["PORT": String(port)])
        let invalidStatus = try await invalid.waitForExit()
        XCTAssertNotEqual(invalidStatus, 0)
        XCTAssertNotEqual(invalidStatus, 1, "usage errors are not a health verdict: \(invalid.output)")
        server.signal(SIGTERM)
        let serverStatus = try await server.waitForExit()
        XCTAssertEqual(serverStatus, 0, server.output)
    }

    func testReplicaPoolAndCacheSettingsAreValidatedAtTheirEdges() async throws {
        let url = try TestDatabase.makeDatabase()
        let refused: [(String, String)] = [
            ("REPLICA_MAX_LAG", "-0.001"), ("REPLICA_MAX_LAG", "86400.5"), ("REPLICA_MAX_LAG", "soon"),
            ("REPLICA_CHECK_INTERVAL", "0.049"), ("REPLICA_CHECK_INTERVAL", "3600.1"),
            ("DB_PREPARED_STATEMENTS", "maybe"),
            ("ANSWER_CACHE_BYTES", "-1"), ("ANSWER_CACHE_BYTES", "1073741825"), ("ANSWER_CACHE_BYTES", "lots"),
            ("DB_PUBLIC_POOL_SIZE", "0"), ("DB_ACQUIRE_TIMEOUT", "0"), ("DB_ACQUIRE_TIMEOUT", "60001"),
            ("LIVE_KEEPALIVE_SECONDS", "0"), ("LIVE_KEEPALIVE_SECONDS", "31"), ("LIVE_STREAMS_PER_USER", "-1"),
        ]
        for (variable, value) in refused {
            let server = try ServerProcess(
                ["serve"],
                environment: [
                    "DATABASE_URL": url, "JWT_SECRET": secret, "PORT": "0", variable: value,
                ])
            let status = try await server.waitForExit()
            XCTAssertNotEqual(status, 0, "\(variable)=\(value)")
            XCTAssertTrue(server.output.contains(variable), server.output)
        }
        // The edges themselves are accepted; a replica list with a dead entry does not stop the server.
        let server = try ServerProcess(
            ["serve"],
            environment: [
                "DATABASE_URL": url, "JWT_SECRET": secret, "PORT": "0", "REPLICA_MAX_LAG": "0",
                "REPLICA_CHECK_INTERVAL": "0.05", "DB_PREPARED_STATEMENTS": "off", "ANSWER_CACHE_BYTES": "0",
                "DATABASE_READ_URL": "postgresql://nobody@127.0.0.1:1/none ; \(url)",
                "DB_PUBLIC_POOL_SIZE": "1", "DB_ACQUIRE_TIMEOUT": "60000",
            ])
        let port = try await server.waitForPort()
        XCTAssertEqual(try HTTPTestClient(port: port).get("/v1/quotes").status, 200)
        // Without answer caches, answers are made each time and are the same.
        let search = try HTTPTestClient(port: port).get("/v1/quotes/search?q=a")
        XCTAssertEqual(search.status, 200)
        XCTAssertEqual(try HTTPTestClient(port: port).get("/v1/quotes/search?q=a").text, search.text)
        server.signal(SIGTERM)
        let status = try await server.waitForExit()
        XCTAssertEqual(status, 0, server.output)
        // The shortest acquire timeout is accepted; with it, a start on a loaded machine may still find no
        // connection free within 1 ms and stop, which is not a refusal of the setting.
        let shortest = try ServerProcess(
            ["serve"],
            environment: [
                "DATABASE_URL": url, "JWT_SECRET": secret, "PORT": "0", "DB_ACQUIRE_TIMEOUT": "1",
            ])
        if (try? await shortest.waitForPort()) != nil { shortest.signal(SIGTERM) }
        _ = try await shortest.waitForExit()
        XCTAssertFalse(shortest.output.contains("DB_ACQUIRE_TIMEOUT"), shortest.output)
        // The largest answer caches allowed.
        let largest = try ServerProcess(
            ["serve"],
            environment: [
                "DATABASE_URL": url, "JWT_SECRET": secret, "PORT": "0", "ANSWER_CACHE_BYTES": "1073741824",
                "DB_ACQUIRE_TIMEOUT": "60000",
            ])
        let largestPort = try await largest.waitForPort()
        XCTAssertEqual(try HTTPTestClient(port: largestPort).get("/v1/quotes/search?q=a").status, 200)
        largest.signal(SIGTERM)
        let largestStatus = try await largest.waitForExit()
        XCTAssertEqual(largestStatus, 0, largest.output)
    }

    func testSIGTERMDrainsFirstWhenConfigured() async throws {
        let url = try TestDatabase.makeDatabase()
        let server = try ServerProcess(
            ["serve"],
            environment: [
                "DATABASE_URL": url, "JWT_SECRET": secret, "PORT": "0", "SHUTDOWN_DRAIN_SECONDS": "3",
            ])
        let port = try await server.waitForPort()
        let client = HTTPTestClient(port: port)
        XCTAssertEqual(try client.get("/ready").status, 200)
        server.signal(SIGTERM)
        var sawDraining = false
        for _ in 0..<50 where !sawDraining {  // at most 2.5 s of the 3 s drain
            try await Task.sleep(for: .milliseconds(50))
            sawDraining = try client.get("/ready").status == 503
        }
        XCTAssertTrue(sawDraining, "a load balancer's check sees the instance leave: \(server.output)")
        XCTAssertEqual(try client.get("/v1/quotes").status, 200, "while draining, requests are still served")
        XCTAssertEqual(try client.get("/health").status, 200)
        XCTAssertNil(try server.poll(), "still running during the drain period")
        let status = try await server.waitForExit(timeout: .seconds(20))
        XCTAssertEqual(status, 0, server.output)
        XCTAssertThrowsError(try client.get("/health"), "stopped after draining")

        let refused = try ServerProcess(
            ["serve"],
            environment: [
                "DATABASE_URL": url, "JWT_SECRET": secret, "PORT": "0", "SHUTDOWN_DRAIN_SECONDS": "60.5",
            ])
        let refusedStatus = try await refused.waitForExit()
        XCTAssertNotEqual(refusedStatus, 0)
        XCTAssertTrue(refused.output.contains("SHUTDOWN_DRAIN_SECONDS"), refused.output)
    }

    func testAnonKeyCommandPrintsTheKeyTheServerAccepts() async throws {
        let derived = try ServerProcess(
            ["anon-key"], environment: ["DATABASE_URL": "postgresql://unused", "JWT_SECRET": secret])
        let derivedStatus = try await derived.waitForExit()
        XCTAssertEqual(derivedStatus, 0, derived.output)
        XCTAssertEqual(
            derived.output.trimmingCharacters(in: .whitespacesAndNewlines),
            SupabaseAnonKey.derived(fromJWTSecret: Array(secret.utf8)))
        XCTAssertTrue(derived.output.hasPrefix("sb_publishable_"))
        let configured = try ServerProcess(
            ["anon-key"],
            environment: [
                "DATABASE_URL": "postgresql://unused", "JWT_SECRET": secret, "SUPABASE_ANON_KEY": "my-anon-key",
            ])
        let configuredStatus = try await configured.waitForExit()
        XCTAssertEqual(configuredStatus, 0, configured.output)
        XCTAssertEqual(configured.output.trimmingCharacters(in: .whitespacesAndNewlines), "my-anon-key")
    }

    func testServiceRoleKeyCommandPrintsASecretKeyUnlikeTheAnonKey() async throws {
        let derived = try ServerProcess(
            ["service-role-key"], environment: ["DATABASE_URL": "postgresql://unused", "JWT_SECRET": secret])
        let status = try await derived.waitForExit()
        XCTAssertEqual(status, 0, derived.output)
        let key = derived.output.trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertEqual(key, SupabaseServiceRoleKey.derived(fromJWTSecret: Array(secret.utf8)))
        XCTAssertTrue(key.hasPrefix("sb_secret_"))
        XCTAssertNotEqual(key, SupabaseAnonKey.derived(fromJWTSecret: Array(secret.utf8)))
        XCTAssertNotEqual(
            key, SupabaseServiceRoleKey.derived(fromJWTSecret: Array("another-secret-0123456789-0123456789".utf8)))
    }

    func testWithoutDatabaseURLAnEmbeddedClusterIsStartedAndStoppedOnSIGINT() async throws {
        let data = URL(fileURLWithPath: "/tmp/quotevault-command-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(
            at: data, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        defer { try? FileManager.default.removeItem(at: data) }
        defer { try? FileManager.default.removeItem(atPath: data.path + "-backups") }  // the default BACKUP_REPO
        let server = try ServerProcess(["serve"], environment: ["QUOTEVAULT_DATA": data.path, "PORT": "0"])
        let port = try await server.waitForPort(timeout: .seconds(120))
        XCTAssertEqual(try HTTPTestClient(port: port).get("/ready").status, 200)
        XCTAssertTrue(
            FileManager.default.fileExists(atPath: data.appendingPathComponent("jwt-secret").path),
            "embedded mode generates and keeps a JWT secret")
        server.signal(SIGINT)
        let status = try await server.waitForExit(timeout: .seconds(60))
        XCTAssertEqual(status, 0, server.output)
        XCTAssertFalse(
            FileManager.default.fileExists(atPath: data.appendingPathComponent("postgres/postmaster.pid").path),
            "the embedded PostgreSQL was stopped on exit")
    }

    func testDatabaseURLWithoutJWTSecretIsRefused() async throws {
        let server = try ServerProcess(
            ["serve"], environment: ["DATABASE_URL": "postgresql://127.0.0.1:1/none", "PORT": "0"])
        let status = try await server.waitForExit()
        XCTAssertNotEqual(status, 0)
        XCTAssertTrue(server.output.contains("JWT_SECRET"), server.output)
    }

    func testMigrateCommandAppliesMigrations() async throws {
        let url = try TestDatabase.makeDatabase()
        let migrate = try ServerProcess(["migrate"], environment: ["DATABASE_URL": url])
        let status = try await migrate.waitForExit()
        XCTAssertEqual(status, 0, migrate.output)
        let again = try ServerProcess(["migrate", "--database-url", url], environment: [:])
        let secondStatus = try await again.waitForExit()
        XCTAssertEqual(secondStatus, 0, again.output)
        XCTAssertTrue(again.output.contains("\"count\":0"), "a second run applies nothing: \(again.output)")
    }
}
