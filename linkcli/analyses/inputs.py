"""Turning user inputs (names and values in the file's units) into SI arrays for the core.

The analyses layer sits between the CLI (which parses text) and the core (which computes in
SI on arrays): it resolves names, converts units, builds sweep paths, and raises
:class:`AnalysisInputError` with a did-you-mean for anything it cannot resolve.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..core.mechanism import CompiledMechanism
from ..errors import AnalysisInputError
from ..model.base import choices_hint
from ..model.sizes import joint_value_problem, sweep_points, sweep_size_problem


@dataclass(frozen=True)
class Sweep:
    """A sweep of one actuated variable, file units: ``from_``..``to`` by ``step`` or ``num``
    points (both ends included when the step divides the span)."""

    name: str
    from_: float
    to: float
    step: float | None = None
    num: int | None = None

    def __post_init__(self) -> None:
        """Refuse what no sweep means (every caller builds its sweeps here: options, files,
        studies, the Python API): non-finite ends or step, a zero step, fewer than 1 point."""
        step_ok = self.step is None or (math.isfinite(self.step) and self.step != 0)
        if not (math.isfinite(self.from_) and math.isfinite(self.to) and step_ok) \
                or (self.num is not None and self.num < 1) or (self.step is None and self.num is None):
            shown = f"num={self.num}" if self.num is not None else f"step={self.step}"
            raise AnalysisInputError(f"sweep {self.name}: from={self.from_}, to={self.to}, {shown}: "
                                     "from and to must be finite numbers and step a nonzero finite number "
                                     "(or num >= 1 points), "
                                     f"e.g. {{'{self.name}': (0, 360, 1)}}")

    def count(self) -> float:
        """Number of points (a float: huge requests are counted before anything is allocated)."""
        return sweep_points(self.from_, self.to, self.step, self.num)

    def values(self) -> np.ndarray:
        if self.num is not None:
            return np.linspace(self.from_, self.to, self.num)
        span = self.to - self.from_
        step = abs(self.step) * (1.0 if span >= 0 else -1.0)
        n = int(np.floor(abs(span) / abs(self.step) + 1e-9)) + 1
        return self.from_ + step * np.arange(n)


def parse_sweep(text: str) -> Sweep:
    """``JOINT=FROM:TO:STEP`` (or ``JOINT=FROM:TO:nNUM`` for NUM points)."""
    name, sep, spec = text.partition("=")
    parts = spec.split(":")
    if not sep or len(parts) != 3:
        raise AnalysisInputError(f"--sweep {text!r}: write JOINT=FROM:TO:STEP (e.g. crank=0:360:1) "
                                 "or JOINT=FROM:TO:nNUM for NUM points")
    try:
        lo, hi = finite_number(parts[0]), finite_number(parts[1])
        if parts[2].startswith("n"):
            num = int(parts[2][1:])
            if num < 1:
                raise ValueError
            sweep = Sweep(name.strip(), lo, hi, num=num)
        else:
            step = finite_number(parts[2])
            if step == 0:
                raise ValueError
            sweep = Sweep(name.strip(), lo, hi, step=step)
    except ValueError:
        raise AnalysisInputError(f"--sweep {text!r}: FROM and TO must be finite numbers, STEP a nonzero finite "
                                 "number (or nNUM with NUM >= 1)") from None
    problem = sweep_size_problem(sweep.count(), f"--sweep {text!r}")
    if problem:
        raise AnalysisInputError(problem)
    return sweep


def finite_number(text: str) -> float:
    """``float(text)`` refusing nan and +-inf (ValueError), which no option of linkcli means."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text!r} is not a finite number")
    return value


def parse_assignment(text: str, option: str) -> tuple[str, float]:
    """``NAME=VALUE`` -> (name, value)."""
    name, sep, value = text.partition("=")
    try:
        if not sep:
            raise ValueError
        return name.strip(), finite_number(value)
    except ValueError:
        raise AnalysisInputError(f"{option} {text!r}: write NAME=VALUE with a finite number, e.g. crank=30") from None


def actuated_index(mech: CompiledMechanism, name: str, option: str) -> int:
    """Position of an actuated variable (by joint/variable name) within ``q_actuated``."""
    names = [mech.q_names[i] for i in mech.q_actuated]
    if name not in names:
        what = "is not actuated" if name in mech.q_names else "is not a joint variable"
        raise AnalysisInputError(f"{option}: '{name}' {what}. " + choices_hint("actuated variables", name, names))
    return names.index(name)


def actuated_scale(mech: CompiledMechanism) -> np.ndarray:
    """SI per file unit for each actuated variable (n_act,)."""
    rot = mech.q_is_rotation[mech.q_actuated]
    return np.where(rot, mech.angle_scale, mech.length_scale)


def actuated_values(mech: CompiledMechanism, values: dict[str, float], option: str,
                    default: np.ndarray | None = None) -> np.ndarray:
    """SI vector (n_act,) from a {name: file-unit value} dict; unset entries from ``default``
    (SI, e.g. the assembly estimate) or zero."""
    out = np.zeros(mech.n_actuated) if default is None else np.array(default, dtype=float)
    scale = actuated_scale(mech)
    for name, v in values.items():
        k = actuated_index(mech, name, option)
        out[k] = v * scale[k]
        if option == "--set":  # positions only: rates and accelerations may be large
            check_joint_value(mech, k, out[k], f"{option} {name}={v:g}")
    return out


