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
from typing import Any, Callable, Iterator, Sequence

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

    def run(self, fn: Callable, items: Sequence) -> Iterator[tuple[int, Any, BaseException | None]]:
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


class ProcessExecutor(InlineExecutor):
    """A pool of ``workers`` local processes, created on first use, reused across ``run`` calls."""

    kind = "processes"

    def __init__(self, workers: int) -> None:
        self.workers = max(1, int(workers))
        self._pool = None

    def _get_pool(self):
        if self._pool is None:
            import multiprocessing as mp
            from concurrent.futures import ProcessPoolExecutor

            if sys.platform != "win32" and "forkserver" in mp.get_all_start_methods():
                ctx = mp.get_context("forkserver")
                ctx.set_forkserver_preload(PRELOAD)
            else:  # pragma: no cover - Windows/macOS spawn
                ctx = mp.get_context("spawn")
            self._pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=ctx)
        return self._pool

    def run(self, fn: Callable, items: Sequence) -> Iterator[tuple[int, Any, BaseException | None]]:
        if len(items) <= 1:  # no pool for a single task
            yield from InlineExecutor.run(self, fn, items)
            return
        from concurrent.futures import as_completed

        pool = self._get_pool()
        futures = {pool.submit(fn, item): i for i, item in enumerate(items)}
        try:
            for fut in as_completed(futures):
                exc = fut.exception()
                yield futures[fut], (None if exc else fut.result()), exc
        finally:
            for fut in futures:
                fut.cancel()

    def describe(self) -> dict:
        return {"kind": self.kind, "workers": self.workers}

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


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

    def run(self, fn: Callable, items: Sequence) -> Iterator[tuple[int, Any, BaseException | None]]:
        from distributed import as_completed

        if not items:
            return
        futures = self._client.map(fn, list(items), pure=False)
        index = {f.key: i for i, f in enumerate(futures)}
        try:
            with self._client.as_current():
                done = as_completed(futures, with_results=True, raise_errors=False)
            for fut, res in done:
                if fut.status == "error":
                    yield index[fut.key], None, res[1]
                else:
                    yield index[fut.key], res, None
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


def make_executor(jobs: int | None = None, scheduler: str | None = None):
    """``scheduler`` (an address or ``local``) -> DaskExecutor; else ``jobs`` local processes
    (default: one per CPU); ``jobs=1`` -> this process."""
    if scheduler:
        return DaskExecutor(scheduler, jobs)
    n = cpu_count() if not jobs else int(jobs)
    return InlineExecutor() if n <= 1 else ProcessExecutor(n)


__all__ = ["InlineExecutor", "ProcessExecutor", "DaskExecutor", "ExecutorError", "make_executor", "cpu_count"]
