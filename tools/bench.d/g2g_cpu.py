"""CPU of the glass-to-glass runs (g2g.py): user + system seconds (/proc/PID/stat) of a process and all its
descendants (the browser driver's chromedriver and Chromium's processes), read at the start and the end of
the reader's window, so each row has the CPU of its whole share on this machine beside its latency.
A process that ends inside the window loses its share; one that starts inside it counts from zero."""

import os

import procs


def _stat(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[1]), (int(fields[11]) + int(fields[12])) / procs.CLOCK_TICKS  # ppid, cpu seconds
    except (OSError, IndexError, ValueError):
        return None


def tree(root):
    """{pid: cpu seconds} of `root` and its descendants now."""
    parents, cpu = {}, {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            stat = _stat(int(name))
            if stat:
                parents[int(name)], cpu[int(name)] = stat
    found, todo = {}, [root]
    while todo:
        pid = todo.pop()
        if pid in cpu and pid not in found:
            found[pid] = cpu[pid]
            todo += [child for child, parent in parents.items() if parent == pid]
    return found


def used(before, after):
    """CPU seconds used between two tree() readings."""
    return sum(seconds - before.get(pid, 0.0) for pid, seconds in after.items())
