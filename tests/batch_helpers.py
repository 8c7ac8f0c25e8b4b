"""Task functions for the batch reliability tests. They live in a module of their own (on the
test path) so that worker processes, which import functions by name, can run them."""

from __future__ import annotations

import os
import signal
import time

#: study variant (or job id) that kills its own worker process, and one that sleeps
CRASH_VARIANT = 3
SLOW_VARIANT = 5
SLOW_JOB = "slow"
SLEEP_S = 120.0


def crash_on_variant(task):
    """run_task, except that the variant CRASH_VARIANT kills its worker (SIGKILL, as the OOM
    killer does) every time it is computed."""
    from linkcli.batch.worker import ChunkTask, run_task

    if isinstance(task, ChunkTask) and task.start <= CRASH_VARIANT < task.start + len(task.values):
        os.kill(os.getpid(), signal.SIGKILL)
    return run_task(task)


def slow_on_variant_or_job(task):
    """run_task, except that the variant SLOW_VARIANT and the job SLOW_JOB take SLEEP_S."""
    from linkcli.batch.worker import ChunkTask, run_task

    if (isinstance(task, ChunkTask) and task.start <= SLOW_VARIANT < task.start + len(task.values)) or \
            (not isinstance(task, ChunkTask) and task.spec.job == SLOW_JOB):
        time.sleep(SLEEP_S)
    return run_task(task)


def square_or_die(x):
    """x * x; x == -1 kills the worker; x == -2 sleeps SLEEP_S."""
    if x == -1:
        os.kill(os.getpid(), signal.SIGKILL)
    if x == -2:
        time.sleep(SLEEP_S)
    return x * x
