internal import CLibPQ

extension PGConnection {
    /// How a pipeline groups its statements into transactions.
    enum PipelineMode: Equatable {
        /// Each statement is its own implicit transaction, exactly as if it had been run alone with `query(_:)`:
        /// one failing neither aborts nor rolls back the others.
        case separateTransactions
        /// All statements share one `BEGIN READ ONLY … COMMIT` and one sync point, which costs the database one
        /// transaction instead of one per statement; PostgreSQL refuses any write. When one fails, the ones
        /// after it (which the database skipped) run again in a new pipeline. `plan` says how PostgreSQL plans
        /// the statements (see `PGPlanCaching`).
        case sharedReadOnlyTransaction(plan: PGPlanCaching = .automatic)
    }

    /// Runs one statement on its own, as `query(_:)` does, but as a named prepared statement of this connection
    /// (prepared the first time, see `PreparedStatements`): a statement a leased connection runs again and again
    /// is not parsed and planned again each time. Unnamed when the connection keeps no prepared statements.
    @discardableResult
    public func queryPrepared(_ query: PGQuery) throws(PGError) -> PGRows {
        var answer: Result<PGRows, PGError>?
        runPipelined([query], mode: .separateTransactions) { _, result in answer = result }
        guard let answer else { throw PGError(kind: .connection, message: lastErrorMessage) }
        return try answer.get()
    }

    /// Runs independent statements in libpq's pipeline mode: all are sent before the first answer is read, so
    /// the batch costs the database one wake-up instead of one round trip per statement. Each runs as a named
    /// prepared statement of this connection (see `PreparedStatements`), prepared in the same pipeline the first
    /// time.
    ///
    /// `onResult(index, result)` is called exactly once per statement, in order, as soon as its answer is read
    /// (while the database works on the next ones). A broken connection fails the statements still unanswered
    /// with a `.connection` error.
    func runPipelined(
        _ queries: [PGQuery], mode: PipelineMode, onResult: (Int, Result<PGRows, PGError>) -> Void
    ) {
        var pending = Array(queries.indices)
        // Each round answers at least its first statement, so this ends.
        while !pending.isEmpty {
            let answers = runOnePipeline(pending.map { queries[$0] }, mode: mode)
            for (position, result) in answers.enumerated() { onResult(pending[position], result) }
            pending.removeFirst(answers.count)
            if isBroken {
                let error = PGError(kind: .connection, message: lastErrorMessage)
                for index in pending { onResult(index, .failure(error)) }
                return
            }
            if transactionState == .failedTransaction {
                // The shared transaction failed part-way; roll it back before sending the rest again.
                try? execute(unsafeSQL: "ROLLBACK")
            }
        }
    }

    /// One pipeline: the answers of a prefix of `queries`. All of them, unless the shared transaction failed
    /// part-way: the statements after the failure were skipped by the database and are left out, to be sent again.
    private func runOnePipeline(_ queries: [PGQuery], mode: PipelineMode) -> [Result<PGRows, PGError>] {
        func lost(_ error: PGError? = nil) -> [Result<PGRows, PGError>] {
            let error = error ?? PGError(kind: .connection, message: lastErrorMessage)
            return Array(repeating: .failure(error), count: queries.count)
        }
        guard PQenterPipelineMode(handle) == 1 else { return lost() }
        answerWatch?.answered()
        defer {
            answerWatch?.idle()
            // Fails only when answers are still unread, i.e. the connection broke: then it must not be reused.
            if PQexitPipelineMode(handle) != 1 { abandon() }
        }
        let shared = mode != .separateTransactions
        let genericPlans = mode == .sharedReadOnlyTransaction(plan: .generic)

        // Send everything. A statement libpq would misread is answered at once and not sent.
        var answers = [Result<PGRows, PGError>?](repeating: nil, count: queries.count)
        var dispatches = [Dispatch](repeating: .unnamed, count: queries.count)
        var preparing = Set<PreparedStatements.Key>()
        if shared, !send(command: "BEGIN READ ONLY") { return lost() }
        if genericPlans, !send(command: Self.genericPlans) { return lost() }
        for (index, query) in queries.enumerated() {
            do {
                let parameters = try PGParameters(query)
                let key = PreparedStatements.Key(sql: parameters.sql, types: parameters.types)
                if let name = preparedStatements.name(of: key) {
                    dispatches[index] = .prepared(name: name, key: key)
                } else if preparing.insert(key).inserted, let name = preparedStatements.newName() {
                    // A second use of the same new statement in this batch runs unnamed: were the prepare to
                    // fail, it would otherwise fail for a reason of its own.
                    dispatches[index] = .preparing(name: name, key: key)
                }
                guard send(parameters, as: dispatches[index]), shared || PQpipelineSync(handle) == 1 else {
                    return lost()
                }
            } catch {
                answers[index] = .failure(error)
            }
        }
        if shared, !send(command: "COMMIT") || PQpipelineSync(handle) != 1 { return lost() }

        // Read the answers in the order sent.
        if shared {
            for command in ["BEGIN READ ONLY"] + (genericPlans ? [Self.genericPlans.description] : []) {
                switch nextAnswer(query: command) {
                case .answered(.success): break
                case .answered(.failure(let error)), .lost(let error): return lost(error)
                case .skipped: return lost()
                }
            }
        }
        var firstSkipped: Int?
        func answered(upTo end: Int) -> [Result<PGRows, PGError>] {
            answers.prefix(min(end, firstSkipped ?? end)).map { $0! }
        }
        for (index, query) in queries.enumerated() where answers[index] == nil {
            if case .preparing(let name, let key) = dispatches[index] {
                switch nextAnswer(query: query.description) {
                case .answered(.success): preparedStatements.confirm(key, name: name)
                case .answered(.failure(let error)): answers[index] = .failure(error)  // and its run is skipped
                case .skipped: break  // and so is its run
                case .lost(let error): return answered(upTo: index) + [.failure(error)]
                }
            }
            switch nextAnswer(query: query.description) {
            case .answered(let result):
                answers[index] = result
                if case .failure(let error) = result, PreparedStatements.invalidates(error),
                    let key = dispatches[index].key
                {
                    preparedStatements.forget(key)
                }
            case .skipped:
                if answers[index] == nil { firstSkipped = firstSkipped ?? index }
            case .lost(let error): return answered(upTo: index) + [.failure(error)]
            }
            if !shared, let error = readSync(query: query.description) {
                // Whether this statement committed is unknown (its sync point never came back): it fails with the
                // connection, and so do the ones after it.
                abandon()
                return answered(upTo: index) + [.failure(error)]
            }
            // Its commit (at the sync point) stopped waiting for the synchronous standby: not acknowledged.
            if !shared, case .success = answers[index],
                let unconfirmed = takeUnconfirmedCommit(query: query.description)
            {
                answers[index] = .failure(unconfirmed)
            }
        }
        if shared {
            _ = nextAnswer(query: "COMMIT")  // committed, or skipped after a failure
            if readSync(query: "COMMIT") != nil {
                // The reads are answered (a read-only transaction has nothing to lose); the connection is not
                // reused, and statements left to run again fail with it.
                abandon()
            }
        }
        return answered(upTo: queries.count)
    }

