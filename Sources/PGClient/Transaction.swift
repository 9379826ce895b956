/// Throw this from a transaction body to commit the work done so far and still fail:
/// e.g. revoke a session on a reused refresh token, then answer 401.
/// The transaction commits, then `error` is thrown to the caller.
public struct PGCommitThenThrow: Error {
    public var error: any Error
    public init(_ error: any Error) { self.error = error }
}

extension PGConnection {
    /// Runs `body` in a transaction: COMMIT if it returns, ROLLBACK if it throws.
    ///
    /// Errors stay apart: the body's own error is rethrown unchanged (a failed ROLLBACK
    /// after it cannot mask it; the connection is then left broken for the pool to
    /// replace); a failed COMMIT throws the server's `PGError` (e.g. a serialization
    /// failure); and if the body swallowed a failed statement, COMMIT would silently roll
    /// back, so that throws `PGError` of kind `.transactionAborted` instead.
    /// Called inside another transaction, it uses a savepoint.
    @discardableResult
    public func transaction<T>(_ body: (PGConnection) throws -> T) throws -> T {
        let nested = transactionState != .idle
        let savepoint = "pgclient_savepoint_\(savepointDepth)"
        try execute(unsafeSQL: nested ? "SAVEPOINT \(savepoint)" : "BEGIN")
        savepointDepth += nested ? 1 : 0
        defer { savepointDepth -= nested ? 1 : 0 }

        let value: T
        do {
            value = try body(self)
        } catch let commitThenThrow as PGCommitThenThrow {
            try finish(nested: nested, savepoint: savepoint)
            throw commitThenThrow.error
        } catch {
            // Best effort: if ROLLBACK fails the connection is broken or about to be
            // discarded, and the body's error is the one the caller needs.
            try? execute(
                unsafeSQL: nested ? "ROLLBACK TO SAVEPOINT \(savepoint); RELEASE SAVEPOINT \(savepoint)" : "ROLLBACK")
            throw error
        }
        try finish(nested: nested, savepoint: savepoint)
        return value
    }

    private func finish(nested: Bool, savepoint: String) throws(PGError) {
        if transactionState == .failedTransaction {
            try? execute(
                unsafeSQL: nested ? "ROLLBACK TO SAVEPOINT \(savepoint); RELEASE SAVEPOINT \(savepoint)" : "ROLLBACK")
            throw PGError(
                kind: .transactionAborted,
                message: "a statement in the transaction failed and its error was not propagated; rolled back")
        }
        try execute(unsafeSQL: nested ? "RELEASE SAVEPOINT \(savepoint)" : "COMMIT")
    }
}
