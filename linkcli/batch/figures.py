"""Figures (numbers or labels summarising a result table) and acceptance checks (pass/fail).

Both work on a :class:`~linkcli.results.ResultTable` plus the compiled mechanism (for names:
drivers, four-bar loops). A column that is missing is not an exception: the figure is NaN and a
check on it fails with a message naming the close matches. Only finite values count (rows that
could not be computed hold NaN and are reported through the job's status instead).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..model.base import closest
from ..model.jobs import Check, Figure

_UNIT = re.compile(r"\s*\[([^\]]*)\]$")
DEG_PER = {"deg": 1.0, "rad": 180.0 / math.pi}


@dataclass(frozen=True)
class FigureValue:
    """One figure: ``name`` (what checks refer to), the column header it gets in a study table
    (``entity``, ``quantity``, ``unit``), its ``value`` (float, NaN when unavailable, or a label)
    and ``note`` (why it is unavailable)."""

    name: str
    entity: str
    quantity: str
    unit: str
    value: Any
    note: str = ""

    @property
    def header(self) -> str:
        from ..results import header_of

        return header_of(self.entity, self.quantity, self.unit)

    def text(self) -> str:
        v = self.value
        if isinstance(v, float):
            v = "nan" if math.isnan(v) else f"{v:.4g}"
        return f"{self.name}={v}" + (f" {self.unit}" if self.unit and v != "nan" else "")


@dataclass(frozen=True)
class CheckResult:
    """A check's outcome. ``skipped``: it does not apply to this mechanism (``message`` says
    why, e.g. no four-bar loop for min_transmission_angle); a skipped check does not fail the
    job and has ``passed`` True."""

    name: str
    passed: bool
    value: Any = None  # the value compared (worst case), None when there is none
    message: str = ""
    skipped: bool = False

    @property
    def status(self) -> str:
        return "skipped" if self.skipped else "passed" if self.passed else "failed"

    def to_dict(self) -> dict:
        v = self.value
        return {"name": self.name, "status": self.status, "passed": self.passed,
                "value": None if isinstance(v, float) and not math.isfinite(v) else v, "message": self.message}


# -- columns ------------------------------------------------------------------------------------------
def unit_of(header: str) -> str:
    m = _UNIT.search(header)
    return m.group(1) if m else ""


def match_columns(table, pattern: str) -> list[str]:
    """Headers equal to ``pattern``, or matching it when it holds ``*`` (any text)."""
    return list(_matching(tuple(table.headers()), "glob", pattern))


@functools.lru_cache(maxsize=512)
def _matching(headers: tuple, how: str, arg: str) -> tuple:
    """Headers selected by a rule, cached per header list: a study evaluates the same figures on
    thousands of tables with the same headers (``how``: glob, startswith, regex)."""
    if how == "glob":
        if "*" not in arg:
            return (arg,) if arg in headers else ()
        rx = re.compile(".*".join(re.escape(part) for part in arg.split("*")) + r"\Z")
        return tuple(h for h in headers if rx.match(h))
    if how == "startswith":
        return tuple(h for h in headers if h.startswith(arg))
    return tuple(h for h in headers if re.match(arg, h))


def _first_starting(table, prefix: str) -> str | None:
    hits = _matching(tuple(table.headers()), "startswith", prefix)
    return hits[0] if hits else None


def unit_factor(source: str, target: str) -> float | None:
    """``f`` with ``value [target] = f * value [source]`` when both are units that depend on
    the file's ``units:`` (:func:`linkcli.model.units.file_unit_scale`) and of the same kind;
    else None."""
    from ..model.units import file_unit_scale

    a, b = file_unit_scale(source), file_unit_scale(target)
    if a is None or b is None or a[1] != b[1]:
        return None
    return a[0] / b[0]


def match_columns_in_unit(table, pattern: str) -> tuple[list[str], float]:
    """Headers matching ``pattern`` and the factor that brings their values to the pattern's
    unit: 1 for an exact match; for a pattern in another length or angle unit than the file's
    (``B.transmission [deg]`` on a file in rad) the same columns in the file's unit and the
    conversion factor. ([], 1.0) when nothing matches."""
    headers = match_columns(table, pattern)
    unit = unit_of(pattern)
    if headers or not unit:
        return headers, 1.0
    base = _UNIT.sub("", pattern)
    candidates = match_columns(table, f"{base} [*]")
    units = {unit_of(h) for h in candidates}
    if len(units) == 1:
        factor = unit_factor(units.pop(), unit)
        if factor is not None:
            return candidates, factor
    return [], 1.0


def missing_column(table, pattern: str) -> str:
    close = closest(pattern, table.headers())
    hint = f" Did you mean '{close}'?" if close else ""
    return f"no column '{pattern}' in the results.{hint}"


def finite(values: np.ndarray) -> np.ndarray:
    v = np.asarray(values, dtype=float)
    return v[np.isfinite(v)]


STATS = {
    "min": np.min, "max": np.max, "mean": np.mean, "std": np.std,
    "range": lambda v: np.max(v) - np.min(v), "absmax": lambda v: np.max(np.abs(v)),
    "first": lambda v: v[0], "last": lambda v: v[-1],
    "rms": lambda v: np.sqrt(np.mean(np.square(v))),  # forces: RMS torque over the sweep
}


def _stat(values: np.ndarray, stat: str) -> float:
    v = finite(values)
    return float(STATS[stat](v)) if len(v) else math.nan


def _float_column(table, header: str) -> np.ndarray | None:
    col = table.column(header)
    return col.values if col.kind in ("float", "int") else None


# -- figures ------------------------------------------------------------------------------------------
def default_figures(analysis: str, mech) -> list[Figure]:
    """Key figures of a job that names none: four-bar transmission and Grashof class (solve),
    peak driver loads (simulate), worst position error (ik)."""
    from ..core.planar_metrics import fourbar_loops

    if analysis == "solve":
        loops = fourbar_loops(mech)
        figs = [Figure(column=f"{mech.joint_names[lp.joints[2]]}.transmission [{mech.angle_unit}]", stat="min")
                for lp in loops]
        return figs + ([Figure(grashof=True)] if loops else [])
    if analysis == "simulate":
        return [Figure(peak_driver_load=name) for name in mech.driver_names]
    if analysis == "ik":
        return [Figure(column=f"position_error [{mech.length_unit}]", stat="max")]
    if analysis == "forces":  # peak and RMS input torque/force, peak shaking force and moment
        figs = []
        for i in mech.q_actuated:
            col = f"{mech.q_names[i]}.{'torque [N m]' if mech.q_is_rotation[i] else 'force [N]'}"
            figs += [Figure(column=col, stat="absmax"), Figure(column=col, stat="rms")]
        return figs + [Figure(column="shaking.F [N]", stat="max"), Figure(column="shaking.M* [N m]", stat="absmax")]
    return []


def evaluate_figures(figures: Sequence[Figure], table, mech, reference: dict | None = None,
                     loops: list | None = None, points=None) -> list[FigureValue]:
    """``loops``: the mechanism's four-bar loops when the caller has them (a study's fast path:
    the nominal's rings with a variant's lengths), else ``fourbar_loops(mech)``. ``points``: a
    callable returning the :class:`~linkcli.core.extremes.KernelPoints` of the table's own
    geometry (a study's fast path: the variant's, while ``mech`` is the nominal), else built
    from ``mech``."""
    return [evaluate_figure(f, table, mech, reference, loops, points) for f in figures]


def evaluate_figure(fig: Figure, table, mech, reference: dict | None = None, loops: list | None = None,
                    points=None) -> FigureValue:
    kind = fig.kind
    if kind == "grashof":
        from ..core.planar_metrics import fourbar_loops, grashof_class

        loops = fourbar_loops(mech) if loops is None else loops
        label = "+".join(grashof_class(*lp.lengths) for lp in loops) if loops else "none"
        return FigureValue(fig.name or "grashof", "", fig.name or "grashof", "", label,
                           "" if loops else "no four-bar loop")
    if table is None:
        return _unavailable(fig, "no results")
    if kind == "column":
        name = re.sub(r"\s*\[[^\]]*\]$", "", fig.column)
        headers, factor = match_columns_in_unit(table, fig.column)
        unit = unit_of(fig.column) or (unit_of(headers[0]) if headers else "")
        label = fig.name or f"{fig.stat}({name})"
        if not headers:
            return FigureValue(label, "", label, unit, math.nan, missing_column(table, fig.column))
        cols = [_float_column(table, h) for h in headers]
        if any(c is None for c in cols):
            return FigureValue(label, "", label, unit, math.nan, f"'{fig.column}' is not a numeric column")
        mixed = _mixed_units(fig.column, headers, factor)
        if mixed:  # a figure never mixes units (m/deg with deg/deg ...)
            return FigureValue(label, "", label, "", math.nan, mixed)
        values = np.concatenate(cols) * factor
        return FigureValue(label, "", label, unit, _stat(values, fig.stat))
    if kind == "range_of_motion":
        var = fig.range_of_motion
        header = _first_starting(table, f"{var}.q [")
        label = fig.name or f"{var}.range"
        if header is None:
            return FigureValue(label, "" if fig.name else var, fig.name or "range", "", math.nan,
                               missing_column(table, f"{var}.q"))
        value, note = range_of_motion(table, mech, var, header, points)
        return FigureValue(label, "" if fig.name else var, fig.name or "range", unit_of(header), value, note)
    if kind == "peak_driver_load":
        name = fig.peak_driver_load
        headers = [h for h in table.headers() if h in (f"{name}.torque [N m]", f"{name}.force [N]")]
        label = fig.name or f"{name}.peak"
        if not headers:
            note = (missing_column(table, f"{name}.torque [N m]") if name in getattr(mech, "driver_names", ())
                    else f"no driver '{name}' (drivers: {', '.join(mech.driver_names) or 'none'})")
            return FigureValue(label, "" if fig.name else name, fig.name or "peak", "", math.nan, note)
        return FigureValue(label, "" if fig.name else name, fig.name or "peak", unit_of(headers[0]),
                           _stat(table[headers[0]], "absmax"))
    # path_deviation
    frame = fig.path_deviation
    label = fig.name or f"{frame}.path_deviation"
    entity, quantity = ("", fig.name) if fig.name else (frame, "path_deviation")
    unit = table.units.length
    path = frame_path(table, frame)
    ref = (reference or {}).get(frame)
    if path is None:
        return FigureValue(label, entity, quantity, unit, math.nan, missing_column(table, f"{frame}.x [{unit}]"))
    if ref is None or ref.shape != path.shape:
        return FigureValue(label, entity, quantity, unit, math.nan, "no nominal path to compare with")
    d = np.linalg.norm(path - ref, axis=1)
    value = float(np.max(d)) if np.all(np.isfinite(d)) else math.nan
    return FigureValue(label, entity, quantity, unit, value,
                       "" if math.isfinite(value) else "some points have no position")


#: why a range of motion is the rows' max - min (the figure's note)
SAMPLED = "sampled: max - min over the result rows"


def range_of_motion(table, mech, var: str, header: str, points=None) -> tuple[float, str]:
    """(range in the column's unit, note) of joint variable ``var`` (its column ``header``).

    On a solve sweep of one actuated variable (one input column varying, monotone along the
    rows) the exact range over the swept inputs: the extremes among the solved rows, the
    configurations at the located limits of motion, and the stationary points between rows
    (:func:`linkcli.core.extremes.sweep_extremes`). Otherwise (a grid, a zip of several inputs,
    simulate or other tables) max - min of the column's finite values, and the note says it is
    sampled."""
    values = np.asarray(table[header], dtype=float)
    clean = getattr(table, "metadata", {}).get("clean_sweep")  # (a study's fast path: every row solved)
    if not clean and "status" in table.headers():  # only rows solved on the estimate's branch
        solved = np.asarray(table["status"]) == "ok"
        if not solved.any():
            return math.nan, "no row solved on the assembly estimate's branch (status ok)"
        values = values[solved]
    sampled = _stat(values, "range")
    if not math.isfinite(sampled):
        return sampled, ""
    if len(table) < 2:
        return sampled, ""  # one row: the range is 0
    why = _not_a_sweep(table, mech)
    if why:
        return sampled, f"{SAMPLED} ({why})"
    try:
        rows = _sweep_rows(table, mech)
    except _NotSweep as exc:
        return sampled, f"{SAMPLED} ({exc})"
    var_index = next((k for k, n in enumerate(mech.q_names) if header.startswith(f"{n}.q [")), None)
    if var_index is None or getattr(mech, "n_loops", 0) == 0:
        return sampled, ""  # no loop: every variable is an input or constant (the rows hold the extremes)
    Q, q, ok, col, breaks = rows
    if points is None:
        from ..core.sweep import kernel_points

        kp = kernel_points(mech)
    else:
        kp = points()
    if kp is None:
        return sampled, ""
    from ..core.extremes import sweep_extremes
    from ..core.loop_closure import mechanism_size

    ends = _limit_configurations(table, mech, Q, q, ok)
    # the input of a stationary point to 1e-9 rad (or of the size): the value's error is
    # f'' dx^2 / 2 ~ 1e-18 f''; a tighter bracket only meets the rate's rounding noise (~1e-13
    # from the Newton tolerance), where Brent's interpolation gives way to minimal steps
    xtol = 1e-9 * (1.0 if mech.q_is_rotation[mech.q_actuated[col]] else mechanism_size(mech))
    ext = sweep_extremes(kp, Q, q, ok, var_index, col, breaks=breaks, ends=ends, xtol=xtol)
    if ext is None or (not ext.located and not ends):
        return sampled, ""
    scale = float(table.units.q_scale(mech.q_is_rotation[var_index:var_index + 1])[0])
    note = (f"{ext.unresolved} segment(s) next to a sampled extreme could not be refined (their rows' values "
            "stand)") if ext.unresolved else ""
    # (never below the rows' own max - min: the candidates include the rows, up to unit rounding)
    return max((ext.hi - ext.lo) / scale, sampled), note


class _NotSweep(Exception):
    """The table is not a solve sweep of one input (the message says why)."""


def _not_a_sweep(table, mech) -> str:
    """Why the table is not a solve sweep (''), from its metadata (a study's lazy table has its own)."""
    analysis = getattr(table, "metadata", {}).get("analysis")
    if analysis != "solve":
        return f"{analysis or 'these'} results: only a solve sweep of one input is refined"
    if not len(getattr(mech, "q_actuated", ())):
        return "no actuated variable"
    return ""


def _sweep_rows(table, mech):
    """(Q_act (n, n_act) SI, q (n, n_q) SI, ok (n,), the varying input's number, breaks) of a
    solve table whose rows sweep exactly one actuated variable monotonically (_NotSweep else).
    ``breaks``: segments k (rows k, k + 1) with a singular crossing located between them or a
    row at a singular configuration at either end."""
    n = len(table)
    headers = tuple(table.headers())
    own = getattr(table, "joint_values_si", None)  # (a study's lazy table has the sweep's SI array)
    if own is not None:
        q = own()
    else:
        scale = table.units.q_scale(mech.q_is_rotation)
        q = np.empty((n, mech.n_q))
        for k, name in enumerate(mech.q_names):
            hits = _matching(headers, "startswith", f"{name}.q [")
            if not hits:
                raise _NotSweep(f"no column {name}.q")
            q[:, k] = np.asarray(table[hits[0]], dtype=float) * scale[k]
    Q = q[:, mech.q_actuated]
    if not np.all(np.isfinite(Q)):
        raise _NotSweep("an input is not finite")
    varying = [c for c in range(Q.shape[1]) if np.any(Q[:, c] != Q[0, c])]
    if len(varying) != 1:
        raise _NotSweep(f"{len(varying)} inputs vary")
    col = varying[0]
    d = np.diff(Q[:, col])
    if not (np.all(d > 0) or np.all(d < 0)):
        raise _NotSweep("the input is not monotone along the rows")
    breaks: set[int] = set()
    if getattr(table, "metadata", {}).get("clean_sweep"):  # (a study's fast path: all rows solved, no event)
        return Q, q, np.ones(n, dtype=bool), col, breaks
    status = np.asarray(table["status"]) if "status" in headers else np.full(n, "ok")
    ok = (status == "ok") & np.all(np.isfinite(q), axis=1)
    for rec in getattr(table, "metadata", {}).get("limits", ()):
        if rec.get("kind") == "singular_crossing":
            breaks.add(min(rec["rows"]))
    if "condition" in headers:
        from ..core.loop_closure import SINGULAR_CONDITION

        for k in np.flatnonzero(np.asarray(table["condition"], dtype=float) > SINGULAR_CONDITION):
            breaks.update((int(k) - 1, int(k)))
    return Q, q, ok, col, breaks


def _limit_configurations(table, mech, Q: np.ndarray, q: np.ndarray, ok: np.ndarray) -> list:
    """[(inputs (n_act,), q (n_q,)) SI] at the located ends of motion of the table's metadata
    (``limits``: between a solved and a failed row): located again from the solved row by the
    solve's own bisection (:func:`linkcli.core.limits.locate_limits`, same width), then solved
    at the input the metadata reports, from that configuration. (Near a fold the two branches
    are ~sqrt(bracket) apart, far inside the 1e-4 accepted: either is the limit's configuration
    to that accuracy, see :mod:`linkcli.core.extremes`.)"""
    recs = [r for r in getattr(table, "metadata", {}).get("limits", ()) if r.get("kind") != "singular_crossing"]
    if not recs:
        return []
    from ..analyses.inputs import actuated_scale
    from ..analyses.solve import LIMIT_WIDTH
    from ..core.limits import locate_limits
    from ..core.loop_closure import Status, solve_configuration

    tol = float(getattr(table, "metadata", {}).get("solver", {}).get("tol", 1e-10))
    out = []
    for r in recs:
        k0, k1 = sorted(r["rows"])
        if k1 != k0 + 1 or ok[k0] == ok[k1]:
            continue
        status = np.where(ok[[k0, k1]], Status.CONVERGED, Status.NO_ASSEMBLY)
        guess = np.where(np.isfinite(q[[k0, k1]]), q[[k0, k1]], 0.0)
        reported = np.array([r.get("inputs", {}).get(mech.q_names[i], math.nan) for i in mech.q_actuated],
                            dtype=float) * actuated_scale(mech)
        for lim in locate_limits(mech, Q[[k0, k1]], guess, status, width=LIMIT_WIDTH * actuated_scale(mech),
                                 tol=tol):
            # the configuration at the very input the metadata reports (the bisection from the
            # table's rows, rounded to file units and back, may stop a few 1e-12 away, and near a
            # fold the configuration moves like the square root of that)
            if np.all(np.isfinite(reported)):
                res = solve_configuration(mech, reported, lim.q, tol=min(tol, 1e-13))
                if res.status == Status.CONVERGED and np.max(np.abs(res.q - lim.q)) < 1e-4:
                    out.append((reported, res.q))
                    continue
            out.append((lim.at, lim.q))
    return out


def _unavailable(fig: Figure, note: str) -> FigureValue:
    label = fig.name or fig.kind
    return FigureValue(label, "", label, "", math.nan, note)


def frame_path(table, frame: str) -> np.ndarray | None:
    """(n, 2 or 3) positions of a frame's columns ``F.x``, ``F.y`` (``F.z``), file units."""
    cols = []
    for axis in "xyz":
        header = _first_starting(table, f"{frame}.{axis} [")
        if header is None:
            break
        cols.append(np.asarray(table[header], dtype=float))
    return np.stack(cols, axis=1) if len(cols) >= 2 else None


def reference_paths(figures: Sequence[Figure], table) -> dict:
    """Nominal frame paths needed by the path_deviation figures."""
    out = {}
    for f in figures:
        if f.path_deviation is not None and table is not None:
            p = frame_path(table, f.path_deviation)
            if p is not None:
                out[f.path_deviation] = p
    return out


# -- checks -------------------------------------------------------------------------------------------
def _mixed_units(column: str | None, headers: Sequence[str], factor: float) -> str:
    """Why the columns ``headers`` that ``column`` matched (converted by ``factor``) cannot be
    taken together: '' when they share one unit (or were all converted to the one named)."""
    units = list(dict.fromkeys(unit_of(h) for h in headers))
    if factor != 1.0 or len(units) < 2:
        return ""
    return (f"'{column}' matches columns in different units ({', '.join(units)}); "
            f"name one unit, e.g. '{headers[0]}'")


def evaluate_checks(checks: Sequence[Check], table, mech, figures: Sequence[FigureValue]) -> list[CheckResult]:
    return [evaluate_check(c, table, mech, figures) for c in checks]


def _bounds(label: str, values: np.ndarray, lo: float | None, hi: float | None, unit: str = "") -> CheckResult:
    v = finite(values)
    if not len(v):
        return CheckResult(label, False, None, "no values to check")
    u = f" {unit}" if unit else ""
    if lo is not None and v.min() < lo:
        return CheckResult(label, False, float(v.min()), f"minimum {v.min():.6g}{u} is below {lo:g}{u}")
    if hi is not None and v.max() > hi:
        return CheckResult(label, False, float(v.max()), f"maximum {v.max():.6g}{u} is above {hi:g}{u}")
    worst = float(v.min()) if lo is not None else float(v.max())
    return CheckResult(label, True, worst)


def evaluate_check(check: Check, table, mech, figures: Sequence[FigureValue]) -> CheckResult:
    label = check.label()
    subject = check.subject
    if subject == "figure":
        fig = next((f for f in figures if f.name == check.figure), None)
        if fig is None or not isinstance(fig.value, (int, float)):
            return CheckResult(label, False, None, f"figure '{check.figure}' has no number"
                               + (f" ({fig.note})" if fig is not None and fig.note else ""))
        value = abs(fig.value) if check.abs else fig.value
        result = _bounds(label, np.array([value], dtype=float), check.min, check.max, fig.unit)
        if not result.passed and fig.note and result.value is None:
            result = CheckResult(label, False, None, fig.note)
        return result
    if table is None:
        return CheckResult(label, False, None, "no results to check")
    if subject == "column":
        headers, factor = match_columns_in_unit(table, check.column)
        if not headers:
            return CheckResult(label, False, None, missing_column(table, check.column))
        cols = [_float_column(table, h) for h in headers]
        if any(c is None for c in cols):
            return CheckResult(label, False, None, f"'{check.column}' is not a numeric column")
        mixed = _mixed_units(check.column, headers, factor)
        if mixed:  # as for a figure: a bound never compares mm with deg
            return CheckResult(label, False, None, mixed)
        values = np.concatenate(cols) * factor
        unit = unit_of(check.column)
        return _bounds(label, np.abs(values) if check.abs else values, check.min, check.max,
                       unit if unit and "*" not in unit else unit_of(headers[0]))
    if subject == "min_transmission_angle":
        headers = list(_matching(tuple(table.headers()), "regex", r".+\.transmission \[(deg|rad)\]$"))
        if not headers:
            from ..core.planar_metrics import fourbar_loops

            if not fourbar_loops(mech):
                return CheckResult(label, True, None, "the mechanism has no four-bar loop", True)
            return CheckResult(label, False, None, "no transmission angle in the results (they come with analysis "
                                                   "solve or forces)")
        values = np.concatenate([np.asarray(table[h], float) * DEG_PER[unit_of(h)] for h in headers])
        return _bounds(label, values, check.min_transmission_angle, None, "deg")
    if subject == "max_loop_residual":
        headers = [h for h in table.headers() if re.match(r"(loop_.+\.residual|constraint_residual) \[", h)]
        if not headers:
            if getattr(mech, "n_loops", 0) == 0:
                return CheckResult(label, True, None, "the mechanism has no closed loop", True)
            return CheckResult(label, False, None, "no loop residual in the results")
        from ..model.units import LENGTH_SCALE

        # in m whatever the file's length unit (the columns are in it)
        values = np.concatenate([np.asarray(table[h], float) * LENGTH_SCALE[unit_of(h)] for h in headers])
        return _bounds(label, values, None, check.max_loop_residual, "m")
    # max_driver_torque
    names = list(getattr(mech, "driver_names", ()))
    headers = [h for h in table.headers() for n in names if h in (f"{n}.torque [N m]", f"{n}.force [N]")]
    if not headers:
        if not names:
            return CheckResult(label, True, None, "the mechanism has no drivers", True)
        return CheckResult(label, False, None, "no driver loads in the results (use analysis simulate)")
    values = np.concatenate([np.abs(np.asarray(table[h], float)) for h in headers])
    return _bounds(label, values, None, check.max_driver_torque, unit_of(headers[0]))


__all__ = ["unit_factor", "match_columns_in_unit", "FigureValue", "CheckResult", "default_figures", "evaluate_figures",
           "evaluate_checks",
           "reference_paths", "frame_path", "match_columns"]