def check_joint_value(mech: CompiledMechanism, k: int, value_si: float, what: str) -> None:
    """AnalysisInputError when actuated variable ``k``'s value (SI) is not finite or too large
    for float64 to resolve to the solver's tolerance (:data:`linkcli.model.sizes.MAX_JOINT_MAGNITUDE`)."""
    from ..core.loop_closure import mechanism_size

    i = mech.q_actuated[k]
    problem = joint_value_problem(float(value_si), bool(mech.q_is_rotation[i]), mechanism_size(mech))
    if problem:
        unit = mech.angle_unit if mech.q_is_rotation[i] else mech.length_unit
        raise AnalysisInputError(f"{what} {unit} {problem}")


def format_inputs(mech: CompiledMechanism, a: np.ndarray, digits: int = 6) -> str:
    """``crank = 30 deg, slide = 0.2 m``: actuated values (n_act,) SI in the file's units."""
    parts = []
    for k, i in enumerate(mech.q_actuated):
        rot = mech.q_is_rotation[i]
        value = a[k] / (mech.angle_scale if rot else mech.length_scale)
        parts.append(f"{mech.q_names[i]} = {value:.{digits}g} {mech.angle_unit if rot else mech.length_unit}")
    return ", ".join(parts)


def sweep_path(mech: CompiledMechanism, base: np.ndarray, sweeps: list[Sweep], mode: str):
    """Actuated values (n, n_act) SI along the sweep, in solve order, and ``order`` such that
    ``path[order]`` gives the rows in output order (grids are solved in serpentine order so
    consecutive points are neighbours, and written in plain row-major order)."""
    if not sweeps:
        return base[None, :].copy(), np.zeros(1, dtype=int)
    counts = [s.count() for s in sweeps]
    problem = sweep_size_problem(max(counts) if mode == "zip" else math.prod(counts), "the sweep")
    if problem:
        raise AnalysisInputError(problem)
    scale = actuated_scale(mech)
    idx = [actuated_index(mech, s.name, "--sweep") for s in sweeps]
    if len(set(idx)) != len(idx):
        raise AnalysisInputError("--sweep: the same variable is swept twice")
    for s, k in zip(sweeps, idx, strict=True):
        for end in (s.from_, s.to):
            check_joint_value(mech, k, end * scale[k], f"--sweep {s.name}: {end:g}")
    axes = [s.values() * scale[k] for s, k in zip(sweeps, idx, strict=True)]
    if mode == "zip":
        n = {len(a) for a in axes}
        if len(n) != 1:
            raise AnalysisInputError(f"zipped sweeps need equal point counts, got {sorted(len(a) for a in axes)}")
        path = np.tile(base, (len(axes[0]), 1))
        for k, a in zip(idx, axes, strict=True):
            path[:, k] = a
        return path, np.arange(len(path))
    grids = np.meshgrid(*axes, indexing="ij")
    shape = grids[0].shape
    natural = np.arange(grids[0].size).reshape(shape)
    serp = _serpentine(natural)
    path = np.tile(base, (grids[0].size, 1))
    for k, g in zip(idx, grids, strict=True):
        path[:, k] = g.ravel()[serp]
    order = np.argsort(serp)
    return path, order


def _serpentine(natural: np.ndarray) -> np.ndarray:
    """Flat indices of an n-D grid visited boustrophedon-style (each axis reverses direction
    every time the axis before it steps), so consecutive entries are grid neighbours."""
    if natural.ndim == 1:
        return natural.ravel()
    out = []
    for i, sub in enumerate(natural):
        s = _serpentine(sub)
        out.append(s if i % 2 == 0 else s[::-1])
    return np.concatenate(out)


def unreached_message(mech: CompiledMechanism, point, a: np.ndarray) -> str:
    """Why :func:`linkcli.core.sweep.configuration_at` (``point``, a BranchPoint) did not reach
    the inputs a (n_act,) SI on the branch of the file's assembly estimate, inputs in file units."""
    if not np.all(np.isfinite(point.reached)):
        loop = mech.joint_names[mech.loop_joint[int(point.worst_loop)]] if mech.n_loops else "?"
        at = format_inputs(mech, point.start)
        return (f"the file's assembly estimate does not assemble at its own inputs ({at}), nor does the solver find "
                f"a configuration at {format_inputs(mech, a)} from it: loop closed by joint {loop} keeps a residual "
                f"of {float(np.max(point.residual, initial=0)):.3g} (m or rad); correct the `assembly` estimate")
    msg = (f"cannot reach {format_inputs(mech, a)} in the assembly mode of the file's estimate: followed from "
           f"{format_inputs(mech, point.start)}, its branch stops near {format_inputs(mech, point.reached)} (a limit "
           "of motion, or a point the continuation could not pass)")
    if point.tried:
        other = " or ".join(format_inputs(mech, t) for t in point.tried)
        msg += f"; nor does it reach {other} the other way round"
    return msg + ("; give inputs this assembly mode reaches, or an `assembly` estimate in the mode you want "
                  "(another mode is never used silently)")


def fallback_note(mech: CompiledMechanism, point) -> str:
    """The warning for a configuration :func:`linkcli.core.sweep.configuration_at` assembled
    without an assembly mode to follow (route "assembled"), else ""."""
    if point.route != "assembled":
        return ""
    return (f"the file's assembly estimate does not assemble at its own inputs ({format_inputs(mech, point.start)}), "
            "so it defines no assembly mode to follow: the configuration was assembled at the requested inputs from "
            "it directly (Newton and seeded restarts, the solution nearest the estimate); check its assembly mode")
