/// Elements waiting for a deadline, the earliest first (a binary min-heap): adding one and taking those that are due
/// cost O(log n) each, so a periodic check costs what falls due, not what is held. Ties come out in the order they
/// were added.
///
/// Entries are never updated or removed before they fall due: a holder whose deadline moved (a socket heard from
/// again, a token swapped, a socket closed) checks the element when it comes out and adds it again if needed. That
/// keeps the frequent event (a heartbeat, a message) free of any work here.
public struct DeadlineQueue<Deadline: Comparable, Element> {
    fileprivate struct Entry {
        let deadline: Deadline
        let order: UInt64
        let element: Element

        func precedes(_ other: Entry) -> Bool {
            deadline < other.deadline || deadline == other.deadline && order < other.order
        }
    }

    private var heap: [Entry] = []
    private var added: UInt64 = 0

    public init() {}

    /// Entries waiting now.
    public var count: Int { heap.count }

    /// The earliest deadline waiting, if any.
    public var nextDeadline: Deadline? { heap.first?.deadline }

    public mutating func add(_ element: Element, at deadline: Deadline) {
        heap.append(Entry(deadline: deadline, order: added, element: element))
        added &+= 1
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].precedes(heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    /// Takes out every element whose deadline is at or before `now`, earliest first.
    public mutating func removeDue(through now: Deadline) -> [Element] {
        var due: [Element] = []
        while let first = heap.first, first.deadline <= now {
            due.append(first.element)
            removeFirst()
        }
        return due
    }

    private mutating func removeFirst() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var first = parent
            if left < heap.count, heap[left].precedes(heap[first]) { first = left }
            if right < heap.count, heap[right].precedes(heap[first]) { first = right }
            guard first != parent else { return }
            heap.swapAt(parent, first)
            parent = first
        }
    }
}

extension DeadlineQueue: Sendable where Deadline: Sendable, Element: Sendable {}
extension DeadlineQueue.Entry: Sendable where Deadline: Sendable, Element: Sendable {}
