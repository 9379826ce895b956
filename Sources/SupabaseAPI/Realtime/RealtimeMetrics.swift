import Foundation
import Synchronization

/// Counters of the Realtime door for `/metrics`: plain atomics, so counting a message costs no lock; the gauges
/// (sockets, channels) are read from the hub when scraped.
public final class RealtimeMetrics: Sendable {
    /// Why a socket or a join was refused or a socket closed (a fixed set, so the label set cannot grow).
    enum Reason: String, CaseIterable, Sendable {
        // refused at the handshake or the join
        case connectionsPerAddress = "connections_per_address"
        /// The instance held all the sockets it may, shared evenly between addresses.
        case socketsPerInstance = "sockets_per_instance"
        case connectionsPerUser = "connections_per_user"
        case channelsPerConnection = "channels_per_connection"
        case databaseUnavailable = "database_unavailable"
        // channels closed by the server
        case tokenExpired = "token_expired"
        case sessionEnded = "session_ended"
        case invalidToken = "invalid_token"
        // sockets closed by the server
        case messageRate = "message_rate"
        case oversize
        case slowConsumer = "slow_consumer"
        case idle
        case protocolError = "protocol_error"
        case shutdown
        /// Closed to make room for a socket of an address holding fewer.
        case madeRoom = "made_room"
    }

    /// What was dropped instead of delivered.
    enum Drop: String, CaseIterable, Sendable {
        /// A notification on the changes channel that is neither a change nor a broadcast.
        case unreadableNotification = "unreadable_notification"
        /// A broadcast that could not be notified to the other instances (the database did not take it).
        case broadcastNotNotified = "broadcast_not_notified"
        /// A binary broadcast for a vsn 1.0.0 socket, which cannot carry bytes.
        case binaryForVersionOne = "binary_for_vsn_1"
        /// A message the socket did not take (closing, or cut for falling behind).
        case socketRefused = "socket_refused"
    }

    /// Delivery delay buckets (commit to send), in microseconds.
    static let delayBuckets: [Int] = [
        1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000, 1_000_000, 2_500_000, 5_000_000,
    ]

    /// One counter (an atomic in a class, so that counters can sit in arrays).
    private final class Counter: Sendable {
        private let atomic = Atomic<Int>(0)
        func add(_ count: Int = 1) { atomic.wrappingAdd(count, ordering: .relaxed) }
        var value: Int { atomic.load(ordering: .relaxed) }
        var text: String { String(value) }
    }

    private let received = Counter()
    private let sent = Counter()
    private let changesDelivered = Counter()
    private let listenerLosses = Counter()
    private let reasons = Reason.allCases.map { _ in Counter() }
    private let drops = Drop.allCases.map { _ in Counter() }
    private let delayCounts = delayBuckets.map { _ in Counter() }
    private let delayCount = Counter()
    private let delayMicroseconds = Counter()

    init() {}

    func receivedMessage() { received.add() }
    func sentMessages(_ count: Int = 1) { sent.add(count) }
    func listenerLost() { listenerLosses.add() }
    func count(_ reason: Reason) { reasons[Reason.allCases.firstIndex(of: reason)!].add() }
    func dropped(_ drop: Drop, _ count: Int = 1) { drops[Drop.allCases.firstIndex(of: drop)!].add(count) }

    /// `count` change messages sent, `delay` after their write.
    func delivered(_ count: Int, delay: TimeInterval?) {
        guard count > 0 else { return }
        changesDelivered.add(count)
        sentMessages(count)
        guard let delay else { return }
        let micros = max(0, Int(delay * 1_000_000))
        if let bucket = Self.delayBuckets.firstIndex(where: { micros <= $0 }) {
            delayCounts[bucket].add(count)
        }
        delayCount.add(count)
        delayMicroseconds.add(micros * count)
    }

    /// Prometheus text, with the gauges given.
    func exposition(sockets: Int, channels: [(kind: String, count: Int)], listening: Bool) -> String {
        var lines: [String] = []
        func metric(_ name: String, _ type: String, _ help: String, _ samples: [(labels: String, value: String)]) {
            lines.append("# HELP \(name) \(help)")
            lines.append("# TYPE \(name) \(type)")
            for (labels, value) in samples { lines.append("\(name)\(labels) \(value)") }
        }
        metric("realtime_sockets", "gauge", "Realtime WebSockets open now.", [("", String(sockets))])
        metric(
            "realtime_channels", "gauge",
            "Realtime channels joined now, by what they use (a channel may count under several kinds; all: every one).",
            channels.map { (#"{kind="\#($0.kind)"}"#, String($0.count)) })
        metric(
            "realtime_listening", "gauge", "1 while the changes listener is connected to PostgreSQL.",
            [("", listening ? "1" : "0")])
        metric(
            "realtime_messages_received_total", "counter", "Messages received from Realtime clients.",
            [("", received.text)])
        metric("realtime_messages_sent_total", "counter", "Messages sent to Realtime clients.", [("", sent.text)])
        metric(
            "realtime_changes_delivered_total", "counter", "postgres_changes messages sent.",
            [("", changesDelivered.text)])
        var buckets: [(String, String)] = []
        var cumulative = 0
        for (index, limit) in Self.delayBuckets.enumerated() {
            cumulative += delayCounts[index].value
            buckets.append((#"_bucket{le="\#(Double(limit) / 1_000_000)"}"#, String(cumulative)))
        }
        let total = delayCount.value
        buckets.append((#"_bucket{le="+Inf"}"#, String(total)))
        buckets.append(("_sum", String(Double(delayMicroseconds.value) / 1_000_000)))
        buckets.append(("_count", String(total)))
        lines.append("# HELP realtime_delivery_delay_seconds Time from a change's write to its message being sent.")
        lines.append("# TYPE realtime_delivery_delay_seconds histogram")
        for (suffix, value) in buckets { lines.append("realtime_delivery_delay_seconds\(suffix) \(value)") }
        metric(
            "realtime_refusals_total", "counter",
            "Realtime sockets or joins refused, channels closed and sockets closed by the server, by reason.",
            Reason.allCases.enumerated().map { (#"{reason="\#($1.rawValue)"}"#, reasons[$0].text) })
        metric(
            "realtime_dropped_total", "counter", "Realtime notifications and messages dropped, by what.",
            Drop.allCases.enumerated().map { (#"{what="\#($1.rawValue)"}"#, drops[$0].text) })
        metric(
            "realtime_listener_losses_total", "counter",
            "Times the changes listener lost PostgreSQL (changes written meanwhile are missed).",
            [("", listenerLosses.text)])
        return lines.joined(separator: "\n") + "\n"
    }
}
