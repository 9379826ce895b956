import PGClient

/// Forgets what no longer counts: sessions and sign-in links a day past their end, failed attempts older than any
/// throttle window, uploads previewed and never confirmed within a day. Run at each sign-in (rare, and the tables
/// stay small without a loop of their own); the audit log and finished imports are kept.
enum OwnerHousekeeping {
    static func prune(_ connection: PGConnection) throws {
        try connection.query(
            """
            DELETE FROM console_sessions
            WHERE expires_at < now() - interval '1 day' OR revoked_at < now() - interval '1 day'
               OR last_seen_at < now() - interval '1 day'
            """)
        try connection.query("DELETE FROM console_sign_in_tokens WHERE expires_at < now() - interval '1 day'")
        try connection.query(
            """
            DELETE FROM console_sign_in_failures
            WHERE created_at < now() - \(OwnerSignInThrottle.forgottenAfter) * interval '1 second'
            """)
        try connection.query(
            """
            DELETE FROM console_imports WHERE state = 'preview' AND created_at < now() - interval '1 day'
            """)
    }
}
