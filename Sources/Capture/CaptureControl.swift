import Dispatch
import Glibc
import ScreencastSupport
import Synchronization

/// What the capture thread and its owner share: the stop signal, setup result, counters and outcome.
/// `Sendable` through its `Mutex` and semaphores.
final class CaptureControl: Sendable {
    struct State {
        var setupDone = false
        var setupError: CaptureError?
        var outcome: ScreenCapture.Outcome?
        var stats = CaptureStats()
    }

    let stop: WakeSignal
    /// False while nobody reads the frames (the agent's socket has no call): the capture thread then makes none
    /// (``ReaderHold``).
    let readerPresent = Atomic<Bool>(true)
    private let state = Mutex(State())
    private let setupSignal = DispatchSemaphore(value: 0)
    private let finishedSignal = DispatchSemaphore(value: 0)
    private let started = Atomic<Bool>(false)
    private let startSignal = DispatchSemaphore(value: 0)

    init() throws(CaptureError) {
        do { stop = try WakeSignal() } catch { throw .systemCall(name: error.name, errno: error.errno) }
    }

    func setupFinished(_ error: CaptureError?) {
        state.withLock {
            $0.setupDone = true
            $0.setupError = error
            if let error { $0.outcome = .failed(error) }
        }
        setupSignal.signal()
        if error != nil { finishedSignal.signal() }
    }

    func waitForSetup() -> CaptureError? {
        setupSignal.wait()
        return state.withLock { $0.setupError }
    }

    /// Lets the capture thread begin (once; later calls do nothing).
    func go() {
        guard !started.exchange(true, ordering: .acquiringAndReleasing) else { return }
        startSignal.signal()
    }

    /// Blocks the capture thread until ``go()``.
    func waitForGo() { startSignal.wait() }

    func publish(_ stats: CaptureStats) { state.withLock { $0.stats = stats } }

    func statsSnapshot() -> CaptureStats { state.withLock { $0.stats } }

    func finish(_ outcome: ScreenCapture.Outcome) {
        state.withLock { $0.outcome = outcome }
        finishedSignal.signal()
    }

    /// Waits for the outcome; later calls return it at once.
    @discardableResult
    func waitUntilFinished(timeout: Double?) -> ScreenCapture.Outcome? {
        if let outcome = state.withLock({ $0.outcome }) { return outcome }
        let result: DispatchTimeoutResult
        if let timeout {
            result = finishedSignal.wait(timeout: .now() + timeout)
        } else {
            finishedSignal.wait()
            result = .success
        }
        guard result == .success else { return nil }
        finishedSignal.signal()  // let other waiters (and deinit) through too
        return state.withLock { $0.outcome }
    }
}
