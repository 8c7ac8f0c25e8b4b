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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .results import ResultTable


@dataclass(frozen=True)
class Event:
    """Something an analysis reports besides its table: ``kind`` (``warning`` for the
    analysis's messages: dead centres, limits of motion, cannot-assemble points, joint values
    outside their limits, unreachable targets ...) and the ``message`` the command line prints."""

    kind: str
    message: str


@dataclass(frozen=True)
class Outcome:
    """The result of one analysis.

    ``table``: the :class:`ResultTable` the command writes (columns ``entity.quantity [unit]``
    in the file's units); ``n_cases`` rows (sweep points, targets, samples); ``n_failed`` cases
    that failed (see the ``status`` column); ``events`` typed :class:`Event` objects; ``ok``
    when nothing failed."""

    table: ResultTable
    n_cases: int
    n_failed: int
    events: tuple[Event, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        return self.n_failed == 0

    @property
    def metadata(self) -> dict:
        return self.table.metadata

    @property
    def columns(self) -> list[str]:
        return self.table.headers()

    def __getitem__(self, header: str) -> np.ndarray:
        """A column in the file's units (exactly as written to CSV/JSON)."""
        return self.table[header]

    def si(self, header: str) -> np.ndarray:
        """A column in SI units (m, rad and their rates; fixed-SI columns unchanged)."""
        col = self.table.column(header)
        return np.asarray(col.values, dtype=float) * _si_factor(col.unit, self.table.units)

    def to_pandas(self):
        """A pandas DataFrame of the table (file units, column headers as in the CSV), with the
        metadata in ``DataFrame.attrs``. Needs pandas (not a dependency of linkcli)."""
        try:
            import pandas as pd
        except ImportError:  # pragma: no cover - depends on the environment
            raise ImportError("Outcome.to_pandas needs pandas: pip install pandas") from None
        df = pd.DataFrame({c.header: c.values for c in self.table.columns})
        df.attrs.update(self.metadata)
        return df


def _si_factor(unit: str, units) -> float:
    """SI per unit of a column unit such as ``deg``, ``m/s``, ``deg/s^2`` (file length and
    angle units scale; everything else is already SI)."""
    factor = 1.0
    for k, part in enumerate(unit.split("/")):
        scale = {units.length: units.length_scale, units.angle: units.angle_scale}.get(part.strip(), 1.0)
        factor = factor * scale if k == 0 else factor / scale
    return factor


def _events(messages: Sequence[str]) -> tuple[Event, ...]:
    return tuple(Event("warning", m) for m in messages)


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
        from dataclasses import replace

        from .analyses.solve import SolveRequest, request_from_defaults, run_solve

        req = request_from_defaults(self.model.analysis.solve) if set is None and sweep is None else SolveRequest()
        if set is not None or sweep is not None:
            req = replace(req, set=dict(set or {}), sweeps=_sweeps(sweep))
        req = replace(req, mode=mode, rates={**req.rates, **dict(rates or {})},
                      accelerations={**req.accelerations, **dict(accelerations or {})})
        out = run_solve(self.compiled, req, self.loaded)
        return Outcome(out.table, out.table.n, out.n_failed, _events(out.messages))

    def jacobian(self, set: Mapping[str, float] | None = None, frame: str = "base") -> Outcome:
        """The actuated-rates -> tool-twist Jacobian at one point (rows vx, vy[, vz], [wx, wy,] wz;
        one column per actuated variable, units in ``metadata['column_units']``)."""
        from .analyses.jacobian import run_jacobian

        table, failed = run_jacobian(self.compiled, dict(set or {}), frame, self.loaded)
        return Outcome(table, 1, failed, _events(table.metadata.get("events", [])))

    def ik(self, targets: Sequence[Sequence[float]], mode: str | None = None,
           guess: Mapping[str, float] | None = None) -> Outcome:
        """Inverse kinematics for targets in file units (planar x, y[, angle]; spatial x, y, z[,
        roll, pitch, yaw]); unreachable ones give the closest pose (``status``, ``position_error``)."""
        from .analyses.ik import IKRequest, run_ik

        table, failed = run_ik(self.compiled,
                               IKRequest([list(map(float, t)) for t in targets], mode, dict(guess or {})),
                               self.loaded)
        return Outcome(table, table.n, failed, _events(table.metadata.get("events", [])))

    def simulate(self, dt: float | None = None, t_end: float | None = None, every: int | None = None,
                 set: Mapping[str, float] | None = None, rates: Mapping[str, float] | None = None) -> Outcome:
        """Motion in time (s) from the file's ``analysis.simulate`` block, overridden by the
        arguments. A run that stops early has ``n_failed == 1`` and the rows computed so far."""
        from dataclasses import replace

        from .analyses.simulate import request_from_defaults, run_simulate
        from .errors import AnalysisInputError

        req = request_from_defaults(self.model.analysis.simulate)
        overrides: dict[str, Any] = {k: v for k, v in (("dt", dt), ("t_end", t_end), ("every", every)) if v is not None}
        if any(not (v > 0 and v < float("inf")) for v in overrides.values()):
            raise AnalysisInputError("dt, t_end and every must be positive finite numbers")
        req = replace(req, **overrides, set={**req.set, **dict(set or {})}, rates={**req.rates, **dict(rates or {})})
        out = run_simulate(self.compiled, req, self.loaded)
        table = out.table if out.table is not None else ResultTable.for_mechanism(self.compiled, self.loaded, n=0)
        return Outcome(table, table.n, 0 if out.ok else 1, _events(out.messages))


def load(path: str | Path) -> Mechanism:
    """Load, validate and compile a mechanism file (MechanismFileError with every problem, each
    at its line, when it is invalid)."""
    return Mechanism(path)


__all__ = ["Event", "Mechanism", "Outcome", "load"]
