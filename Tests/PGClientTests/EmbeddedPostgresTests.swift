import EmbeddedPostgres
import Foundation
import Logging
import PGClient
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// EmbeddedPostgres lifecycle edge cases (restart and recovery are in PoolTests).
final class EmbeddedPostgresTests: XCTestCase {
    func testFindsBinaries() throws {
        let bin = try EmbeddedPostgres.findBinaries()
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: bin.appendingPathComponent("initdb").path))
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: bin.appendingPathComponent("pg_ctl").path))
    }

    func testTakenPortIsReplaced() throws {
        let cluster = try TestDatabase.makeDedicatedCluster(label: "port")
        let url = try cluster.start()
        defer { try? cluster.stop() }
        let port = try XCTUnwrap(cluster.port)
        XCTAssertEqual(url, EmbeddedPostgres.url(port: port, password: try XCTUnwrap(cluster.password)))
        XCTAssertTrue(url.hasPrefix("postgresql://quotevault:"))
        try cluster.stop()

        // Someone else listens on the remembered port now.
        let blocker = try listen(on: port)
        defer { close(blocker) }
        let moved = try cluster.start()
        XCTAssertNotEqual(moved, url)
        let connection = try PGConnection(connectionString: moved)
        XCTAssertEqual(try single(connection.query("SELECT 1 AS one")).decode("one", as: Int.self), 1)
    }

    func testUnreachableDirectoryIsAClearError() throws {
        // Only root hands the cluster to the postgres user, which cannot enter a 0700 root directory.
        try XCTSkipUnless(geteuid() == 0, "needs root")
        let parent = URL(fileURLWithPath: "/tmp/quotevault-test-\(getpid())-private-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(
            at: parent, withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(at: parent) }
        let cluster = EmbeddedPostgres(
            dataDirectory: parent.appendingPathComponent("data"), logger: Logger(label: "test"))
        XCTAssertThrowsError(try cluster.start()) { error in
            let message = String(describing: error)
            XCTAssertTrue(message.contains("not traversable"), message)
            XCTAssertTrue(message.contains(parent.path), message)
        }
    }

    func testConnectionsNeedTheGeneratedPasswordAndNothingIsTrusted() throws {
        let cluster = try TestDatabase.makeDedicatedCluster(label: "scram")
        let url = try cluster.start()
        defer { try? cluster.stop() }
        let port = try XCTUnwrap(cluster.port)
        // The secret is kept with the data, for this process's user only.
        let secret = cluster.dataDirectory.appendingPathComponent("embedded.secret")
        let mode = try XCTUnwrap(
            FileManager.default.attributesOfItem(atPath: secret.path)[.posixPermissions] as? NSNumber)
        XCTAssertEqual(mode.intValue & 0o777, 0o600)
        XCTAssertEqual(try XCTUnwrap(cluster.password).count, 64)
        let hba = try String(contentsOf: cluster.dataDirectory.appendingPathComponent("pg_hba.conf"), encoding: .utf8)
        let rules = hba.split(separator: "\n").filter {
            !$0.hasPrefix("#") && !$0.trimmingCharacters(in: .whitespaces).isEmpty
        }
        XCTAssertEqual(rules, ["host all all 127.0.0.1/32 scram-sha-256"])
        // With the password: in. Without it, or with another: refused.
        XCTAssertNoThrow(try PGConnection(connectionString: url))
        XCTAssertThrowsError(try PGConnection(connectionString: "postgresql://quotevault@127.0.0.1:\(port)/quotevault"))
        XCTAssertThrowsError(
            try PGConnection(connectionString: "postgresql://quotevault:guess@127.0.0.1:\(port)/quotevault"))
    }

    func testAClusterThatTrustedLocalConnectionsGetsAPasswordAtItsNextStart() throws {
        let cluster = try TestDatabase.makeDedicatedCluster(label: "upgrade")
        _ = try cluster.start()
        defer { try? cluster.stop() }
        try cluster.stop()
        // As an earlier version left it: trust, no secret.
        let hba = cluster.dataDirectory.appendingPathComponent("pg_hba.conf")
        try "host all all 127.0.0.1/32 trust\n".write(to: hba, atomically: false, encoding: .utf8)
        try FileManager.default.removeItem(at: cluster.dataDirectory.appendingPathComponent("embedded.secret"))
        let url = try cluster.start()
        let port = try XCTUnwrap(cluster.port)
        XCTAssertFalse(try String(contentsOf: hba, encoding: .utf8).contains("trust"))
        XCTAssertNoThrow(try PGConnection(connectionString: url))
        XCTAssertThrowsError(try PGConnection(connectionString: "postgresql://quotevault@127.0.0.1:\(port)/quotevault"))
    }

    /// A TCP socket listening on 127.0.0.1:`port`.
    private func listen(on port: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        // The server's closed connections leave the port in TIME_WAIT.
        var reuse: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, Glibc.listen(fd, 1) == 0 else {
            close(fd)
            throw XCTSkip("could not occupy port \(port)")
        }
        return fd
    }
}
