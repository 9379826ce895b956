/// One database operation, written once: a single statement and what its rows mean, or a body of several
/// statements. It runs alone (`PGPool.run`: a single statement is pipelined as `PGPool.query`) or inside the
/// caller's transaction (`PGConnection.run`), with the same SQL and the same answer either way.
public struct PGOperation<Value: Sendable>: Sendable {
    enum Body: Sendable {
        case statement(PGQuery, @Sendable (() throws -> PGRows) throws -> Value)
        case connection(@Sendable (PGConnection) throws -> Value)
    }

    let body: Body

    /// One statement. `answer` runs it (by calling its argument, so it may translate the statement's failure)
    /// and turns its rows into the value.
    public static func statement(
        _ query: PGQuery, answer: @escaping @Sendable (_ run: () throws -> PGRows) throws -> Value
    ) -> PGOperation {
        PGOperation(body: .statement(query, answer))
    }

    /// Several statements on one connection (without a transaction of their own when run alone).
    public static func connection(_ body: @escaping @Sendable (PGConnection) throws -> Value) -> PGOperation {
        PGOperation(body: .connection(body))
    }
}

extension PGPool {
    /// Runs `operation` on its own.
    public func run<Value>(_ operation: PGOperation<Value>) async throws -> Value {
        switch operation.body {
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
        switch operation.body {
        case .statement(let query, let answer): return try answer { try self.query(query) }
        case .connection(let body): return try body(self)
        }
    }
}
