import Foundation

/// How long WAL a standby received has been waiting for replay, from one check to the next.
///
/// Lag counts only while received WAL is unreplayed, from when it can first have been waiting: the age of the last
/// replayed transaction alone would count an idle primary's quiet time as lag (a check landing between a record's
/// arrival and its replay would report "lags 20 s" on an idle cluster), so WAL seen waiting is dated no earlier
/// than the last check that found the standby caught up. Nor is a standby holding the first part of a record that
/// crosses a WAL page lagging: a background flush stops at the page boundary, so the rest arrives (and the part
/// becomes replayable) only with the next flush. Such a tail, received up to a page boundary and less than a page
/// long, is not lag.
struct ReplayLag {
    /// One check's reading of a node (`query`).
    struct Reading: Sendable, Equatable {
        var inRecovery: Bool
        /// WAL received and flushed (`pg_last_wal_receive_lsn`), nil when not streaming.
        var received: UInt64?
        var replayed: UInt64?
        var walBlockSize: UInt64
        /// Seconds since the last replayed transaction committed on the primary.
        var lastReplayAge: Double

        /// Received WAL that replay has not reached, and which it could.
        var walWaits: Bool {
            guard inRecovery, let received, let replayed, received > replayed else { return false }
            let unflushedTail = received % walBlockSize == 0 && received - replayed < walBlockSize
            return !unflushedTail
        }
    }

    static let query: PGQuery = """
        SELECT pg_is_in_recovery() AS standby,
               pg_wal_lsn_diff(pg_last_wal_receive_lsn(), '0/0')::int8 AS received,
               pg_wal_lsn_diff(pg_last_wal_replay_lsn(), '0/0')::int8 AS replayed,
               current_setting('wal_block_size')::int8 AS block,
               coalesce(extract(epoch FROM now() - pg_last_xact_replay_timestamp()), 1e9)::float8 AS age
        """

    static func reading(_ row: PGRow) throws -> Reading {
        Reading(
            inRecovery: try row.decode("standby"),
            received: try row.decode("received", as: Int64?.self).map(UInt64.init),
            replayed: try row.decode("replayed", as: Int64?.self).map(UInt64.init),
            walBlockSize: UInt64(max(1, try row.decode("block", as: Int64.self))),
            lastReplayAge: try row.decode("age"))
    }

    /// Received positions seen waiting, oldest first, with when they started waiting.
    private var waiting: [(position: UInt64, since: ContinuousClock.Instant)] = []
    private static let maxWaiting = 64
    /// When a check last found nothing waiting (nil: never yet).
    private var caughtUpAt: ContinuousClock.Instant?

    /// The lag in seconds after `reading` taken at `now`. `recheck` reads the node again a moment later; it is
    /// called only when WAL waits and nothing older was seen waiting.
    mutating func update(_ reading: Reading, at now: ContinuousClock.Instant, recheck: () throws -> Reading) rethrows
        -> Double
    {
        guard reading.walWaits, let received = reading.received, let replayed = reading.replayed else {
            waiting.removeAll()
            caughtUpAt = now
            return 0
        }
        waiting.removeAll { $0.position <= replayed }
        if waiting.isEmpty {
            // WAL waits and nothing older did at the last check: a record caught in the instant between its
            // arrival and its replay, or replay that is behind. A moment later tells them apart; if replay is still
            // behind, the WAL has waited at most since the last replayed transaction, and since the last check
            // that found the standby caught up.
            let again = try recheck()
            guard again.walWaits, let replayedAgain = again.replayed, replayedAgain < received else {
                caughtUpAt = now
                return 0
            }
            let sinceLastTransaction = now - .milliseconds(Int64(again.lastReplayAge * 1000))
            waiting.append((received, max(sinceLastTransaction, caughtUpAt ?? sinceLastTransaction)))
        } else if waiting.count < Self.maxWaiting, waiting[waiting.count - 1].position < received {
            waiting.append((received, now))
        }
        return (now - waiting[0].since) / .seconds(1)
    }
}
