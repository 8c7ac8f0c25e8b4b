"""Where tasks run: this process, a pool of local processes, or a Dask cluster.

Every executor has one method that matters, ``run(fn, items)``: it yields ``(index, result,
error)`` for each item as it completes (``error`` is the exception when the task itself could
not run, e.g. a worker process died). Results never depend on the executor: tasks are pure
functions of their items, and the coordinator orders them by index.

* :class:`InlineExecutor`: one by one in this process (``--jobs 1``, and whenever there is only
  one task).
* :class:`ProcessExecutor`: ``concurrent.futures`` process pool (the default, ``--jobs N``). On
  POSIX the workers are forked from a clean *forkserver* process that has imported linkcli
  once (fork from a threaded parent is unsafe, spawn pays the imports in every worker).
* :class:`DaskExecutor`: a Dask ``distributed`` scheduler (``--scheduler tcp://host:8786``; its
  workers need linkcli installed), or an embedded ``LocalCluster`` of processes on this machine
  (``--scheduler local``). Needs the ``dask`` extra: ``pip install 'linkcli[dask]'``.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from ..errors import LinkcliError

PRELOAD = ["linkcli.batch.worker", "linkcli.compile", "linkcli.analyses.solve", "linkcli.io.loader"]


class ExecutorError(LinkcliError):
    """An executor cannot be set up (dask missing, scheduler unreachable ...). Exit 2."""


def cpu_count() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


class InlineExecutor:
    kind = "inline"

    def __init__(self) -> None:
        self.workers = 1

    def run(self, fn: Callable, items: Sequence, timeouts: Sequence[float | None] | None = None,
            ) -> Iterator[tuple[int, Any, BaseException | None]]:
        """``timeouts`` cannot be enforced in this process (make_executor picks a process pool
        when a job has one)."""
        for i, item in enumerate(items):
            try:
                result = fn(item)
            except Exception as exc:  # noqa: BLE001 - reported like a failed remote task
                yield i, None, exc
            else:
                yield i, result, None

    def describe(self) -> dict:
        return {"kind": self.kind, "workers": 1}

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class TaskLost(Exception):
    """A task that did not return: its worker process died, or it ran past its time limit (the
    worker was then killed). Only that task is lost; the executor starts a new worker."""


class WorkerDied(TaskLost):
    def __init__(self, exitcode: int | None) -> None:
        self.exitcode = exitcode
        how = (f"killed by signal {-exitcode} ({_signal_name(-exitcode)})" if exitcode is not None and exitcode < 0
               else f"exit code {exitcode}")
        super().__init__(f"the worker process died ({how})")


class TaskTimedOut(TaskLost):
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        super().__init__(f"timed out after {seconds:g} s")


def _signal_name(number: int) -> str:
    import signal

    try:
        return signal.Signals(number).name
    except ValueError:
        return "unknown signal"


def _worker_main(conn) -> None:  # pragma: no cover - runs in the worker processes
    """A worker's loop: receive ``(fn, item)``, send back ``(True, result)`` or ``(False,
    exception)``; stop on ``None`` or when the coordinator's end of the pipe closes."""
    import pickle
    import signal

    # Ctrl-C in a terminal reaches the whole process group: the coordinator decides what stops.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _die_with_parent()
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if msg is None:
            return
        fn, item = msg
        try:
            reply = (True, fn(item))
        except Exception as exc:  # noqa: BLE001 - reported to the coordinator as this task's error
            reply = (False, exc)
        try:
            data = pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # noqa: BLE001 - an unpicklable result or exception
            data = pickle.dumps((False, RuntimeError(f"cannot send the task's result back: {type(exc).__name__}: "
                                                     f"{exc}")))
        try:
            conn.send_bytes(data)
        except (BrokenPipeError, OSError):
            return


def _die_with_parent() -> None:  # pragma: no cover - runs in the worker processes
    """Linux: SIGKILL this worker when its parent, the forkserver, dies -- and let the
    forkserver die with the coordinator. The forkserver stops when every holder of its "alive"
    pipe is gone, and it hands that pipe to each worker; a worker busy with a long task (or a
    hung one) would then keep the forkserver, and itself, alive after a ``kill -9`` of the
    coordinator. Our workers start no processes, so they drop the pipe."""
    if not sys.platform.startswith("linux"):
        return
    try:
        from multiprocessing import forkserver

        server = getattr(forkserver, "_forkserver", None)
        fd = getattr(server, "_forkserver_alive_fd", None)
        if fd is not None:
            os.close(fd)
            server._forkserver_alive_fd = None
    except (OSError, AttributeError, ImportError):
        pass
    try:
        import ctypes
        import signal

        parent = os.getppid()
        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_PDEATHSIG = 1
        libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != parent:  # the parent died before prctl: no signal will come
            os._exit(1)
    except (OSError, AttributeError):
        pass


