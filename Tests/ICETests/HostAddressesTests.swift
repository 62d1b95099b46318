import Foundation
import Glibc
@testable import ICE
import XCTest

/// A host with loopback only: ICE falls back to 127.0.0.1 instead of failing every viewer's offer with a 500
/// (issue 34: `--share` on such a machine printed a link that could not work).
final class HostAddressesTests: XCTestCase {
    /// libnice's host addresses are this host's interface addresses (getifaddrs), loopback left out (IPv6
    /// link-local ones with their zone).
    func testHostAddressesAreThisHostsInterfacesWithoutLoopback() throws {
        var interfaces: [String] = []
        var list: UnsafeMutablePointer<ifaddrs>?
        XCTAssertEqual(getifaddrs(&list), 0)
        defer { freeifaddrs(list) }
        var node = list
        while let current = node {
            if let address = current.pointee.ifa_addr, [AF_INET, AF_INET6].contains(Int32(address.pointee.sa_family)) {
                var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
                let length = socklen_t(address.pointee.sa_family == AF_INET ? MemoryLayout<sockaddr_in>.size : MemoryLayout<sockaddr_in6>.size)
                if getnameinfo(address, length, &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST) == 0 {
                    interfaces.append(String(cString: host).split(separator: "%").first.map(String.init) ?? "")
                }
            }
            node = current.pointee.ifa_next
        }
        let addresses = ICEAgent.hostAddresses()
        print("ice: host addresses \(addresses); interfaces \(interfaces)")
        XCTAssertFalse(addresses.contains("127.0.0.1"))
        XCTAssertFalse(addresses.contains("::1"))
        for address in addresses {
            // A link-local IPv6 address comes with its zone (`fe80::1%eth0`); getnameinfo's was cut at the `%` above.
            let bare = address.split(separator: "%").first.map(String.init) ?? address
            XCTAssertTrue(interfaces.contains(bare), "\(address) is an interface's address")
        }
    }

    func testLoopbackIsUsedOnlyWhenNothingElseIsThereAndNothingWasGiven() {
        var alone = ICEAgent.Configuration(role: .controlled)
        XCTAssertTrue(alone.fallBackToLoopbackIfAlone(hostAddresses: []))
        XCTAssertEqual(alone.localAddresses, ["127.0.0.1"])
        var networked = ICEAgent.Configuration(role: .controlled)
        XCTAssertFalse(networked.fallBackToLoopbackIfAlone(hostAddresses: ["192.0.2.10"]))
        XCTAssertEqual(networked.localAddresses, [], "libnice gathers on every address, as before")
        var given = ICEAgent.Configuration(role: .controlled, localAddresses: ["10.0.0.5"])
        XCTAssertFalse(given.fallBackToLoopbackIfAlone(hostAddresses: []))
        XCTAssertEqual(given.localAddresses, ["10.0.0.5"], "an --ice-address given is kept")
    }
}
