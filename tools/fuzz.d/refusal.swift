// Fuzz target: what a refused sender reads from the call (RefusalMessage.parse, Protocol/frame-wire.md §5).
//
// Input: the bytes the call wrote before it closed (at most a few hundred in real use; any here).
// Properties: never traps; anything over RefusalMessage.maximumBytes is nil; a parsed refusal has a 4xx/5xx
// status and a reason of at most maximumReasonBytes without control characters; what parsed serialises
// (RefusalMessage.bytes) to bytes that parse to the same refusal.
import FrameWire

func fuzzOne(_ bytes: [UInt8]) {
    guard let refusal = RefusalMessage.parse(bytes) else { return }
    check(bytes.count <= RefusalMessage.maximumBytes, "parsed past the size limit: \(bytes.count) bytes")
    check((400...599).contains(refusal.status), "status \(refusal.status)")
    check(refusal.reason.utf8.count <= RefusalMessage.maximumReasonBytes, "reason of \(refusal.reason.utf8.count) bytes")
    check(!refusal.reason.unicodeScalars.contains { $0.properties.generalCategory == .control }, "a control character in the reason")
    check(RefusalMessage.cleaned(refusal.reason) == refusal.reason, "the reason is not clean")
    check(RefusalMessage.parse(refusal.bytes) == refusal, "round trip of \(refusal)")
}
