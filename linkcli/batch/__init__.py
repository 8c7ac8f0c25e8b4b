"""Batch runs and parameter studies: an application layer (like the CLI) that orchestrates the
analyses over many mechanism files or many variants of one, on local processes or Dask.

Flow::

    job file --plan.py--> units (job x mechanism file; studies: + parameter paths)
             --runner.py--> tasks (one per unit, or per chunk of study variants)
             --executors.py--> run on this process / a local process pool / a Dask cluster
             --worker.py--> evaluate: validate like a file -> compile -> analyses registry
                            (analyses.py) -> figures and checks (figures.py)
             --runner.py / report.py--> result tables, study tables, summary.json, JUnit XML
                                        (journal.py: finished work, for --resume)

Modules: :mod:`~linkcli.batch.paths` (parameter paths into a document, copy on write),
:mod:`~linkcli.batch.sampling` (grid / list / random / lhs / normal; variant ``i`` draws from
``(seed, i)``), :mod:`~linkcli.batch.interrupts` (SIGINT/SIGTERM, the output folder's
lock). The job-file format is :mod:`linkcli.model.jobs`. Nothing here is imported by
``linkcli --help``.
"""

from __future__ import annotations


def run_batch(plan, *, jobs: int | None = None, scheduler: str | None = None, progress=None,
              chunk_size: int | None = None, on_result=None, resume: bool = False):
    """Run a :class:`~linkcli.batch.plan.BatchPlan` on a new executor and close it afterwards.
    Jobs with a time limit run in worker processes even with ``jobs=1`` (a process can be
    stopped; a computation in this one cannot)."""
    from .executors import make_executor
    from .runner import run_plan

    isolate = any(u.timeout for u in plan.units if u.done is None)
    with make_executor(jobs, scheduler, isolate=isolate) as executor:
        return run_plan(plan, executor, progress=progress, chunk_size=chunk_size, on_result=on_result, resume=resume)


__all__ = ["run_batch"]
