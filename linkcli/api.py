"""The Python API: ``linkcli.load(path)`` and one outcome type for every analysis.

It mirrors the commands (same analyses, same tables, same statuses) so a script gets what the
command line writes, as numpy arrays::

    import linkcli
    m = linkcli.load("mechanisms/fourbar.yaml")
    out = m.solve(sweep={"crank_pin": (0, 360, 1)})    # FROM, TO, STEP in the file's units
    out["coupler.P.x [m]"]                               # file units (as in the CSV)
    out.si("crank_pin.q [deg]")                          # SI (rad, m, m/s ...)
    out.n_failed, out.events, out.metadata, out.to_pandas()

Errors are the CLI's: :class:`linkcli.errors.MechanismFileError` for an invalid file (with
every diagnostic), :class:`linkcli.errors.AnalysisInputError` for bad arguments.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from .analyses.outcome import AnalysisOutcome, Event
from .results import ResultTable

#: the one outcome type of every analysis (commands, batch jobs, plots and this API share it)
Outcome = AnalysisOutcome


def _sweeps(sweep: Mapping[str, Sequence[float]] | None):
    from .analyses.inputs import Sweep
    from .errors import AnalysisInputError
    from .model.sizes import sweep_size_problem

    out = []
    for name, spec in (sweep or {}).items():
        if len(spec) != 3:
            raise AnalysisInputError(f"sweep {name}: give (FROM, TO, STEP), e.g. {{'{name}': (0, 360, 1)}}")
        s = Sweep(name, float(spec[0]), float(spec[1]), step=float(spec[2]))
        problem = sweep_size_problem(s.count(), f"sweep {name}")
        if problem:
            raise AnalysisInputError(problem)
        out.append(s)
    return out


class Mechanism:
    """A loaded and compiled mechanism file. ``model`` is the validated file (pydantic),
    ``compiled`` the SI arrays the analyses use, ``warnings`` the file's diagnostics."""

    def __init__(self, path: str | Path):
        from .compile import compile_mechanism
        from .io.loader import load_mechanism

        self.loaded = load_mechanism(path)
        self.compiled = compile_mechanism(self.loaded.model, file=self.loaded.path)

    @property
    def model(self):
        return self.loaded.model

    @property
    def warnings(self) -> list:
        return list(self.loaded.warnings)

    def __repr__(self) -> str:
        return f"linkcli.Mechanism({self.compiled.name!r}, file={self.loaded.path!r})"

    def solve(self, set: Mapping[str, float] | None = None, sweep: Mapping[str, Sequence[float]] | None = None,
              mode: str = "grid", rates: Mapping[str, float] | None = None,
              accelerations: Mapping[str, float] | None = None) -> Outcome:
        """Positions (and velocities/accelerations with ``rates``/``accelerations``) at one point
        or along sweeps ``{name: (FROM, TO, STEP)}``, file units. With neither ``set`` nor
        ``sweep`` the file's ``analysis.solve`` block runs (as ``linkcli solve FILE``)."""
        from .analyses.solve import SolveRequest, request_from_defaults, run_solve

        req = request_from_defaults(self.model.analysis.solve) if set is None and sweep is None else SolveRequest()
        if set is not None or sweep is not None:
            req = replace(req, set=dict(set or {}), sweeps=_sweeps(sweep))
        req = replace(req, mode=mode, rates={**req.rates, **dict(rates or {})},
                      accelerations={**req.accelerations, **dict(accelerations or {})})
        return run_solve(self.compiled, req, self.loaded)

    def jacobian(self, set: Mapping[str, float] | None = None, frame: str = "base") -> Outcome:
        """The actuated-rates -> tool-twist Jacobian at one point (rows vx, vy[, vz], [wx, wy,] wz;
        per actuated variable X the columns ``X.dv_dq`` (linear rows, length per input unit) and
        ``X.dw_dq`` (angular rows, angle per input unit), each empty on the other's rows)."""
        from .analyses.jacobian import run_jacobian

        return run_jacobian(self.compiled, dict(set or {}), frame, self.loaded)

    def ik(self, targets: Sequence[Sequence[float]], mode: str | None = None,
           guess: Mapping[str, float] | None = None) -> Outcome:
        """Inverse kinematics for targets in file units (planar x, y[, angle]; spatial x, y, z[,
        roll, pitch, yaw]); unreachable ones give the closest pose (``status``, ``position_error``)."""
        from .analyses.ik import IKRequest, run_ik

        return run_ik(self.compiled, IKRequest([list(map(float, t)) for t in targets], mode, dict(guess or {})),
                      self.loaded)

    def simulate(self, dt: float | None = None, t_end: float | None = None, every: int | None = None,
                 set: Mapping[str, float] | None = None, rates: Mapping[str, float] | None = None) -> Outcome:
        """Motion in time (s) from the file's ``analysis.simulate`` block, overridden by the
        arguments. A run that stops early has ``n_failed == 1`` and the rows computed so far."""
        from .analyses.outcome import Event
        from .analyses.simulate import request_from_defaults, run_diagnostics, run_simulate
        from .errors import AnalysisInputError
        from .model.checks import STEP_CODES

        req = request_from_defaults(self.model.analysis.simulate)
        overrides: dict[str, Any] = {k: v for k, v in (("dt", dt), ("t_end", t_end), ("every", every)) if v is not None}
        if any(not (v > 0 and v < float("inf")) for v in overrides.values()):
            raise AnalysisInputError("dt, t_end and every must be positive finite numbers")
        req = replace(req, **overrides, set={**req.set, **dict(set or {})}, rates={**req.rates, **dict(rates or {})})
        # the spring/damper step warnings at the step this run takes (``warnings`` has the file's)
        step = [d for d in run_diagnostics(self.loaded, req, "the dt requested (dt=)") if d.code in STEP_CODES]
        out = run_simulate(self.compiled, req, self.loaded)
        if step:
            out = replace(out, events=tuple(Event("warning", d.format()) for d in step) + out.events)
        if out.table is None:  # could not start: an empty table, so columns and to_pandas() still work
            out = replace(out, table=ResultTable.for_mechanism(self.compiled, self.loaded, n=0))
        return out


def load(path: str | Path) -> Mechanism:
    """Load, validate and compile a mechanism file (MechanismFileError with every problem, each
    at its line, when it is invalid)."""
    return Mechanism(path)


__all__ = ["Event", "Mechanism", "Outcome", "load"]