    private enum PipelinedAnswer {
        case answered(Result<PGRows, PGError>)
        /// The database skipped the statement after an earlier failure in the same transaction.
        case skipped
        case lost(PGError)
    }

    /// Makes the transaction's statements run their generic plans (see `PGPlanCaching.generic`).
    private static let genericPlans: StaticString = "SET LOCAL plan_cache_mode = force_generic_plan"

    /// How one statement goes out.
    private enum Dispatch {
        /// Parsed and planned for this run only (the prepared-statement cache is full).
        case unnamed
        /// Runs the connection's prepared statement.
        case prepared(name: String, key: PreparedStatements.Key)
        /// Prepared in this pipeline just before it runs: the prepare's answer comes first.
        case preparing(name: String, key: PreparedStatements.Key)

        var key: PreparedStatements.Key? {
            switch self {
            case .unnamed: nil
            case .prepared(_, let key), .preparing(_, let key): key
            }
        }
    }

    /// Queues `sql` with its checked parameters, as `dispatch` says.
    private func send(_ parameters: PGParameters, as dispatch: Dispatch) -> Bool {
        let sql = parameters.sql
        return parameters.withCArguments { count, types, values, lengths, formats in
            switch dispatch {
            case .unnamed:
                return sql.withCString { PQsendQueryParams(handle, $0, count, types, values, lengths, formats, 0) }
            case .preparing(let name, _):
                let prepared = name.withCString { name in
                    sql.withCString { PQsendPrepare(handle, name, $0, count, types) }
                }
                guard prepared == 1 else { return 0 }
                return name.withCString { PQsendQueryPrepared(handle, $0, count, values, lengths, formats, 0) }
            case .prepared(let name, _):
                return name.withCString { PQsendQueryPrepared(handle, $0, count, values, lengths, formats, 0) }
            }
        } == 1
    }

    /// Queues a fixed command without parameters (BEGIN, COMMIT).
    private func send(command: StaticString) -> Bool {
        command.withUTF8Buffer { utf8 in
            utf8.withMemoryRebound(to: CChar.self) {
                PQsendQueryParams(handle, $0.baseAddress, 0, nil, nil, nil, nil, 0)
            }
        } == 1
    }

    /// The next result (libpq's `PQgetResult`): an answer, so the wait for the next one starts now.
    private func nextResult() -> OpaquePointer? {
        defer { answerWatch?.answered() }
        return PQgetResult(handle)
    }

    /// Reads a sync point's `PGRES_PIPELINE_SYNC`; the error when something else (or nothing) comes instead.
    private func readSync(query: String) -> PGError? {
        guard let pointer = nextResult() else {
            return PGError(kind: .connection, message: lastErrorMessage, query: query)
        }
        defer { PQclear(pointer) }
        guard PQresultStatus(pointer) == PGRES_PIPELINE_SYNC else {
            return PGError(kind: .connection, message: "unexpected answer in a pipeline", query: query)
        }
        return nil
    }

    /// Reads one statement's answer: its result and the NULL that ends it. A NULL where a result is due means
    /// the connection is gone.
    private func nextAnswer(query: String) -> PipelinedAnswer {
        guard let pointer = nextResult() else {
            return .lost(PGError(kind: .connection, message: lastErrorMessage, query: query))
        }
        let status = PQresultStatus(pointer)
        if status == PGRES_PIPELINE_SYNC {
            PQclear(pointer)
            return .lost(PGError(kind: .connection, message: "unexpected sync point in a pipeline", query: query))
        }
        let answer: PipelinedAnswer
        if status == PGRES_PIPELINE_ABORTED {
            PQclear(pointer)
            answer = .skipped
        } else {
            answer = .answered(Result { () throws(PGError) in try rows(of: pointer, query: query) })
        }
        // The NULL that ends this statement's results; anything else (a second result) is drained.
        while let extra = PQgetResult(handle) { PQclear(extra) }
        if case .answered(.failure(let error)) = answer, error.kind == .connection { return .lost(error) }
        return answer
    }
}
