/// The viewer sessions that have not connected yet, by client address (sans-I/O; the owner passes the time,
/// CLOCK_MONOTONIC µs): which address may take a viewer slot, and whose session gives its slot up when the call
/// is full.
///
/// What harms is one client holding every slot with offers it never connects (a break-it trial kept all 16 for
/// 30 s with 16 POSTs), not many sessions from one address: twenty colleagues behind one office NAT share an
/// address and open the link in the same second (issue 31: a fixed 4 pending per address answered 12 of 16 with
/// 429). So while slots are free any address may take them; when the call is full, a newcomer from another
/// address takes the slot of the oldest unconnected session of the address holding the most, if that address
/// holds more than ``fairShare`` of them. Real browsers connect within a second or two, so the sessions given up
/// are almost always offers that were never going to connect; a newcomer from the address that holds the most
/// is refused (429) rather than evicting anyone.
struct PendingSessions: Sendable, Equatable {
    struct Entry: Sendable, Equatable {
        var address: String
        var sinceMicros: UInt64
    }

    /// Unconnected sessions an address keeps whatever newcomers come (``SharingConfiguration/maxPendingPerAddress``).
    let fairShare: Int
    /// By session id: the sessions registered and not connected yet, with a known client address.
    private(set) var sessions: [String: Entry] = [:]

    init(fairShare: Int) { self.fairShare = max(1, fairShare) }

    mutating func add(_ id: String, address: String, nowMicros: UInt64) {
        sessions[id] = Entry(address: address, sinceMicros: nowMicros)
    }

    /// The session connected, ended or was given up.
    mutating func remove(_ id: String) { sessions[id] = nil }

    /// Unconnected sessions from `address`.
    func count(from address: String) -> Int { sessions.values.reduce(0) { $0 + ($1.address == address ? 1 : 0) } }

    /// The call is full and a newcomer from `address` (nil: unknown) offers: the session whose slot it takes —
    /// the oldest of the address with the most unconnected sessions, when that is more than ``fairShare`` and
    /// the address is not the newcomer's — or nil (the newcomer is refused).
    func sessionToGiveUp(forNewcomerFrom address: String?) -> String? {
        Self.sessionToGiveUp(among: sessions, fairShare: fairShare, forNewcomerFrom: address)
    }

    /// ``sessionToGiveUp(forNewcomerFrom:)`` among `sessions` (by id: address and since when, µs) with `fairShare`
    /// (at least 1): the rule alone, for an owner that keeps the sessions in its own records.
    static func sessionToGiveUp(among sessions: [String: Entry], fairShare: Int, forNewcomerFrom address: String?) -> String? {
        let fairShare = max(1, fairShare)
        var counts: [String: Int] = [:]
        for entry in sessions.values { counts[entry.address, default: 0] += 1 }
        // The most, ties broken by address so the choice does not depend on dictionary order.
        guard let (heaviest, count) = counts.max(by: { ($0.value, $1.key) < ($1.value, $0.key) }),
            count > fairShare, heaviest != address
        else { return nil }
        return sessions.filter { $0.value.address == heaviest }
            .min { ($0.value.sinceMicros, $0.key) < ($1.value.sinceMicros, $1.key) }?.key
    }
}
