internal import CXCB
import Glibc

/// One RandR monitor (RandR 1.5 `GetMonitors`): a named rectangle of the screen, as
/// `xrandr --listmonitors` shows it. `xrandr --setmonitor` defines more.
public struct MonitorInfo: Sendable, Equatable, CustomStringConvertible {
    /// 0-based position in the server's list (what `--monitor INDEX` selects).
    public var index: Int
    /// The monitor's name (`--monitor NAME`).
    public var name: String
    /// Its area of the root window.
    public var area: CaptureRect
    /// True for the primary monitor.
    public var isPrimary: Bool

    /// A monitor as the server lists it.
    public init(index: Int, name: String, area: CaptureRect, isPrimary: Bool) {
        self.index = index
        self.name = name
        self.area = area
        self.isPrimary = isPrimary
    }

    /// `0: NAME 1920x1080+0+0 primary` (the `--list-monitors` line).
    public var description: String { "\(index): \(name) \(area)\(isPrimary ? " primary" : "")" }
}

extension MonitorInfo {
    /// The server's monitors, active ones only, in its order.
    static func list(_ connection: XConnection) throws(CaptureError) -> [MonitorInfo] {
        let handle = connection.handle
        let root = connection.root
        let reply = try connection.reply("RRGetMonitors") {
            xcb_randr_get_monitors_reply(handle, xcb_randr_get_monitors(handle, root, 1), $0)
        }
        defer { free(reply) }
        var monitors: [MonitorInfo] = []
        var iterator = xcb_randr_get_monitors_monitors_iterator(reply)
        while iterator.rem > 0 {
            if let info = iterator.data?.pointee {
                monitors.append(MonitorInfo(
                    index: monitors.count, name: try connection.atomName(info.name),
                    area: CaptureRect(x: Int(info.x), y: Int(info.y), width: Int(info.width), height: Int(info.height)),
                    isPrimary: info.primary != 0))
            }
            xcb_randr_monitor_info_next(&iterator)
        }
        return monitors
    }

    /// The monitor `selector` names among `monitors`.
    /// - Throws: ``CaptureError/noSuchMonitor(_:available:)``.
    static func find(_ selector: MonitorSelector, in monitors: [MonitorInfo]) throws(CaptureError) -> MonitorInfo {
        let found: MonitorInfo? = switch selector {
        case .name(let name): monitors.first { $0.name == name }
        case .index(let index): monitors.first { $0.index == index }
        }
        guard let found else {
            throw .noSuchMonitor(selector.description, available: monitors.map { "\($0.index)=\($0.name)" })
        }
        return found
    }
}
