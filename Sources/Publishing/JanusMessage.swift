import Foundation

/// The Janus HTTP API's JSON (janus.conf.meetecho.com/docs/rest.html): requests we build and replies we
/// read, sans-I/O. Every request carries a `transaction` (random, echoed back); ids are JSON integers
/// below 2⁵³.
public enum JanusMessage {
    /// A request body: `{"janus": <verb>, "transaction": <id>, …}` with `extra` fields added.
    public static func request(_ verb: String, transaction: String, _ extra: [String: Any] = [:]) -> [UInt8] {
        var object = extra
        object["janus"] = verb
        object["transaction"] = transaction
        return (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])).map(Array.init) ?? []
    }

    /// A reply object, checked: `"janus": "error"` becomes ``PublishingError/janus(code:reason:)``, a
    /// VideoRoom `error_code` in `plugindata.data` becomes ``PublishingError/videoRoom(code:reason:)``.
    /// - Throws: those, or ``PublishingError/janusProtocol(_:)`` for bytes that are not a JSON object with
    ///   a string `janus` field.
    public static func reply(_ bytes: [UInt8]) throws(PublishingError) -> [String: Any] {
        let parsed: Any
        do { parsed = try JSONSerialization.jsonObject(with: Data(bytes)) } catch {
            throw .janusProtocol("the reply is not JSON: \(String(decoding: bytes.prefix(120), as: UTF8.self))")
        }
        guard let object = parsed as? [String: Any], let kind = object["janus"] as? String else {
            throw .janusProtocol("the reply is not an object with a \"janus\" field")
        }
        try check(object, kind: kind)
        return object
    }

    /// Throws the error an event or reply object carries.
    static func check(_ object: [String: Any], kind: String) throws(PublishingError) {
        if kind == "error" {
            let error = object["error"] as? [String: Any]
            throw .janus(code: (error?["code"] as? NSNumber)?.intValue ?? 0, reason: error?["reason"] as? String ?? "(no reason)")
        }
        if let data = pluginData(object), let code = (data["error_code"] as? NSNumber)?.intValue {
            throw .videoRoom(code: code, reason: data["error"] as? String ?? "(no reason)")
        }
    }

    /// `data.id` of a `create` or `attach` success: the session or handle id.
    public static func id(_ reply: [String: Any]) throws(PublishingError) -> UInt64 {
        guard reply["janus"] as? String == "success", let data = reply["data"] as? [String: Any],
              let id = (data["id"] as? NSNumber)?.uint64Value, id > 0
        else { throw .janusProtocol("a success without data.id") }
        return id
    }

    /// `plugindata.data` of a plugin reply or event.
    public static func pluginData(_ object: [String: Any]) -> [String: Any]? {
        (object["plugindata"] as? [String: Any])?["data"] as? [String: Any]
    }

    /// The SDP answer in a long-poll result (one event object, or an array of them) for `handle`.
    /// - Throws: the error an event for `handle` carries (a refused `joinandconfigure` arrives so).
    public static func answer(inEvents bytes: [UInt8], handle: UInt64) throws(PublishingError) -> String? {
        let parsed: Any
        do { parsed = try JSONSerialization.jsonObject(with: Data(bytes)) } catch {
            throw .janusProtocol("the events are not JSON: \(String(decoding: bytes.prefix(120), as: UTF8.self))")
        }
        let events = (parsed as? [[String: Any]]) ?? (parsed as? [String: Any]).map { [$0] } ?? []
        for event in events {
            guard let kind = event["janus"] as? String else { continue }
            let sender = (event["sender"] as? NSNumber)?.uint64Value
            guard sender == nil || sender == handle else { continue }
            try check(event, kind: kind)
            if let jsep = event["jsep"] as? [String: Any], jsep["type"] as? String == "answer", let sdp = jsep["sdp"] as? String {
                return sdp
            }
        }
        return nil
    }

    /// Why a long-poll result says our publishing ended (`hangup` or `detached` for `handle`, a Janus
    /// error such as 458 when the session timed out), or nil when it does not.
    public static func endOfSession(inEvents bytes: [UInt8], handle: UInt64) throws(PublishingError) -> String? {
        let parsed: Any
        do { parsed = try JSONSerialization.jsonObject(with: Data(bytes)) } catch {
            throw .janusProtocol("the events are not JSON: \(String(decoding: bytes.prefix(120), as: UTF8.self))")
        }
        let events = (parsed as? [[String: Any]]) ?? (parsed as? [String: Any]).map { [$0] } ?? []
        for event in events {
            guard let kind = event["janus"] as? String else { continue }
            do { try check(event, kind: kind) } catch .videoRoom { continue } catch { return "\(error)" }
            let sender = (event["sender"] as? NSNumber)?.uint64Value
            if (kind == "hangup" || kind == "detached"), sender == handle {
                return "Janus \(kind): \(event["reason"] as? String ?? "no reason given")"
            }
        }
        return nil
    }
}
