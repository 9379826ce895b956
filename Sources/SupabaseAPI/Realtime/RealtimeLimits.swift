import HTTPServer

/// What one client may hold of `/realtime/v1/websocket` on one instance (README, "Realtime").
public struct RealtimeLimits: Sendable {
    /// Sockets one user may have joined with their token at once: a few devices, each with a tab or two.
    public var connectionsPerUser = 16
    /// Sockets open from one IP address (after `TRUSTED_PROXIES`); they also count in the HTTP connection table.
    public var connectionsPerAddress = 64
    /// Sockets open on this instance in all, from every address: the HTTP connection table less a reserve for plain
    /// requests (see `socketShare`), so that sockets cannot take every slot of the table.
    public var sockets = Int.max
    /// Channels joined on one socket (Supabase's own default is 100).
    public var channelsPerConnection = 100
    /// Messages a socket may send each second (a burst of as many again is tolerated); past it, closed with 1008.
    public var messagesPerSecond = 50
    /// Frame and message size, outgoing buffer of a slow consumer, idle timeout.
    public var socket = WebSocketSettings()
    /// How often expired tokens are looked for (each socket's `exp`, in memory).
    public var expiryCheck: Duration = .seconds(1)
    /// How often this instance tells the others it is alive, and how long one not heard from keeps its presences
    /// and sockets (an instance killed: its members leave within the lease).
    public var peerHeartbeat: Duration = .seconds(2)
    public var peerLease: Duration = .seconds(10)

    public init() {}

    /// The sockets an instance whose HTTP connection table holds `connectionLimit` takes at most: all but a reserve
    /// of a quarter (at most 512) left to requests.
    public static func socketShare(ofConnectionTable connectionLimit: Int) -> Int {
        max(1, connectionLimit - min(512, connectionLimit / 4))
    }
}
