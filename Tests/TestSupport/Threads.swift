import Foundation

/// Runs `count` copies of `body` on their own threads; `wait()` blocks until all ended and rethrows a failure.
public func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) throws -> Void) -> ThreadGroup {
    let group = ThreadGroup()
    for index in 0..<count {
        group.group.enter()
        Thread {
            do { try body(index) } catch { group.failure.value = error }
            group.group.leave()
        }.start()
    }
    return group
}

public final class ThreadGroup: Sendable {
    public let group = DispatchGroup()
    public let failure = Locked<(any Error)?>(nil)

    public func wait() throws {
        group.wait()
        if let error = failure.value { throw error }
    }
}
