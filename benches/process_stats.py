"""What the benchmarks against Kafka read about a process and the machine (Linux, ``/proc``):
a server's CPU seconds and memory, the CPU seconds every CPU was busy, and a tool run as a
child process, measured whole (wall time, CPU, peak memory) with a bounded wait."""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass
from typing import IO, Any


def cpu_seconds(pid: int) -> float:
    """utime + stime of every thread of ``pid`` so far."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _status_bytes(pid: int, field: str) -> int:
    """A ``kB`` line of ``/proc/PID/status``, in bytes (0 once the process has exited)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            line = next((line for line in status if line.startswith(field)), f"{field} 0 kB")
    except FileNotFoundError:
        return 0
    return int(line.split()[1]) * 1024


def rss_bytes(pid: int) -> int:
    """``VmRSS``: resident memory now."""
    return _status_bytes(pid, "VmRSS:")


def high_water_mark(pid: int) -> int:
    """``VmHWM``: the peak resident memory so far."""
    return _status_bytes(pid, "VmHWM:")


def busy_cpu_seconds() -> float:
    """CPU seconds every CPU of the machine has been busy (hypervisor steal included)."""
    with open("/proc/stat") as stat:
        fields = [int(f) for f in stat.readline().split()[1:9]]
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


@dataclass
class Measured:
    """A finished child process: exit status, wall and CPU seconds, peak resident memory."""

    returncode: int
    seconds: float
    cpu_s: float
    max_rss: int


def run_measured(command: list[str], stdout: IO[Any] | int, stderr: IO[Any] | int,
                 timeout: float) -> Measured:
    """Run ``command`` to its end; kill it and raise ``subprocess.TimeoutExpired`` after
    ``timeout`` seconds.

    The peak is the process's own ``VmHWM``, read while it runs: the ``ru_maxrss`` that
    ``wait4`` reports carries this (large) process's peak over through the fork and exec."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=stdout, stderr=stderr)
    peak = 0
    while True:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() - started > timeout:
            process.kill()
            os.wait4(process.pid, 0)
            process.returncode = -9
            raise subprocess.TimeoutExpired(command, timeout)
        peak = max(peak, high_water_mark(process.pid))
        time.sleep(0.02)
    process.returncode = os.waitstatus_to_exitcode(status)
    return Measured(process.returncode, time.perf_counter() - started,
                    usage.ru_utime + usage.ru_stime, peak)
