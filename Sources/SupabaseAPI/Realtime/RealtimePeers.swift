// What the other instances hold, as this instance knows it: their tracked presences (for `presence_state` and
// `presence_diff` across instances) and their sockets per user (for the per-user limit across instances).
//
// Why announcements over NOTIFY with a heartbeat lease, not a table. Each instance already listens on
// `realtime_changes` for row changes and broadcasts, so its track, untrack and socket counts go out there too, in
// order (one sender, RealtimeAnnouncer), and every instance keeps the others' state in memory: a join reads it
// without a query, and nothing is written to disk on each track. A table (even UNLOGGED) would add a write per
// track, a read per join and a sweeper that needs its own election, and a crash of the database would still lose
// it. The cost is that an instance that dies cannot say so: each instance therefore says `alive` every
// `peerHeartbeat`, and one not heard for `peerLease` is taken as gone, its presences leaving (`presence_diff`) and
// its sockets no longer counted. An instance heard of for the first time is asked (`hello`) to re-announce what it
// holds, which is how a new instance learns the others' presences within a heartbeat; one whose listener
// reconnected (notifications may have been missed) asks everyone and drops, at each one's `synced`, what was not
// re-announced. A clean stop says `bye`.
import Foundation

struct RealtimePeers {
    /// What one presence change on another instance means for this instance's sockets joined to `topic`.
    struct Diff {
        let topic: String
        var joins: [PresenceMember] = []
        var leaves: [PresenceMember] = []
    }

    private struct Peer {
        var lastHeard: ContinuousClock.Instant
        /// Per topic, per `phx_ref`.
        var presences: [String: [String: PresenceMember]] = [:]
        var sockets: [UUID: Int] = [:]
        /// After our hello to everyone: what this peer has not re-announced yet (dropped at its `synced`).
        var unconfirmedRefs: Set<String> = []
        var unconfirmedUsers: Set<UUID> = []
    }

    private var peers: [String: Peer] = [:]
    /// The nonce of our latest hello to everyone.
    private var refreshing: String?

    /// Every presence the other instances hold in `topic`.
    func members(of topic: String) -> [PresenceMember] {
        peers.values.flatMap { Array(($0.presences[topic] ?? [:]).values) }
    }

    /// The other instances' sockets with a channel of `user`.
    func sockets(of user: UUID) -> Int { peers.values.reduce(0) { $0 + $1.sockets[user, default: 0] } }

    var count: Int { peers.count }

    /// Applies `message` from `origin`: the presence diffs for this instance's sockets, and whether `origin` was
    /// unknown until now (then it is asked for its state).
    mutating func receive(
        _ message: RealtimePeerMessage, from origin: String, at now: ContinuousClock.Instant
    ) -> (diffs: [Diff], isNew: Bool) {
        if case .bye = message { return (drop(origin), false) }
        let isNew = peers[origin] == nil
        var peer = peers[origin] ?? Peer(lastHeard: now)
        peer.lastHeard = now
        var diffs: [Diff] = []
        switch message {
        case .alive, .hello, .bye:
            break
        case .track(let topic, let member, let replaces):
            peer.unconfirmedRefs.remove(member.ref)
            var diff = Diff(topic: topic)
            if let replaces, replaces != member.ref,
                let previous = peer.presences[topic]?.removeValue(forKey: replaces)
            {
                diff.leaves.append(previous)
            }
            if peer.presences[topic]?[member.ref] == nil { diff.joins.append(member) }
            peer.presences[topic, default: [:]][member.ref] = member
            if !diff.joins.isEmpty || !diff.leaves.isEmpty { diffs.append(diff) }
        case .untrack(let topic, let ref):
            if let previous = peer.presences[topic]?.removeValue(forKey: ref) {
                diffs.append(Diff(topic: topic, leaves: [previous]))
            }
            if peer.presences[topic]?.isEmpty == true { peer.presences[topic] = nil }
        case .sockets(let user, let count):
            peer.unconfirmedUsers.remove(user)
            peer.sockets[user] = count > 0 ? count : nil
        case .synced(let nonce):
            if nonce == refreshing {
                for (topic, members) in peer.presences {
                    let stale = members.values.filter { peer.unconfirmedRefs.contains($0.ref) }
                    guard !stale.isEmpty else { continue }
                    for member in stale { peer.presences[topic]?[member.ref] = nil }
                    if peer.presences[topic]?.isEmpty == true { peer.presences[topic] = nil }
                    diffs.append(Diff(topic: topic, leaves: stale))
                }
                for user in peer.unconfirmedUsers { peer.sockets[user] = nil }
                peer.unconfirmedRefs = []
                peer.unconfirmedUsers = []
            }
        }
        peers[origin] = peer
        return (diffs, isNew)
    }

    /// Before a hello to everyone with `nonce`: what each peer holds now stays only if re-announced.
    mutating func refresh(nonce: String) {
        refreshing = nonce
        for (origin, var peer) in peers {
            peer.unconfirmedRefs = Set(peer.presences.values.flatMap(\.keys))
            peer.unconfirmedUsers = Set(peer.sockets.keys)
            peers[origin] = peer
        }
    }

    /// Drops the peers not heard from for `lease`: the leaves of their presences.
    mutating func expire(at now: ContinuousClock.Instant, lease: Duration) -> [Diff] {
        let gone = peers.filter { now - $0.value.lastHeard > lease }.keys
        return gone.flatMap { drop($0) }
    }

    private mutating func drop(_ origin: String) -> [Diff] {
        guard let peer = peers.removeValue(forKey: origin) else { return [] }
        return peer.presences.map { topic, members in Diff(topic: topic, leaves: Array(members.values)) }
    }
}
