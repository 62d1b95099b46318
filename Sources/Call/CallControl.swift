import Foundation
import Publishing
import Signaling
import ScreencastSupport

/// The sharer's side of a running call (`screencast-call status`, `screencast-call kick ID`): reads its `/stats`
/// and asks `POST /control/kick/{id}` over its own HTTP server, from this machine. With `--share` the call's kept
/// token and certificate (``ShareState``) are used: the kept self-signed certificate is the one trusted.
public struct CallControl: Sendable {
    /// `http://127.0.0.1:8080` or `https://127.0.0.1:8443`.
    public let baseURL: String
    /// The call's token, sent as `Authorization: Bearer` (never in the URL: `/control` refuses that); nil: none.
    public let token: String?
    /// A PEM file holding the only certificate the call may present (nil: plain HTTP, or the system's authorities).
    public let trustedCertificate: String?

    /// A client of the call at `baseURL` (no request is made here).
    public init(baseURL: String, token: String?, trustedCertificate: String?) {
        self.baseURL = baseURL
        self.token = token
        self.trustedCertificate = trustedCertificate
    }

    /// The call a `--share` run left: `https://127.0.0.1:PORT` with the kept token and certificate of `state`.
    public static func share(port: UInt16, state: ShareState) -> CallControl {
        let token = (try? String(contentsOfFile: state.folder + "/share-token", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
        return CallControl(
            baseURL: "https://127.0.0.1:\(port)", token: token, trustedCertificate: state.folder + "/share-certificate.pem")
    }

    /// What the sharer asks of a running call: who watches (id, address, since when, rate, loss, RTT, whether
    /// it gets the newest frames), each output's state, after the call's own summary lines.
    /// - Throws: ``CallError/control(_:)`` when the call cannot be reached or answers with an error.
    public func status() throws(CallError) -> String {
        let body = try request("GET", "/stats")
        guard let object = try? JSONSerialization.jsonObject(with: Data(body)), let stats = Self.jsonValue(object) else {
            throw .control("the call's /stats is not JSON")
        }
        // What the viewers' pages say of the sharer (GET /source: {"state": "live" | "paused" | …}).
        let source = String(decoding: try request("GET", "/source"), as: UTF8.self)
        let state = source.contains("\"paused\"") ? "paused (screencast-call resume)" : source.contains("\"live\"") ? "live"
            : source.contains("\"waiting\"") ? "waiting for the sharer" : "ended"
        return Self.statusText(stats) + "sharing: \(state)\n"
    }

    /// Ends viewer `id`'s session. Returns the call's answer (`kicked ID`).
    /// - Throws: ``CallError/control(_:)``: no such viewer (404), not from this machine (403), a wrong token (401).
    public func kick(_ id: String) throws(CallError) -> String {
        String(decoding: try request("POST", "/control/kick/" + SignalingServer.percentEncoded(id)), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Pauses (true) or resumes the share. Returns the call's answer (`paused`, `already paused`, `resumed`, …).
    /// - Throws: ``CallError/control(_:)``.
    public func pause(_ on: Bool) throws(CallError) -> String {
        String(decoding: try request("POST", on ? "/control/pause" : "/control/resume"), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private func request(_ method: String, _ path: String) throws(CallError) -> [UInt8] {
        var limits = HTTPClient.Limits()
        limits.timeoutMillis = 5_000
        limits.redirects = 0
        let response: HTTPClientResponse
        do {
            response = try HTTPClient(limits: limits).request(
                method, baseURL + path, headers: token.map { ["Authorization: Bearer \($0)"] } ?? [], trustedCertificate: trustedCertificate)
        } catch {
            throw .control("no call answers at \(baseURL) (\(error)); is it running? (--http, --share)")
        }
        guard response.status == 200 else {
            throw .control("\(baseURL)\(path): \(response.status) \(response.bodyText(limit: 200).trimmingCharacters(in: .whitespacesAndNewlines))")
        }
        return response.body
    }

    /// The status text from `/stats` JSON: ``CallStats/text(_:)``, then one line per viewer and per output.
    static func statusText(_ stats: JSONValue) -> String {
        var text = CallStats.text(stats)
        guard case .object(let top) = stats else { return text }
        let fields = Dictionary(top, uniquingKeysWith: { first, _ in first })
        func object(_ value: JSONValue?) -> [String: JSONValue] { value?.fields ?? [:] }
        func number(_ value: JSONValue?) -> Double? { value?.numberValue }
        func string(_ value: JSONValue?) -> String? { value?.stringValue }
        if case .array(let peers)? = object(fields["viewers"])["peers"], !peers.isEmpty {
            text += "watching (kick with: screencast-call kick ID):\n"
            for peer in peers {
                let p = object(peer)
                let remote = CallStats.bracketedIPv6(string(object(p["pair"])["remote"]) ?? "-")
                let since = Int(number(p["ageS"]) ?? 0)
                // Gets the newest frames: connected, heard lately, past its first keyframe.
                let current = string(p["state"]) == "connected" && p["silent"] != .bool(true) && string(p["lobby"]) == "open"
                text += "  \(string(p["id"]) ?? "?")  \(remote)  since \(since / 60) min \(since % 60) s  "
                    + String(format: "%.0f kbps", number(p["kbps"]) ?? 0)
                    + String(format: ", loss %.1f %%", (number(p["fractionLost"]) ?? 0) * 100)
                    + (number(p["rttMs"]).map { String(format: ", RTT %.0f ms", $0) } ?? "")
                    + (current ? ", sees the newest frames" : ", not current (\(string(p["state"]) ?? "?"), lobby \(string(p["lobby"]) ?? "?"))")
                    + "\n"
            }
        }
        let outputs = top.filter { entry in
            guard case .object = entry.1 else { return false }
            return string(object(entry.1)["state"]) != nil && entry.0 != "viewers"
        }
        for (name, value) in outputs {
            text += "output \(name): \(string(object(value)["state"]) ?? "?")\n"
        }
        return text
    }

    /// Foundation's parsed JSON as a ``JSONValue`` (numbers: whole ones as integers).
    static func jsonValue(_ any: Any) -> JSONValue? {
        switch any {
        case is NSNull: return .null
        case let number as NSNumber:
            // JSONSerialization's booleans are NSNumbers of type char ("c"); its numbers never are.
            if String(cString: number.objCType) == "c" { return .bool(number.boolValue) }
            let double = number.doubleValue
            return double == double.rounded() && abs(double) < 9e15 ? .int(Int64(double)) : .double(double)
        case let text as String: return .string(text)
        case let array as [Any]: return .array(array.compactMap(jsonValue))
        case let dictionary as [String: Any]:
            return .object(dictionary.sorted { $0.key < $1.key }.compactMap { key, value in jsonValue(value).map { (key, $0) } })
        default: return nil
        }
    }
}
