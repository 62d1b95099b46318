import Glibc
import SDP

/// Which remote ICE candidates (from the offer or trickled, RFC 8839 §5.1) the agent will check and send to:
/// an offer can name any address, and the agent would send STUN checks there (RFC 8445 §7.2), so a viewer
/// could aim the call's packets at hosts it chose. `--remote-candidates any|private|loopback`.
///
/// Peer-reflexive candidates are not filtered: libnice learns them from checks that carried the session's
/// credentials, from the address they came from. Relayed candidates are judged by their address like the others.
public enum RemoteCandidatePolicy: String, Sendable, Equatable, CaseIterable {
    /// Every address.
    case any
    /// Loopback and private addresses only: IPv4 127/8, 10/8, 172.16/12, 192.168/16, 169.254/16 (RFC 1918,
    /// RFC 3927) and 100.64/10 (RFC 6598, carrier-grade NAT); IPv6 ::1, fc00::/7 (RFC 4193) and fe80::/10.
    case privateOnly = "private"
    /// 127/8 and ::1 only: what a call whose ICE addresses are all loopback can reach anyway.
    case loopback

    /// The policy when none is given: `loopback` when every one of `localAddresses` is a loopback
    /// address (a call bound to loopback talks to this machine only), else `any`.
    public static func automatic(localAddresses: [String]) -> RemoteCandidatePolicy {
        let kinds = localAddresses.map { AddressScope(ipLiteral: $0) }
        return !kinds.isEmpty && kinds.allSatisfy({ $0 == .loopback }) ? .loopback : .any
    }

    /// Why `address` (an IP literal) is refused, or nil when it is allowed.
    public func refusal(of address: String) -> String? {
        let scope = AddressScope(ipLiteral: address)
        switch self {
        case .any: return nil
        case .privateOnly where scope == .loopback || scope == .privateNetwork: return nil
        case .loopback where scope == .loopback: return nil
        case .privateOnly: return "\(address) is not a loopback or private address (--remote-candidates private)"
        case .loopback: return "\(address) is not a loopback address (--remote-candidates loopback)"
        }
    }
}

/// What an IP literal is, for ``RemoteCandidatePolicy``.
enum AddressScope: Equatable {
    case loopback, privateNetwork, global, notAnAddress

    init(ipLiteral text: String) {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            let a = UInt32(bigEndian: v4.s_addr)
            let first = a >> 24, second = (a >> 16) & 0xFF
            if first == 127 { self = .loopback; return }
            let isPrivate = first == 10 || (first == 172 && (16...31).contains(second)) || (first == 192 && second == 168)
                || (first == 169 && second == 254) || (first == 100 && (64...127).contains(second))
            self = isPrivate ? .privateNetwork : .global
            return
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { self = .notAnAddress; return }
        let bytes = withUnsafeBytes(of: &v6) { Array($0) }
        if bytes[0..<15].allSatisfy({ $0 == 0 }) && bytes[15] == 1 { self = .loopback; return }
        // IPv4-mapped (::ffff:a.b.c.d): judged as the IPv4 address.
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF {
            self = AddressScope(ipLiteral: "\(bytes[12]).\(bytes[13]).\(bytes[14]).\(bytes[15])")
            return
        }
        let isPrivate = bytes[0] & 0xFE == 0xFC || (bytes[0] == 0xFE && bytes[1] & 0xC0 == 0x80)
        self = isPrivate ? .privateNetwork : .global
    }
}
