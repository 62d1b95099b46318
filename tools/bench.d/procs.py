"""Processes the benchmarks start, and what /proc says about them (tools/bench).

Every process started through `start` is remembered and ended by `stop_all` (by its own pid, SIGTERM then
SIGKILL), so an interrupted run leaves nothing behind. CPU is user+sys from /proc/PID/stat (all threads,
including ones that ended), in seconds; memory is VmRSS / VmHWM from /proc/PID/status, in MiB.
"""

import json
import os
import signal
import subprocess
import time
import urllib.request

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
_started = []


def nearest_rank(ordered, p):
    """The nearest-rank percentile `p` (0 < p <= 1) of an ascending, non-empty list: the smallest value with at
    least p of the values at or below it."""
    return ordered[min(len(ordered) - 1, max(0, int(-(-len(ordered) * p // 1)) - 1))]


def now_micros():
    """CLOCK_MONOTONIC in µs: the clock of Buffer-Timestamp and of the call's logs."""
    return int(time.clock_gettime(time.CLOCK_MONOTONIC) * 1e6)


class Proc:
    def __init__(self, name, argv, env=None, log_path=None, stdout_path=None):
        self.name = name
        self.argv = argv
        self.log_path = log_path
        self.stdout_path = stdout_path
        self._log = open(log_path, "wb") if log_path else subprocess.DEVNULL
        self._out = open(stdout_path, "wb") if stdout_path else subprocess.DEVNULL
        self.process = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=self._out, stderr=self._log)
        self.pid = self.process.pid
        self.last_cpu = 0.0
        _started.append(self)

    def alive(self):
        return self.process.poll() is None

    def cpu(self):
        """User + system CPU seconds of the whole process so far (the last value once it has exited)."""
        try:
            with open("/proc/%d/stat" % self.pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            self.last_cpu = (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
        except (OSError, IndexError, ValueError):
            pass
        return self.last_cpu

    def memory(self):
        """(VmRSS, VmHWM) in MiB; (0, 0) once gone."""
        rss = hwm = 0.0
        try:
            with open("/proc/%d/status" % self.pid) as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        rss = int(line.split()[1]) / 1024
                    elif line.startswith("VmHWM:"):
                        hwm = int(line.split()[1]) / 1024
        except OSError:
            pass
        return rss, hwm

    def log(self):
        if not self.log_path:
            return ""
        with open(self.log_path, "rb") as f:
            return f.read().decode(errors="replace")

    def stdout(self):
        if not self.stdout_path:
            return ""
        with open(self.stdout_path, "rb") as f:
            return f.read().decode(errors="replace")

    def wait(self, timeout):
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def stop(self, timeout=10):
        if self.alive():
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for handle in (self._log, self._out):
            if handle not in (subprocess.DEVNULL, None):
                handle.close()
        return self.process.returncode


def start(name, argv, **kwargs):
    return Proc(name, argv, **kwargs)


def stop_all():
    for proc in reversed(_started):
        try:
            proc.stop(5)
        except Exception:
            pass
    _started.clear()


def wait_for(predicate, timeout, interval=0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    return predicate()


def http_json(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return json.loads(response.read().decode())


def system_busy():
    """Busy CPU seconds of the whole machine so far (all cores: /proc/stat user+nice+system+irq+softirq+steal)."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    user, nice, system, idle, iowait, irq, softirq, steal = (fields + [0] * 8)[:8]
    return (user + nice + system + irq + softirq + steal) / CLOCK_TICKS


def load_average():
    with open("/proc/loadavg") as f:
        return [float(x) for x in f.read().split()[:3]]


def machine():
    model = "unknown"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    family = model_number = None
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("cpu family") and family is None:
                family = line.split(":", 1)[1].strip()
            if line.startswith("model\t") and model_number is None:
                model_number = line.split(":", 1)[1].strip()
    with open("/proc/meminfo") as f:
        total = int(f.readline().split()[1]) // 1024
    uname = os.uname()
    swift = subprocess.run(["swift", "--version"], capture_output=True, text=True).stdout.strip().splitlines()
    return {
        "cpuModel": model, "cpuFamily": family, "cpuModelNumber": model_number, "cores": os.cpu_count(),
        "memoryMiB": total, "kernel": uname.release, "swift": swift[0] if swift else "?",
        "virtualized": "hypervisor" in open("/proc/cpuinfo").read(),
    }
