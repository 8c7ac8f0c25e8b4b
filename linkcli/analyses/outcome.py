"""The one result type of every analysis: :class:`AnalysisOutcome`, with typed :class:`Event` s.

Every ``run_*`` of :mod:`linkcli.analyses` returns it; the commands, batch jobs, the plots and
the Python API (:mod:`linkcli.api`) read it as it is. Failures are typed, never parsed: an event
whose ``kind`` is in :data:`FAILURE_KINDS` explains a failed case, and ``failure`` holds the
first such message (or a count of failed cases when no event names one).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: event kinds that explain a failed case (a row whose status is not ``ok``, or a run that
#: stopped): ``no_assembly`` (no configuration found or none exists), ``outside_limits`` (a
#: joint value outside its ``limits``), ``singular`` (no finite input force balances the loads),
#: ``unreachable`` (an ik target), ``not_converged`` (Newton did not meet the tolerance),
#: ``stopped`` (a simulation that could not start or ended early), ``inaccurate`` (a simulation
#: that ran to its end but whose energy balance error outgrew its energy scale: every row is
#: kept, the message says from when they are not accurate)
FAILURE_KINDS = frozenset({"no_assembly", "outside_limits", "singular", "unreachable", "not_converged", "stopped",
                           "inaccurate"})


@dataclass(frozen=True)
class Event:
    """Something an analysis reports besides its table. ``kind``: ``no_assembly``,
    ``outside_limits``, ``singular``, ``unreachable``, ``not_converged``, ``stopped``, ``inaccurate`` (these
    explain failures, :data:`FAILURE_KINDS`), ``singular_crossing``, ``singular_point``,
    ``reassembled``, ``branch_jump``, ``limit`` (a located limit of motion) or ``warning``
    (anything else); ``index``: the case (sweep point in solve order, target) it concerns, or
    None; ``message``: what the command line prints; ``data``: details (may be empty)."""

    kind: str
    message: str
    index: int | None = None
    data: dict = field(default_factory=dict)

    @property
    def is_failure(self) -> bool:
        return self.kind in FAILURE_KINDS


def warnings(messages: Iterable[str]) -> list[Event]:
    """Plain messages as ``warning`` events."""
    return [Event("warning", m) for m in messages]


@dataclass(frozen=True)
class AnalysisOutcome:
    """The result of one analysis.

    ``table``: the :class:`ResultTable` the command writes (columns ``entity.quantity [unit]``
    in the file's units; None only when a simulation could not start); ``n_cases`` cases (sweep
    points, targets, configurations, simulation runs); ``n_failed`` of them failed (their
    ``status`` is not ``ok``; a simulation counts one run); ``events`` typed :class:`Event`
    objects in the order the analysis met them; ``failure`` the message of the first failure
    event ("" when nothing failed or no event explains it; :attr:`failure_summary` always has a
    text); ``what`` names the cases (points, targets ...); ``summary`` numbers of the run (keys name their units,
    e.g. ``wall_time_s``); ``result`` the core result object where one is kept (ForcesResult,
    SimulationResult, the list of equilibria; None for solve, ik and jacobian) for callers that
    need raw SI arrays."""

    table: Any  # ResultTable | None
    n_cases: int
    n_failed: int
    events: tuple[Event, ...] = ()
    failure: str = ""
    summary: dict = field(default_factory=dict)
    result: Any = None
    what: str = "cases"

    @classmethod
    def of(cls, table, n_cases: int, n_failed: int, events: Iterable[Event], summary: dict | None = None,
           result: Any = None, failure: str | None = None, what: str = "cases") -> AnalysisOutcome:
        """Build an outcome; ``failure`` defaults to the first failure event's message."""
        events = tuple(events)
        if failure is None:
            failure = next((e.message for e in events if e.is_failure), "")
        return cls(table, int(n_cases), int(n_failed), events, failure if n_failed else "", summary or {}, result,
                   what)

    @property
    def failure_summary(self) -> str:
        """``failure``, or "N of M <what> failed (see status)" when no event explains it ("" when
        nothing failed)."""
        if not self.n_failed:
            return ""
        return self.failure or f"{self.n_failed} of {self.n_cases} {self.what} failed (see status)"

    @property
    def ok(self) -> bool:
        return self.n_failed == 0

    @property
    def messages(self) -> list[str]:
        """The events' messages, as the command line prints them (one warning line each)."""
        return [e.message for e in self.events]

    @property
    def metadata(self) -> dict:
        return self.table.metadata if self.table is not None else {}

    @property
    def columns(self) -> list[str]:
        return self.table.headers() if self.table is not None else []

    def __getitem__(self, header: str) -> np.ndarray:
        """A column in the file's units (exactly as written to CSV/JSON)."""
        return self.table[header]

    def si(self, header: str) -> np.ndarray:
        """A column in SI units (m, rad and their rates; fixed-SI columns unchanged)."""
        col = self.table.column(header)
        return np.asarray(col.values, dtype=float) * si_factor(col.unit)

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


def si_factor(unit: str) -> float:
    """SI per unit of a column unit such as ``deg``, ``m/s``, ``deg/s^2`` (file length and
    angle units and their rates scale; every other column is already SI)."""
    from ..model.units import file_unit_scale

    scale = file_unit_scale(unit)
    return scale[0] if scale is not None else 1.0


__all__ = ["FAILURE_KINDS", "AnalysisOutcome", "Event", "si_factor", "warnings"]
