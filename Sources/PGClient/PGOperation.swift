/// One database operation, written once: a single statement and what its rows mean, or a body of several
/// statements. It runs alone (`PGPool.run`: a single statement is pipelined as `PGPool.query`) or inside the
/// caller's transaction (`PGConnection.run`), with the same SQL and the same answer either way.
public enum PGOperation<Value: Sendable>: Sendable {
    /// One statement. `answer` runs it (by calling its argument, so it may translate the statement's failure)
    /// and turns its rows into the value.
    case statement(PGQuery, answer: @Sendable (_ run: () throws -> PGRows) throws -> Value)
    /// Several statements on one connection (without a transaction of their own when run alone).
    case connection(@Sendable (PGConnection) throws -> Value)
}

extension PGPool {
    /// Runs `operation` on its own.
    public func run<Value>(_ operation: PGOperation<Value>) async throws -> Value {
        switch operation {
        case .statement(let query, let answer):
            let rows: Result<PGRows, any Error>
            do { rows = .success(try await self.query(query)) } catch { rows = .failure(error) }
            return try answer { try rows.get() }
        case .connection(let body):
            return try await withConnection(body)
        }
    }
}

extension PGConnection {
    /// Runs `operation` on this connection, inside whatever transaction it is in.
    public func run<Value>(_ operation: PGOperation<Value>) throws -> Value {
        switch operation {
        case .statement(let query, let answer): return try answer { try self.query(query) }
        case .connection(let body): return try body(self)
        }
    }
}
