"""The analyses a job can ask for, as one registry: ``ANALYSES[name](mech, loaded, options)``.

Each entry merges the job's options over the mechanism file's ``analysis`` defaults (the same
rules as the commands: for solve, a ``set`` or ``sweep`` in the job replaces the file's sweep),
runs the analysis of :mod:`linkcli.analyses` and returns its
:class:`~linkcli.analyses.outcome.AnalysisOutcome` as it is (``Outcome`` here is that type).
Adding an analysis is one function and one line in :data:`ANALYSES`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..errors import LinkcliError


class AnalysisUnavailable(LinkcliError):
    """The analysis exists in the job-file format but not in this installation."""


if TYPE_CHECKING:
    from ..analyses.outcome import AnalysisOutcome as Outcome


def _given(options: Any) -> set[str]:
    return set(getattr(options, "model_fields_set", ()))


def run_solve_job(mech, loaded, options, many: bool = False) -> Outcome:
    from ..analyses.solve import run_solve

    return run_solve(mech, solve_request(loaded, options, many), loaded)


def solve_request(loaded, options, many: bool = False):
    """The :class:`~linkcli.analyses.solve.SolveRequest` of a solve job: the job's options
    merged over the file's ``analysis.solve`` (the study fast path builds the same one)."""
    from ..analyses.inputs import Sweep, check_not_swept
    from ..analyses.solve import request_from_defaults

    req = request_from_defaults(loaded.model.analysis.solve)
    given = _given(options)
    if given & {"sweep", "set"}:
        req = replace(req, sweeps=[Sweep(n, r.from_, r.to, r.step, r.num) for n, r in options.sweep.items()])
        check_not_swept(dict(options.set), req.sweeps, "options.set", "options.sweep")  # as the commands
    req = replace(req, set={**req.set, **options.set}, rates={**req.rates, **options.rates},
                  accelerations={**req.accelerations, **options.accelerations},
                  mode=options.mode if "mode" in given else req.mode,
                  output_frames=options.output_frames if "output_frames" in given else req.output_frames,
                  sweep_method="many" if many else "auto")
    return req


def run_ik_job(mech, loaded, options, many: bool = False) -> Outcome:
    from ..analyses.ik import IKRequest, run_ik

    req = IKRequest([list(t) for t in options.targets], options.mode, dict(options.guess))
    return run_ik(mech, req, loaded)


def run_jacobian_job(mech, loaded, options, many: bool = False) -> Outcome:
    from ..analyses.jacobian import run_jacobian

    return run_jacobian(mech, dict(options.set), options.frame, loaded)


def simulate_request(loaded, options):
    """The SimulateRequest of a simulate job: the file's ``analysis.simulate`` overridden by the
    job's options."""
    from ..analyses.simulate import request_from_defaults

    req = request_from_defaults(loaded.model.analysis.simulate)
    given = _given(options)
    changes = {k: getattr(options, k) for k in ("t_end", "dt", "every", "tol") if k in given}
    return replace(req, **changes, set={**req.set, **options.set}, rates={**req.rates, **options.rates})


def run_simulate_job(mech, loaded, options, many: bool = False, scratch_dir: str | None = None) -> Outcome:
    """The simulation streamed as the ``linkcli simulate`` command runs it
    (:func:`~linkcli.analyses.simulate.simulate_stream`: rows tabulated chunk by chunk into a
    scratch file in ``scratch_dir``, default the system's temporary directory), so a long run
    never holds its table: the outcome's table is a StreamedColumns (the blocks, bit
    for bit those of :func:`~linkcli.analyses.simulate.run_simulate`'s table, for the writers;
    one column at a time for the job's figures and checks, :mod:`linkcli.batch.streamed`)."""
    try:
        from ..analyses.simulate import simulate_stream
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise AnalysisUnavailable(f"the simulate analysis is not available in this linkcli ({exc})") from None
    req = simulate_request(loaded, options)
    # many: a worker runs many jobs and cannot switch from interpreted to compiled kernels later
    from .streamed import StreamedColumns

    outcome = simulate_stream(mech, req, loaded, many=True, scratch_dir=scratch_dir)
    return outcome if outcome.table is None else replace(outcome, table=StreamedColumns(outcome.table))


