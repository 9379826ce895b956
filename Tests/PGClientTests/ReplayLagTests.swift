import Foundation
import Logging
@testable import PGClient
import TestSupport
import XCTest

/// The replica lag check: lag counts only while received WAL waits for replay, so an idle cluster lags by nothing.
final class ReplayLagTests: XCTestCase {
    private static let page: UInt64 = 8192

    private func reading(received: UInt64?, replayed: UInt64?, age: Double = 20, standby: Bool = true)
        -> ReplayLag.Reading
    {
        ReplayLag.Reading(
            inRecovery: standby, received: received, replayed: replayed, walBlockSize: Self.page,
            lastReplayAge: age)
    }

    func testAnIdleStandbyHoldingTheUnflushedPartOfARecordDoesNotLag() {
        // An idle primary flushed up to a page boundary, in the middle of a record: its first part cannot be
        // replayed until the rest comes, and the last transaction was replayed 20 s ago.
        let boundary = 1000 * Self.page
        let idle = reading(received: boundary, replayed: boundary - 120)
        XCTAssertFalse(idle.walWaits)
        var lag = ReplayLag()
        for second in 0..<5 {
            let seconds = lag.update(idle, at: .now + .seconds(second)) {
                XCTFail("no recheck when nothing waits")
                return idle
            }
            XCTAssertEqual(seconds, 0)
        }
    }

    func testNothingReceivedUnreplayedIsNoLagWhateverTheLastTransactionsAge() {
        var lag = ReplayLag()
        XCTAssertEqual(lag.update(reading(received: 5000, replayed: 5000, age: 3600), at: .now) { fatalError() }, 0)
        XCTAssertEqual(lag.update(reading(received: nil, replayed: nil, age: 3600), at: .now) { fatalError() }, 0)
        let primary = reading(received: 9000, replayed: 5000, standby: false)
        XCTAssertEqual(lag.update(primary, at: .now) { fatalError() }, 0, "a primary lags by nothing")
    }

    func testWALReplayedByTheRecheckIsNoLag() {
        var lag = ReplayLag()
        let waiting = reading(received: 5000, replayed: 4000)
        XCTAssertEqual(lag.update(waiting, at: .now) { self.reading(received: 5200, replayed: 5200) }, 0)
    }

    func testWALCaughtBetweenArrivalAndReplayLagsOnlySinceTheLastCaughtUpCheck() {
        // An idle cluster: the last transaction was replayed 20 s ago; a record arrives and a check lands before
        // its replay. It cannot have waited longer than since the check before, which found nothing waiting.
        var lag = ReplayLag()
        let start = ContinuousClock.now
        XCTAssertEqual(lag.update(reading(received: 5000, replayed: 5000, age: 19), at: start) { fatalError() }, 0)
        let arriving = reading(received: 5400, replayed: 5000, age: 20)
        XCTAssertEqual(lag.update(arriving, at: start + .seconds(1)) { arriving }, 1, accuracy: 0.01)
        let replayed = reading(received: 5400, replayed: 5400, age: 20)
        XCTAssertEqual(lag.update(replayed, at: start + .seconds(2)) { fatalError() }, 0)
    }

    func testStuckReplayLagsFromTheLastReplayedTransactionAndGrowsUntilReplayCatchesUp() {
        var lag = ReplayLag()
        let start = ContinuousClock.now
        let stuck = reading(received: 5000, replayed: 4000, age: 3)
        XCTAssertEqual(lag.update(stuck, at: start) { stuck }, 3, accuracy: 0.01)
        let more = reading(received: 7000, replayed: 4000, age: 5)
        XCTAssertEqual(
            lag.update(more, at: start + .seconds(2)) { fatalError() }, 5, accuracy: 0.01,
            "still counted from the first WAL seen waiting")
        // Replay passed what waited first; what arrived at the second check still waits.
        let partly = reading(received: 7000, replayed: 6000, age: 1)
        XCTAssertEqual(lag.update(partly, at: start + .seconds(3)) { fatalError() }, 1, accuracy: 0.01)
        let caughtUp = reading(received: 7000, replayed: 7000, age: 1)
        XCTAssertEqual(lag.update(caughtUp, at: start + .seconds(4)) { fatalError() }, 0)
    }

    func testTheCheckReadsAPrimaryAsNotInRecovery() throws {
        var logger = Logger(label: "ReplayLagTests")
        logger.logLevel = .critical
        let connection = try PGConnection(connectionString: try TestDatabase.makeDatabase(), logger: logger)
        let reading = try ReplayLag.reading(connection.query(ReplayLag.query)[0])
        XCTAssertFalse(reading.inRecovery)
        XCTAssertNil(reading.received)
        XCTAssertGreaterThan(reading.walBlockSize, 0)
        var lag = ReplayLag()
        XCTAssertEqual(lag.update(reading, at: .now) { fatalError() }, 0)
    }
}
