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
        XCTAssertEqual(url, EmbeddedPostgres.url(port: port))
        XCTAssertTrue(url.hasPrefix("postgresql://quotevault@127.0.0.1:"))
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
        try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(at: parent) }
        let cluster = EmbeddedPostgres(dataDirectory: parent.appendingPathComponent("data"), logger: Logger(label: "test"))
        XCTAssertThrowsError(try cluster.start()) { error in
            let message = String(describing: error)
            XCTAssertTrue(message.contains("not traversable"), message)
            XCTAssertTrue(message.contains(parent.path), message)
        }
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
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, Glibc.listen(fd, 1) == 0 else {
            close(fd)
            throw XCTSkip("could not occupy port \(port)")
        }
        return fd
    }
}
