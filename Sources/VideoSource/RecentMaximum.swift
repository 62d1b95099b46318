/// The largest of the last `count` values recorded (a small ring): "the current size" of a stream whose
/// sizes may alternate, so that memory sized for it is neither kept after the stream shrinks for good nor
/// dropped and re-made on every alternation.
struct RecentMaximum: Sendable {
    private var values: [Int]
    private var next = 0

    init(count: Int = 8) { values = [Int](repeating: 0, count: max(1, count)) }

    mutating func record(_ value: Int) {
        values[next] = value
        next = (next + 1) % values.count
    }

    /// The largest of the recorded values (0 before any).
    var maximum: Int { values.max() ?? 0 }
}
