import Foundation
import TestSupport
import XCTest

/// The official Supabase Python client (supabase==2.34.1 from PyPI) against the real server: every operation
/// of the Supabase verification script plus the failures clients must see (`Tests/supabase/verify.py`).
final class SupabaseClientTests: XCTestCase {
    /// A virtual environment with the pinned client, made once under `.build/` and reused.
    private func pythonWithSupabase() throws -> URL {
        let venv = TestApp.repositoryRoot.appendingPathComponent(".build/supabase-venv")
        let python = venv.appendingPathComponent("bin/python")
        if try run(python.path, ["-c", "import supabase; assert supabase.__version__ == '2.34.1'"]).status == 0 {
            return python
        }
        let created = try run("/usr/bin/env", ["python3", "-m", "venv", "--clear", venv.path])
        XCTAssertEqual(created.status, 0, "python3 -m venv failed: \(created.output)")
        let installed = try run(venv.appendingPathComponent("bin/pip").path, ["install", "-q", "supabase==2.34.1"])
        // No network means no client: that is a failure here, never a silent skip.
        XCTAssertEqual(installed.status, 0, "pip install supabase==2.34.1 failed: \(installed.output)")
        return python
    }

    private func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws
        -> (status: Int32, output: String)
    {
        guard FileManager.default.isExecutableFile(atPath: executable) else { return (127, "\(executable) not found") }
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("supabase-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: output) }
        let handle = try FileHandle(forWritingTo: output)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        // Bounded: pip on a slow network, or a client that hangs, fails the test instead of the CI run.
        let deadline = Date().addingTimeInterval(300)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
        if process.isRunning { process.terminate(); process.waitUntilExit() }
        try handle.close()
        return (process.terminationStatus, (try? String(contentsOf: output, encoding: .utf8)) ?? "")
    }

    func testOfficialPythonClientAgainstTheServer() async throws {
        let python = try pythonWithSupabase()
        // verify.py presents a rotated refresh token again at once and expects theft detection: no reuse window.
        let app = try await startTestApp { $0.refreshTokenReuseInterval = 0 }
        _ = try await app.insertQuotes((0..<25).map { "Love and life, quote number \($0)" }, author: "Mark Twain")
        let configuration = app.application.context.configuration
        let result = try run(
            python.path, [TestApp.repositoryRoot.appendingPathComponent("Tests/supabase/verify.py").path],
            environment: [
                "SB_URL": "http://127.0.0.1:\(app.application.port)",
                "SB_ANON_KEY": configuration.supabaseAnonKey,
                "SB_SERVICE_ROLE_KEY": configuration.supabaseServiceRoleKey,
                "SB_JWT_SECRET": String(decoding: configuration.jwtSecret, as: UTF8.self),
            ])
        XCTAssertEqual(result.status, 0, result.output)
        XCTAssertTrue(result.output.contains("ALL OK"), result.output)
    }
}
