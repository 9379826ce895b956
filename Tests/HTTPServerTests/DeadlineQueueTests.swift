import HTTPServer
import XCTest

/// The heap behind the WebSocket idle and close deadlines and the Realtime token expiries: what is due comes out,
/// earliest first, and nothing else.
final class DeadlineQueueTests: XCTestCase {
    func testOnlyWhatIsDueComesOutEarliestFirst() {
        var queue = DeadlineQueue<Int, Int>()
        var generator = SystemRandomNumberGenerator()
        let deadlines = (0..<5_000).map { _ in Int.random(in: 0..<1_000, using: &generator) }
        for (element, deadline) in deadlines.enumerated() { queue.add(element, at: deadline) }
        XCTAssertEqual(queue.count, 5_000)
        XCTAssertEqual(queue.nextDeadline, deadlines.min())

        let due = queue.removeDue(through: 499)
        XCTAssertEqual(due.map { deadlines[$0] }, deadlines.filter { $0 <= 499 }.sorted())
        XCTAssertEqual(queue.count, deadlines.filter { $0 > 499 }.count)
        XCTAssertEqual(queue.nextDeadline, deadlines.filter { $0 > 499 }.min())
        XCTAssertEqual(queue.removeDue(through: 499), [], "nothing comes out twice")

        let rest = queue.removeDue(through: 1_000)
        XCTAssertEqual(rest.map { deadlines[$0] }, deadlines.filter { $0 > 499 }.sorted())
        XCTAssertEqual(queue.count, 0)
        XCTAssertNil(queue.nextDeadline)
    }

    func testEqualDeadlinesComeOutInTheOrderTheyWereAdded() {
        var queue = DeadlineQueue<Int, String>()
        for name in ["a", "b", "c", "d", "e"] { queue.add(name, at: 7) }
        queue.add("early", at: 3)
        queue.add("late", at: 9)
        XCTAssertEqual(queue.removeDue(through: 8), ["early", "a", "b", "c", "d", "e"])
        XCTAssertEqual(queue.removeDue(through: 9), ["late"])
    }

    /// Added while others come out (as a socket heard again is put back at its new deadline).
    func testAddingBetweenRemovalsKeepsTheOrder() {
        var queue = DeadlineQueue<Int, Int>()
        var expected: [Int] = []
        var taken: [Int] = []
        for round in 0..<200 {
            for offset in [5, 1, 9, 3] {
                queue.add(round * 10 + offset, at: round * 10 + offset)
                expected.append(round * 10 + offset)
            }
            taken += queue.removeDue(through: round * 10 + 4)
        }
        taken += queue.removeDue(through: .max)
        XCTAssertEqual(taken, expected.sorted())
    }
}
