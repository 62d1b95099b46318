internal import CNice

extension ICEAgent {
    /// This host's IP addresses that ICE gathers host candidates on when no `--ice-address` is given, as text
    /// (dotted IPv4 or IPv6 without brackets), in libnice's order: every interface's address but loopback
    /// (`nice_interfaces_get_local_ips(FALSE)`, libnice's interfaces.c). Empty on a machine with loopback only,
    /// where a call would answer every viewer's offer with "no usable local address".
    public static func hostAddresses() -> [String] {
        guard let list = nice_interfaces_get_local_ips(0) else { return [] }
        defer { g_list_free_full(list, g_free) }
        var addresses: [String] = []
        var node: UnsafeMutablePointer<GList>? = list
        while let current = node {
            if let text = current.pointee.data?.assumingMemoryBound(to: CChar.self) { addresses.append(String(cString: text)) }
            node = current.pointee.next
        }
        return addresses
    }
}

extension ICEAgent.Configuration {
    /// With no ``localAddresses`` given and none but loopback on this host (`hostAddresses` empty), ICE could
    /// gather nothing (libnice leaves loopback out) and every viewer's offer would fail: use 127.0.0.1 then, so
    /// viewers on this machine (or in its network namespace) can watch. Returns true when it did, for the caller
    /// to say so at start; false when addresses were given or the host has others (nothing changes).
    public mutating func fallBackToLoopbackIfAlone(hostAddresses: [String] = ICEAgent.hostAddresses()) -> Bool {
        guard localAddresses.isEmpty, hostAddresses.isEmpty else { return false }
        localAddresses = ["127.0.0.1"]
        return true
    }
}
