"""What makes a batch run stoppable and safe to share: signals that stop it cleanly, and a lock
on its output folder.

* :func:`interrupts`: SIGINT (Ctrl-C) and SIGTERM raise :class:`Interrupted` (a
  KeyboardInterrupt) in the coordinating process, once; later signals are ignored while the run
  stops its workers and writes what it finished (that takes well under a second: workers are
  killed, not waited for). The CLI then exits with 128 + the signal number (130, 143).
* :class:`OutDirLock`: one batch at a time per output folder (``.batch.lock``, an advisory
  ``flock`` that the kernel releases however the process ends, even ``kill -9``); a second run
  into the same folder stops at once with a clear error instead of mixing its tables and
  summary with the first's.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Iterator

from ..errors import LinkcliError

LOCK_NAME = ".batch.lock"


class Interrupted(KeyboardInterrupt):
    """A signal asked the run to stop."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum
        self.signal_name = signal.Signals(signum).name


@contextlib.contextmanager
def interrupts() -> Iterator[dict]:
    """SIGINT and SIGTERM raise :class:`Interrupted` in the main thread while the block runs
    (once: the run's clean-up is not interrupted again). Yields a dict whose ``"signum"`` is
    the signal received, or None."""
    state: dict = {"signum": None, "previous": {}}

    def handler(signum, frame):  # noqa: ARG001 - signal handler signature
        if state["signum"] is not None:
            return
        state["signum"] = signum
        raise Interrupted(signum)

    old = {}
    try:
        for sig in (signal.SIGINT, signal.SIGTERM):
            old[sig] = signal.signal(sig, handler)
    except ValueError:  # not the main thread: leave the signals alone
        pass
    state["previous"] = dict(old)
    try:
        yield state
    finally:
        for sig, h in old.items():
            signal.signal(sig, h)


def exit_now(code: int) -> None:
    """Flush stdout/stderr and end the process at once with ``code``, skipping the
    interpreter's clean-up: with compiled kernels loaded (numba, LLVM) that clean-up takes
    about a second more, and a stopped run should be gone promptly. Only for the end of the
    ``linkcli`` process, after every output is written and closed."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


class OutDirLockedError(LinkcliError):
    """Another batch run writes into the same output folder (exit 2)."""


class OutDirLock:
    """Hold ``<out_dir>/.batch.lock`` for the length of a ``with`` block (the folder is
    created if needed). Raises :class:`OutDirLockedError` when another process holds it."""

    def __init__(self, out_dir: str) -> None:
        self.out_dir = out_dir
        self.path = os.path.join(out_dir, LOCK_NAME)
        self._fd: int | None = None

    def __enter__(self) -> OutDirLock:
        from ..io.writers import OutputError

        try:
            os.makedirs(self.out_dir, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise OutputError(f"cannot create the output folder '{self.out_dir}': {exc.strerror or exc}") from None
        if not _try_lock(fd):
            try:
                holder = os.read(fd, 200).decode("utf-8", "replace").strip()
            except OSError:
                holder = ""
            os.close(fd)
            raise OutDirLockedError(f"another linkcli batch ({holder or 'a running process'}) is writing to "
                                    f"'{self.out_dir}'; wait for it to finish, or give this run another --out-dir")
        os.ftruncate(fd, 0)
        os.write(fd, f"pid {os.getpid()}\n".encode())
        self._fd = fd
        return self

    def __exit__(self, *exc) -> None:
        if self._fd is not None:
            os.close(self._fd)  # releases the lock; the empty-ish file stays (removing it would race)
            self._fd = None


def _try_lock(fd: int) -> bool:
    if sys.platform == "win32":  # pragma: no cover - Windows
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except (BlockingIOError, PermissionError):
        return False
    return True


__all__ = ["exit_now", "Interrupted", "interrupts", "OutDirLock", "OutDirLockedError", "LOCK_NAME"]
