/// Why the congestion controller refused a request. The one error type of the `CongestionControl` module:
/// only configuration is checked (bad feedback is the `RTP` module's ``RTPError``; feedback about packets we
/// do not know is counted in ``CongestionControlStats``, not thrown).
public enum CongestionControlError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A configuration value out of its range (the field, what was wrong).
    case invalidConfiguration(String, String)

    public var description: String {
        switch self {
        case .invalidConfiguration(let field, let reason): "congestion control configuration: \(field) \(reason)"
        }
    }
}