class _Worker:
    def __init__(self, ctx) -> None:
        parent, child = ctx.Pipe(duplex=True)
        self.process = ctx.Process(target=_worker_main, args=(child,), daemon=True, name="linkcli-batch-worker")
        self.process.start()
        child.close()
        self.conn = parent
        self.task: int | None = None
        self.deadline: float | None = None
        self.limit: float | None = None

    def kill(self) -> None:
        """SIGKILL and reap (a busy worker may be inside compiled code that no signal handler
        reaches; its task is abandoned anyway)."""
        try:
            self.process.kill()
        except (OSError, ValueError, AttributeError):
            pass
        self.process.join(timeout=5)
        self.conn.close()

    def stop(self) -> None:
        """Ask an idle worker to finish."""
        try:
            self.conn.send(None)
        except (OSError, ValueError):
            pass


class ProcessExecutor(InlineExecutor):
    """``workers`` local processes, each with its own pipe, started on first use and reused
    across ``run`` calls.

    Hand-written on purpose instead of ``concurrent.futures.ProcessPoolExecutor``: that pool
    marks *every* pending task ``BrokenProcessPool`` when one worker dies and cannot stop one
    task's process. Here the coordinator knows which task each worker holds, so a worker that
    dies (``kill -9``, out of memory, a crash in compiled code) costs only its own task
    (:class:`WorkerDied`), a task past its time limit is stopped by killing its worker
    (:class:`TaskTimedOut`), and a replacement worker takes the next task. Waiting is one
    ``multiprocessing.connection.wait`` on the pipes and process sentinels: no threads, no
    queues, no semaphores (so no resource tracker), and :meth:`close` stops everything at once."""

    kind = "processes"

    def __init__(self, workers: int) -> None:
        self.workers = max(1, int(workers))
        self._ctx = None
        self._idle: list[_Worker] = []

    def _context(self):
        if self._ctx is None:
            import multiprocessing as mp

            if sys.platform != "win32" and "forkserver" in mp.get_all_start_methods():
                ctx = mp.get_context("forkserver")
                ctx.set_forkserver_preload(PRELOAD)
            else:  # pragma: no cover - Windows/macOS spawn
                ctx = mp.get_context("spawn")
            self._ctx = ctx
        return self._ctx

    def _new_worker(self) -> _Worker:
        return _Worker(self._context())

    def run(self, fn: Callable, items: Sequence, timeouts: Sequence[float | None] | None = None,
            ) -> Iterator[tuple[int, Any, BaseException | None]]:
        """Yield ``(index, result, error)`` as tasks finish. ``timeouts[i]``: seconds task ``i``
        may run (None: no limit). If the caller stops early (an interrupt, an exception), the
        workers still busy are killed."""
        import time
        from collections import deque
        from multiprocessing.connection import wait

        if len(items) == 1 and timeouts is None and self._ctx is None:
            # one task and no pool yet: starting one costs more than it can save
            yield from InlineExecutor.run(self, fn, items)
            return
        pending = deque(range(len(items)))
        busy: dict[Any, _Worker] = {}  # conn -> worker
        by_sentinel: dict[int, _Worker] = {}
        try:
            while pending or busy:
                while pending and (self._idle or len(busy) < self.workers):
                    w = self._idle.pop() if self._idle else self._new_worker()
                    i = pending.popleft()
                    try:
                        w.conn.send((fn, items[i]))
                    except (OSError, ValueError):  # it died while idle: replace it, keep the task
                        w.kill()
                        pending.appendleft(i)
                        continue
                    limit = timeouts[i] if timeouts is not None else None
                    w.task, w.limit = i, limit
                    w.deadline = time.monotonic() + limit if limit else None
                    busy[w.conn] = w
                    by_sentinel[w.process.sentinel] = w
                deadlines = [w.deadline for w in busy.values() if w.deadline is not None]
                wait_s = max(0.0, min(deadlines) - time.monotonic()) if deadlines else None
                ready = wait(list(busy) + list(by_sentinel), timeout=wait_s)
                finished: list[tuple[_Worker, Any, BaseException | None, bool]] = []
                for obj in ready:
                    w = busy.get(obj) if not isinstance(obj, int) else by_sentinel.get(obj)
                    if w is None or any(f[0] is w for f in finished):
                        continue
                    try:
                        ok, payload = w.conn.recv() if w.conn.poll() else (None, None)
                    except (EOFError, OSError):
                        ok, payload = None, None
                    except Exception as exc:  # noqa: BLE001 - a result that cannot be unpickled here
                        ok, payload = False, exc
                    if ok is None:  # no reply: the process ended
                        w.process.join(timeout=5)
                        finished.append((w, None, WorkerDied(w.process.exitcode), True))
                    else:
                        finished.append((w, payload if ok else None, None if ok else payload, False))
                now = time.monotonic()
                for w in list(busy.values()):
                    if w.deadline is not None and now >= w.deadline and not any(f[0] is w for f in finished):
                        finished.append((w, None, TaskTimedOut(w.limit), True))
                for w, res, exc, dead in finished:
                    del busy[w.conn]
                    del by_sentinel[w.process.sentinel]
                    i, w.task = w.task, None
                    if dead:
                        w.kill()
                    else:
                        self._idle.append(w)
                    yield i, res, exc
        finally:
            for w in busy.values():  # abandoned tasks (interrupt): stop their workers now
                w.kill()

    def describe(self) -> dict:
        return {"kind": self.kind, "workers": self.workers}

    def close(self) -> None:
        """Stop the idle workers (they exit on their own) and reap them, killing any that do
        not exit within a second."""
        idle, self._idle = self._idle, []
        for w in idle:
            w.stop()
        for w in idle:
            w.process.join(timeout=1)
            if w.process.is_alive():
                w.kill()
            else:
                w.conn.close()


