/// The executor a request's task prefers: each part of the handler runs on the thread that made it runnable.
///
/// A handler that queries the database then starts on the event thread, runs until it hands its query to a
/// pool thread, and continues on that pool thread as soon as the result is there — two thread hand-offs per
/// request (event thread → pool thread → event thread) instead of four through Swift's global executor, which
/// bench/foundation.sh measured as the largest cost of database routes. Handlers must not block, as before:
/// the thread they run on is an event thread or a pool thread that others wait for.
final class InlineTaskExecutor: TaskExecutor {
    static let shared = InlineTaskExecutor()

    func enqueue(_ job: consuming ExecutorJob) {
        job.runSynchronously(on: asUnownedTaskExecutor())
    }
}
