import Foundation
import PGClient

extension TestApp {
    /// The scans in the plans of every statement the real search function runs (auto_explain, nested statements,
    /// with row counts; not the statements' text), read on a connection of its own.
    public func scansInPlans(of call: String) throws -> String {
        try planLines(of: call) { $0.contains("Scan") }
    }

    /// The lines of those plans that `keep` selects.
    public func planLines(of call: String, keep: (Substring) -> Bool) throws -> String {
        let notices = LogCapture(level: .debug)  // the server's notices carry auto_explain's plans
        let connection = try PGConnection(connectionString: databaseURL, logger: notices.logger())
        try connection.execute(
            unsafeSQL: """
                LOAD 'auto_explain'; SET auto_explain.log_min_duration = 0; SET auto_explain.log_analyze = on;
                SET auto_explain.log_nested_statements = on; SET auto_explain.log_timing = off;
                SET client_min_messages = log
                """)
        _ = try connection.query(PGQuery(unsafeSQL: call))
        return notices.all.joined(separator: "\n").split(separator: "\n").filter(keep).joined(separator: "\n")
    }
}