# --- forces (issue 12): the same merge rules as `linkcli forces` ----------------------------------------
def run_forces_job(mech, loaded, options, many: bool = False) -> Outcome:
    from ..analyses.forces import request_from_defaults, run_forces
    from ..analyses.inputs import Sweep, check_not_swept

    req = request_from_defaults(loaded.model)
    given = _given(options)
    if given & {"sweep", "set"}:
        req = replace(req, sweeps=[Sweep(n, r.from_, r.to, r.step, r.num) for n, r in options.sweep.items()])
        check_not_swept(dict(options.set), req.sweeps, "options.set", "options.sweep")  # as the commands
    req = replace(req, set={**req.set, **options.set}, speeds={**req.speeds, **options.speed},
                  accelerations={**req.accelerations, **options.accelerations},
                  static=options.static if "static" in given else req.static,
                  loads={**req.loads, **{k: list(v) for k, v in options.loads.items()}},
                  gravity=options.gravity if "gravity" in given else req.gravity,
                  mode=options.mode if "mode" in given else req.mode)
    return run_forces(mech, req, loaded, many=many)
# --- end forces ---------------------------------------------------------------------------------------


#: analysis name -> runner(mech, loaded, options, many=False) -> Outcome; ``many``: this process
#: runs the analysis many times (a study's variants), so one-time costs such as loading
#: compiled kernels pay off (solve then uses the compiled sweep kernel where it applies)
ANALYSES: dict[str, Callable[..., Outcome]] = {
    "solve": run_solve_job,
    "ik": run_ik_job,
    "jacobian": run_jacobian_job,
    "simulate": run_simulate_job,
    "forces": run_forces_job,
}


def _one_point(options, loaded):
    return options.model_copy(update={"sweep": {}})


def _one_target(options, loaded):
    return options.model_copy(update={"targets": list(options.targets[:1])})


def _one_step(options, loaded):
    defaults = loaded.model.analysis.simulate
    dt = options.dt if "dt" in _given(options) else (defaults.dt if defaults is not None else options.dt)
    return options.model_copy(update={"t_end": dt, "dt": dt, "every": 1})


#: analysis name -> options(options, loaded) for one case only (one sweep point, target or
#: step): a table with the same columns as the whole job's, to check column names before a run
PROBES: dict[str, Callable[..., Any]] = {
    "solve": _one_point,
    "forces": _one_point,
    "ik": _one_target,
    "jacobian": lambda options, loaded: options,
    "simulate": _one_step,
}


def probe_columns(name: str, mech, loaded, options) -> list[str] | None:
    """Headers of the table the analysis gives for this mechanism and these options, from a
    run on one case; None when that run does not give a table (its error shows in the job)."""
    probe = PROBES.get(name)
    if probe is None:
        return None
    outcome = run_analysis(name, mech, loaded, probe(options, loaded))
    return outcome.table.headers() if outcome.table is not None else None


#: analyses whose runner streams its table through a scratch file (``scratch_dir``)
STREAMED = frozenset({"simulate"})


def run_analysis(name: str, mech, loaded, options, many: bool = False, scratch_dir: str | None = None) -> Outcome:
    """``ANALYSES[name]``'s outcome; ``scratch_dir``: where a streamed analysis (:data:`STREAMED`)
    keeps its rows until they are written (default: the system's temporary directory)."""
    try:
        runner = ANALYSES[name]
    except KeyError:
        raise AnalysisUnavailable(f"unknown analysis '{name}'; this linkcli has: {', '.join(ANALYSES)}") from None
    if name in STREAMED:
        return runner(mech, loaded, options, many=many, scratch_dir=scratch_dir)
    return runner(mech, loaded, options, many=many)


__all__ = ["PROBES", "probe_columns", "ANALYSES", "STREAMED", "AnalysisUnavailable",
           "run_analysis", "simulate_request", "solve_request"]
