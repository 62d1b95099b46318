internal import CXCB
import Foundation
import Glibc
import ScreencastSupport

/// How `--window` names an X window: its id (`0x1a00003` or decimal, as `xwininfo` and `xdotool` print it) or its
/// title (WM_NAME or _NET_WM_NAME, exactly).
public enum WindowSelector: Sendable, Equatable, CustomStringConvertible {
    case id(UInt32)
    case name(String)

    /// `0x` + hex digits or all decimal digits is an id, anything else a title.
    public init(parsing text: String) {
        if text.lowercased().hasPrefix("0x"), let id = UInt32(text.dropFirst(2), radix: 16) {
            self = .id(id)
        } else if !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isNumber }), let id = UInt32(text) {
            self = .id(id)
        } else {
            self = .name(text)
        }
    }

    public var description: String {
        switch self {
        case .id(let id): String(format: "0x%x", id)
        case .name(let name): "'\(name)'"
        }
    }
}

/// The one owner of what capturing one X window needs: its Composite redirection (automatic: the server still
/// draws it on screen, and keeps its whole picture off screen, also where other windows cover it), the pixmap
/// named for its current size (`CompositeNameWindowPixmap`, named again after a resize or a map), a DAMAGE
/// object on it (events in window coordinates) and StructureNotify on it (moves, resizes, unmap, destroy).
/// Undone in `deinit` (errors for a window already destroyed are ignored).
final class CapturedWindow {
    private let connection: XConnection
    let window: xcb_window_t
    /// The title it was found by, or its WM_NAME (for messages).
    let title: String
    /// The size of the named pixmap (the window with its border), pixels: what a grab reads.
    private(set) var width: Int
    private(set) var height: Int
    /// The window's size as ConfigureNotify says it (without the border): a change means a new pixmap.
    var configuredSize: (width: Int, height: Int)
    /// The named pixmap of the current size; nil while the window is not viewable.
    private(set) var pixmap: xcb_pixmap_t?
    private let damage: xcb_damage_damage_t

    /// Finds the window and sets the capture up.
    /// - Throws: ``CaptureError/missingExtension(name:display:)`` (Composite 0.2 is needed),
    ///   ``CaptureError/noSuchWindow(_:)``, ``CaptureError/unsupportedPixelFormat(depth:bitsPerPixel:detail:)``
    ///   for a window that is not 24 or 32 deep, and the X request errors.
    init(connection: XConnection, selector: WindowSelector) throws(CaptureError) {
        self.connection = connection
        let handle = connection.handle
        guard let composite = cxcb_composite_extension(handle), composite.pointee.present != 0 else {
            throw .missingExtension(name: "Composite", display: connection.displayName)
        }
        let version = try connection.reply("CompositeQueryVersion") {
            xcb_composite_query_version_reply(handle, xcb_composite_query_version(handle, 0, 4), $0)
        }
        let recent = version.pointee.major_version > 0 || version.pointee.minor_version >= 2
        free(version)
        guard recent else { throw .missingExtension(name: "Composite 0.2 (NameWindowPixmap)", display: connection.displayName) }

        let target: xcb_window_t
        switch selector {
        case .id(let id):
            target = id
            title = ((try? Self.title(of: id, connection)) ?? nil) ?? ""
        case .name(let name):
            guard let found = try Self.find(named: name, connection) else {
                throw .noSuchWindow("titled '\(name)' on display \(connection.displayName) (WM_NAME or _NET_WM_NAME; `xwininfo -tree -root` lists them)")
            }
            target = found
            title = name
        }
        window = target
        let geometry: UnsafeMutablePointer<xcb_get_geometry_reply_t>
        do throws(CaptureError) {
            geometry = try connection.reply("GetGeometry") { xcb_get_geometry_reply(handle, xcb_get_geometry(handle, target), $0) }
        } catch {
            throw .noSuchWindow("\(selector) on display \(connection.displayName) (\(error))")
        }
        width = Int(geometry.pointee.width)
        height = Int(geometry.pointee.height)
        configuredSize = (width, height)
        let depth = Int(geometry.pointee.depth)
        free(geometry)
        guard depth == 24 || depth == 32 else {
            throw .unsupportedPixelFormat(depth: depth, bitsPerPixel: 0, detail: "window \(selector) is \(depth) bits deep; 24 or 32 are read")
        }
        var mask = UInt32(XCB_EVENT_MASK_STRUCTURE_NOTIFY.rawValue)
        try connection.check("ChangeWindowAttributes", xcb_change_window_attributes_checked(handle, target, UInt32(XCB_CW_EVENT_MASK.rawValue), &mask))
        try connection.check("CompositeRedirectWindow", xcb_composite_redirect_window_checked(
            handle, target, UInt8(XCB_COMPOSITE_REDIRECT_AUTOMATIC.rawValue)))
        let damage = connection.generateID()
        try connection.check("DamageCreate", xcb_damage_create_checked(
            handle, damage, target, UInt8(XCB_DAMAGE_REPORT_LEVEL_BOUNDING_BOX.rawValue)))
        self.damage = damage
        let attributes = try connection.reply("GetWindowAttributes") {
            xcb_get_window_attributes_reply(handle, xcb_get_window_attributes(handle, target), $0)
        }
        let viewable = attributes.pointee.map_state == UInt8(XCB_MAP_STATE_VIEWABLE.rawValue)
        free(attributes)
        if viewable { try namePixmap() }
    }