class DaskExecutor(InlineExecutor):
    """Tasks on a Dask cluster: ``address`` of a running scheduler, or ``"local"`` for an
    embedded LocalCluster of ``workers`` single-threaded processes (no dashboard)."""

    kind = "dask"

    def __init__(self, address: str, workers: int | None = None, timeout: str = "20s") -> None:
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise ExecutorError("--scheduler needs Dask: pip install 'linkcli[dask]' "
                                "(dask[distributed])") from None
        self.address = address
        self._cluster = None
        if address == "local":
            n = workers or cpu_count()
            self._cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                         dashboard_address=None, host="127.0.0.1",
                                         silence_logs=logging.ERROR)
            address = self._cluster.scheduler_address
        try:
            self._client = Client(address, timeout=timeout, set_as_default=False)
        except (OSError, TimeoutError) as exc:
            self.close()
            raise ExecutorError(f"cannot connect to the Dask scheduler at {address}: {exc}. Start one "
                                "(`dask scheduler` and `dask worker ADDRESS`) or leave out --scheduler "
                                "to use local processes") from None
        self.workers = max(1, sum(w.get("nthreads", 1) for w in
                                  self._client.scheduler_info().get("workers", {}).values()))

    def run(self, fn: Callable, items: Sequence, timeouts: Sequence[float | None] | None = None,
            ) -> Iterator[tuple[int, Any, BaseException | None]]:
        """Dask retries a task whose worker died (its ``allowed-failures``). A task past its
        time limit is reported as :class:`TaskTimedOut` and cancelled; Dask cannot stop a task
        that is already running, so its worker finishes it and the result is dropped."""
        import time

        from distributed import wait

        if not items:
            return
        futures = self._client.map(fn, list(items), pure=False)
        started = time.monotonic()
        limits = {f.key: (timeouts[i] if timeouts is not None else None) for i, f in enumerate(futures)}
        index = {f.key: i for i, f in enumerate(futures)}
        pending = set(futures)
        try:
            while pending:
                deadlines = [started + limits[f.key] for f in pending if limits[f.key]]
                wait_s = max(0.05, min(deadlines) - time.monotonic()) if deadlines else None
                try:
                    with self._client.as_current():
                        done, pending = wait(list(pending), timeout=wait_s, return_when="FIRST_COMPLETED")
                except TimeoutError:
                    done = set()
                for fut in done:
                    if fut.status == "error":
                        yield index[fut.key], None, fut.exception()
                    elif fut.status == "cancelled":
                        yield index[fut.key], None, WorkerDied(None)
                    else:
                        yield index[fut.key], fut.result(), None
                now = time.monotonic()
                for fut in [f for f in pending if limits[f.key] and now >= started + limits[f.key]]:
                    pending.discard(fut)
                    fut.cancel()
                    yield index[fut.key], None, TaskTimedOut(limits[fut.key])
        finally:
            self._client.cancel(futures)

    def describe(self) -> dict:
        return {"kind": self.kind, "workers": self.workers,
                "scheduler": "embedded LocalCluster" if self._cluster is not None else self.address}

    def close(self) -> None:
        client, self._client = getattr(self, "_client", None), None
        if client is not None:
            client.close()
        if self._cluster is not None:
            self._cluster.close()
            self._cluster = None


def make_executor(jobs: int | None = None, scheduler: str | None = None, isolate: bool = False):
    """``scheduler`` (an address or ``local``) -> DaskExecutor; else ``jobs`` local processes
    (default: one per CPU); ``jobs=1`` -> this process, unless ``isolate`` (time limits need a
    process that can be killed): then one worker process."""
    if scheduler:
        return DaskExecutor(scheduler, jobs)
    n = cpu_count() if not jobs else int(jobs)
    return ProcessExecutor(n) if n > 1 or isolate else InlineExecutor()


__all__ = ["InlineExecutor", "ProcessExecutor", "TaskLost", "WorkerDied", "TaskTimedOut", "DaskExecutor",
           "ExecutorError", "make_executor", "cpu_count"]
