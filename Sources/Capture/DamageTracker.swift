internal import CXCB

/// The one owner of a DAMAGE object on the root window: the server reports (as
/// ``XConnection/Event/damage(_:)``) whenever the bounding box of not-yet-repaired changes grows, and
/// ``repairAll()`` empties it again just before a grab, so changes that land during or after the grab
/// are reported anew. Destroyed in `deinit`.
///
/// Bounding-box reporting keeps the event count low (a scrolling terminal does not flood the connection)
/// while still telling where the change is, so a region or monitor capture ignores changes elsewhere.
final class DamageTracker {
    private let connection: XConnection
    private let damage: xcb_damage_damage_t

    /// - Throws: ``CaptureError/requestFailed(request:errorCode:)`` when the server refuses the object.
    init(connection: XConnection) throws(CaptureError) {
        let damage = connection.generateID()
        try connection.check("DamageCreate", xcb_damage_create_checked(
            connection.handle, damage, connection.root, UInt8(XCB_DAMAGE_REPORT_LEVEL_BOUNDING_BOX.rawValue)))
        self.connection = connection
        self.damage = damage
    }

    deinit {
        xcb_damage_destroy(connection.handle, damage)
        connection.flush()
    }

    /// Marks everything repaired (`DamageSubtract` with no regions). Sent, not waited for: the grab that
    /// follows is a round trip, and the server handles requests in order.
    /// - Returns: the request's sequence number (events the server sends after handling it carry it or later).
    @discardableResult
    func repairAll() -> UInt32 {
        xcb_damage_subtract(connection.handle, damage, xcb_xfixes_region_t(XCB_NONE), xcb_xfixes_region_t(XCB_NONE)).sequence
    }
}