    deinit {
        let handle = connection.handle
        if let pixmap { xcb_free_pixmap(handle, pixmap) }
        xcb_damage_destroy(handle, damage)
        xcb_composite_unredirect_window(handle, window, UInt8(XCB_COMPOSITE_REDIRECT_AUTOMATIC.rawValue))
        connection.flush()
    }

    /// Names the window's pixmap again (after a resize or a map; the old one keeps the old picture) and reads
    /// its size. A window that is not viewable just now (BadMatch) leaves `pixmap` nil.
    /// - Throws: the X request errors other than BadMatch.
    func namePixmap() throws(CaptureError) {
        let handle = connection.handle
        if let pixmap { xcb_free_pixmap(handle, pixmap) }
        pixmap = nil
        let fresh = connection.generateID()
        do throws(CaptureError) {
            try connection.check("CompositeNameWindowPixmap", xcb_composite_name_window_pixmap_checked(handle, window, fresh))
        } catch .requestFailed(_, let code) where code == Int(XCB_MATCH) {
            return
        }
        pixmap = fresh
        let geometry = try connection.reply("GetGeometry") { xcb_get_geometry_reply(handle, xcb_get_geometry(handle, fresh), $0) }
        width = Int(geometry.pointee.width)
        height = Int(geometry.pointee.height)
        free(geometry)
    }

    /// Marks the window's changes repaired (DamageSubtract), just before a grab.
    func repair() {
        xcb_damage_subtract(connection.handle, damage, xcb_xfixes_region_t(XCB_NONE), xcb_xfixes_region_t(XCB_NONE))
    }

    /// The first window, breadth first from the root, whose _NET_WM_NAME or WM_NAME is `name`.
    private static func find(named name: String, _ connection: XConnection) throws(CaptureError) -> xcb_window_t? {
        var queue = [connection.root]
        var visited = 0
        while !queue.isEmpty, visited < maximumWindowsSearched {
            let parent = queue.removeFirst()
            visited += 1
            if parent != connection.root, try title(of: parent, connection) == name { return parent }
            let handle = connection.handle
            guard let tree = xcb_query_tree_reply(handle, xcb_query_tree(handle, parent), nil) else { continue }
            let count = Int(xcb_query_tree_children_length(tree))
            if let children = xcb_query_tree_children(tree) {
                queue += UnsafeBufferPointer(start: children, count: count)
            }
            free(tree)
        }
        return nil
    }

    /// How many windows a search by title looks at, at most.
    static let maximumWindowsSearched = 10_000

    /// _NET_WM_NAME (UTF-8), else WM_NAME; nil when the window has neither.
    private static func title(of window: xcb_window_t, _ connection: XConnection) throws(CaptureError) -> String? {
        let handle = connection.handle
        for property in ["_NET_WM_NAME", "WM_NAME"] {
            let atom: xcb_atom_t
            if property == "WM_NAME" {
                atom = xcb_atom_t(XCB_ATOM_WM_NAME.rawValue)
            } else {
                guard let reply = property.withCString({ xcb_intern_atom_reply(handle, xcb_intern_atom(handle, 1, UInt16(strlen($0)), $0), nil) })
                else { continue }
                atom = reply.pointee.atom
                free(reply)
                if atom == xcb_atom_t(XCB_ATOM_NONE.rawValue) { continue }
            }
            guard let reply = xcb_get_property_reply(handle, xcb_get_property(handle, 0, window, atom, xcb_atom_t(XCB_GET_PROPERTY_TYPE_ANY.rawValue), 0, 1024), nil)
            else { continue }
            defer { free(reply) }
            let length = Int(xcb_get_property_value_length(reply))
            guard length > 0, let value = xcb_get_property_value(reply) else { continue }
            return String(decoding: UnsafeRawBufferPointer(start: value, count: length), as: UTF8.self)
        }
        return nil
    }
}
