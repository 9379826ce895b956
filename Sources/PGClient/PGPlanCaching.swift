/// How PostgreSQL plans a pipelined read's prepared statement (`PGPool.read(_:plan:)`).
public enum PGPlanCaching: Sendable, Hashable {
    /// PostgreSQL's default: a plan for each run's values, until a generic plan is estimated as good. Right for
    /// statements whose best plan depends on the values (a user's rows, when some users have thousands).
    case automatic
    /// One generic plan per connection, kept for every run. For index-ordered pages: PostgreSQL's default plans a
    /// `LIMIT $n` statement anew on every run, because it cannot tell how many rows a generic plan would fetch,
    /// although the plan is always the same index scan; planning then costs a page of quotes more than running it
    /// (pgbench, bench/README.md). Wrong for statements whose best plan depends on the values, and for calls of
    /// functions: it holds for the whole transaction, so their statements are forced to generic plans too.
    case generic
}
