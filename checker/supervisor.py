"""The `txncheck` process vouches for its own exit code.

A model file runs the code it names, and that code can end the process
behind txncheck's back: `os._exit(0)` in a spec's `next` skips every handler,
so no in-process check can keep it from exiting 0 for a run that never
reached a verdict. So the command forks once, before it does anything: the
child runs the command, and the parent (this module; it imports nothing
else) only waits for it.

* The child reports the exit code it chose on a pipe just before it exits
  (`report`). The parent exits with that code. A child that ends without
  reporting one (`os._exit` in spec code, a SIGKILL from the OOM killer)
  exits 3 with one line saying how it ended: never 0.
* Ctrl-C and SIGTERM: a signal sent to the parent is passed on to the child
  (one that the terminal sent to the whole process group reached the child
  already). The child stops and reports on its own; if it has not ended
  within `GRACE` seconds of its own time (checker/grace.py: time it waited
  for a CPU is not counted; a library that swallows the interrupt, a C call
  that holds the interpreter), the parent kills it and its descendants and
  exits 3 with the one line.
* The child dies with the parent (Linux PR_SET_PDEATHSIG).

Without fork (not Linux-like) the command runs in-process, unsupervised.
This module imports nothing of txncheck's but checker/grace.py.
"""

from __future__ import annotations

import os
import signal
import sys
import time

from .grace import Grace, descendants

EXIT_INCOMPLETE = 3
GRACE = 1.5  # seconds of the child's own time from the first signal until it is ended by force
SI_KERNEL = 0x80  # si_code of a signal the kernel sent (the terminal's Ctrl-C to the foreground group)
_FORWARDED = (signal.SIGINT, signal.SIGTERM)

_report_fd: list[int] = []  # in the child: the pipe to the parent


def run(command) -> int:
    """Run `command()` (which returns an exit code) in a supervised child;
    returns the exit code the parent should exit with. In the child this
    returns too (the child's own code, already reported)."""
    if not hasattr(os, "fork"):
        return command()
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # an inherited SIG_IGN would reap the child unseen
    waited = {signal.SIGCHLD, *_FORWARDED}
    old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, waited)  # none is lost before the parent waits
    r, w = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(r)
        os.close(w)
        signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
        return command()
    if pid == 0:  # the child: the command, which unblocks Ctrl-C and SIGTERM once it handles them
        os.close(r)
        _report_fd[:] = [w]
        _die_with_parent()
        signal.pthread_sigmask(signal.SIG_SETMASK, set(old_mask) | set(_FORWARDED))
        return report(command())
    os.close(w)
    return _supervise(pid, r, waited)


def report(code: int) -> int:
    """In the child: tell the parent the exit code (once); returns it."""
    if _report_fd:
        fd = _report_fd.pop()
        try:
            os.write(fd, b"%d\n" % code)
            os.close(fd)
        except OSError:
            pass
    return code


def _die_with_parent() -> None:
    parent = os.getppid()
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG = 1
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # the parent died before the line above
        os._exit(EXIT_INCOMPLETE)


def _supervise(pid: int, r: int, waited: set) -> int:
    first: str | None = None
    grace: Grace | None = None
    status = None
    forced = False
    while status is None:
        done, st = os.waitpid(pid, os.WNOHANG)
        if done:
            status = st
            break
        timeout = 0.5 if grace is None else min(0.1, grace.left())
        info = signal.sigtimedwait(waited, timeout)
        if info is not None and info.si_signo in _FORWARDED:
            if info.si_code != SI_KERNEL:  # the terminal's Ctrl-C reached the child too
                try:
                    os.kill(pid, info.si_signo)
                except ProcessLookupError:
                    pass
            if first is None:
                first = signal.Signals(info.si_signo).name
                grace = Grace(pid, GRACE)
        elif grace is not None and not grace.left():
            status = _end(pid)
            forced = True
    reported = _read_report(r)
    if reported is not None:
        # A run that succeeded and was then signalled (its status is not 0) is not a success.
        return reported if reported != 0 or os.waitstatus_to_exitcode(status) == 0 else EXIT_INCOMPLETE
    if forced:
        line = f"interrupted ({first}); it did not stop within {GRACE:g} s and was ended; the run is incomplete"
    elif os.WIFSIGNALED(status):
        sig = signal.Signals(os.WTERMSIG(status)).name
        oom = " (out of memory?)" if sig == "SIGKILL" else ""
        line = f"the run was ended by {sig}{oom} before it reached a verdict; the run is incomplete"
    else:
        line = (f"the process exited with status {os.WEXITSTATUS(status)} before txncheck reached a verdict: "
                "code it ran ended it (os._exit in a spec?); the run is incomplete")
    try:
        print(f"txncheck: error: {line}", file=sys.stderr, flush=True)
    except (OSError, ValueError, AttributeError):
        pass
    return EXIT_INCOMPLETE


def _read_report(r: int) -> int | None:
    os.set_blocking(r, False)  # a worker the child forked may hold the pipe open
    try:
        data = os.read(r, 64)
    except (BlockingIOError, OSError):
        data = b""
    os.close(r)
    try:
        code = int(data.split(b"\n")[0])
    except ValueError:
        return None
    return code if 0 <= code < 256 else None


def _end(pid: int) -> int:
    """End a child that did not stop: SIGKILL it, SIGTERM what it started (a
    JVM runs its shutdown hooks, a worker exits), then SIGKILL what is left.
    Returns the child's wait status."""
    os.kill(pid, signal.SIGSTOP)  # it forks no more while its descendants are listed
    for _ in range(50):
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[-1].split()[0] in "TtZ":
                    break
        except OSError:
            break
        time.sleep(0.002)
    rest = descendants(pid)[1:]
    os.kill(pid, signal.SIGKILL)
    status = os.waitpid(pid, 0)[1]
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for p in rest:
            try:
                os.kill(p, sig)
            except ProcessLookupError:
                pass
        if sig == signal.SIGTERM:
            time.sleep(0.2)
    return status
