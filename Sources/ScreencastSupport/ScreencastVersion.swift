/// The project's version, printed by `--version` of every executable.
public enum ScreencastVersion {
    /// Semantic version of the whole package (one version for every executable).
    public static let string = "0.1.0"
}
