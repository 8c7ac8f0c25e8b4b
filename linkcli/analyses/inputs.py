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

    def describe(self) -> str:
        """``FROM:TO:STEP`` or ``FROM:TO:nNUM`` as on the command line."""
        return f"{self.from_:g}:{self.to:g}:" + (f"n{self.num}" if self.num is not None else f"{self.step:g}")

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
    """``JOINT=FROM:TO:STEP`` (or ``JOINT=FROM:TO:nNUM`` for NUM points). The sign of STEP
    must follow FROM -> TO (``0:10:-1`` is refused with the fix; ``10:0:-1`` goes down)."""
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
    if sweep.step is not None and sweep.step * (sweep.to - sweep.from_) < 0:
        name, lo, hi, step = sweep.name, parts[0].strip(), parts[1].strip(), parts[2].strip()
        flipped = step[1:] if step.startswith("-") else f"-{step.lstrip('+')}"
        raise AnalysisInputError(f"--sweep {text!r}: the step {step} runs away from TO ({lo} -> {hi}): write "
                                 f"{name}={lo}:{hi}:{flipped} (the step's sign follows FROM -> TO), or "
                                 f"{name}={hi}:{lo}:{step} to sweep the other way")
    problem = sweep_size_problem(sweep.count(), f"--sweep {text!r}")
    if problem:
        raise AnalysisInputError(problem)
    return sweep


def check_not_swept(values: dict[str, float], sweeps: list[Sweep], set_label: str = "--set",
                    sweep_label: str = "--sweep") -> None:
    """Refuse a variable given both a value (``values``, file units, as ``set_label``) and a
    sweep (as ``sweep_label``): the sweep would drop the value silently (AnalysisInputError,
    exit 2, naming both and the fix). Only for values and sweeps given together (a command
    line, one batch job): a file's ``analysis.solve.set`` yields to a sweep given over it."""
    for s in sweeps:
        if s.name in values:
            raise AnalysisInputError(
                f"{set_label} {s.name}={values[s.name]:g} and {sweep_label} {s.name}={s.describe()} both give "
                f"{s.name}: a swept variable takes the sweep's values, so the {set_label} would be dropped; "
                f"give one of them (drop the {set_label}, or set another variable)")


def finite_number(text: str) -> float:
    """``float(text)`` refusing nan and +-inf (ValueError), which no option of linkcli means."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text!r} is not a finite number")
    return value


#: options whose values are rates (per s) or accelerations (per s^2), not joint values
_DERIVATIVE_ORDER = {"--rate": 1, "--speed": 1, "--acceleration": 2}


def parse_assignment(text: str, option: str, mech: CompiledMechanism | None = None) -> tuple[str, float]:
    """``NAME=VALUE`` -> (name, value in the file's units). VALUE is a plain number in the
    file's units (angle unit for a rotation, length unit for a slide; per s for ``--rate``,
    per s^2 for ``--acceleration``) or, given the mechanism ``mech``, a number with a unit
    (``30deg``, ``0.5 rad``, ``25 mm``, ``60 rpm``) converted to the file's units by
    :func:`linkcli.model.units.convert` (pint); NAME must then be a joint variable of ``mech``."""
    name, sep, value = text.partition("=")
    name = name.strip()
    number: float | None = None
    try:
        number = float(value)
    except ValueError:
        pass
    if sep and name and number is not None and math.isfinite(number):
        return name, number
    if number is not None and sep and name:
        raise AnalysisInputError(f"{option} {text!r}: the value must be a finite number (nan and inf are not "
                                 f"accepted), e.g. {_example_assignment(mech, _DERIVATIVE_ORDER.get(option, 0))}"
                                 if mech is not None else f"{option} {text!r}: the value must be a finite number")
    if mech is None:
        raise AnalysisInputError(f"{option} {text!r}: write NAME=VALUE with a finite number in the file's units "
                                 "(no unit here), e.g. crank=30")
    order = _DERIVATIVE_ORDER.get(option, 0)
    per = {0: "", 1: "/s", 2: "/s^2"}[order]
    example = _example_assignment(mech, order)
    units = f"{mech.angle_unit}{per} for angles, {mech.length_unit}{per} for lengths"
    if not sep or not name or not value.strip():
        raise AnalysisInputError(f"{option} {text!r}: write NAME=VALUE, a number in the file's units ({units}) "
                                 f"or with a unit, e.g. {example}")
    if name not in mech.q_names:
        raise AnalysisInputError(f"{option} {text!r}: '{name}' is not a joint variable. "
                                 + choices_hint("variables", name, list(mech.q_names)))
    return name, _file_units_value(mech, name, value.strip(), order, f"{option} {text!r}", units, example)


def _example_assignment(mech: CompiledMechanism, order: int) -> str:
    """``crank_pin=30`` with this mechanism's first actuated variable (else its first variable)."""
    names = [mech.q_names[i] for i in mech.q_actuated] or list(mech.q_names) or ["crank"]
    i = mech.q_names.index(names[0]) if names[0] in mech.q_names else 0
    rot = not len(mech.q_names) or bool(mech.q_is_rotation[i])
    number = {0: 30 if rot else 25, 1: 60 if rot else 100, 2: 10}[order]
    unit = (mech.angle_unit if rot else mech.length_unit) + {0: "", 1: "/s", 2: "/s^2"}[order]
    with_unit = {0: "30deg" if rot else "25mm", 1: "60rpm" if rot else "0.1m/s", 2: "10rad/s^2" if rot else "2m/s^2"}
    return f"{names[0]}={number} ({unit}) or {names[0]}={with_unit[order]}"


def _file_units_value(mech: CompiledMechanism, name: str, text: str, order: int, where: str, units: str,
                      example: str) -> float:
    """``text`` (a number with a unit) in the file's unit of variable ``name``."""
    from ..errors import with_hint
    from ..model.units import JOINT, JOINT_ACCEL, JOINT_RATE, UnitProblem, convert

    dim = (JOINT, JOINT_RATE, JOINT_ACCEL)[order]
    file_units = {"length": mech.length_unit, "angle": mech.angle_unit}
    want = "angle" if mech.q_is_rotation[mech.q_names.index(name)] else "length"
    per = ("", " per second", " per second squared")[order]
    try:
        given = convert(text, dim, file_units)
    except UnitProblem as exc:
        if order:  # a value where a rate (or acceleration) is expected: say which
            try:
                plain = convert(text, JOINT, file_units)
            except UnitProblem:
                pass
            else:
                rate = ("30deg" if want == "angle" else "25mm") + ("", "/s", "/s^2")[order]
                raise AnalysisInputError(
                    f"{where}: '{name}' takes {'an angle' if want == 'angle' else 'a length'}{per}, {text!r} is "
                    f"{'an' if plain.kind == 'angle' else 'a'} {plain.kind}; e.g. {name}={rate}") from None
        raise AnalysisInputError(with_hint(f"{where}: {exc}", f"values are in the file's units ({units}) "
                                           f"or carry a unit, e.g. {example}")) from None
    if given.kind != want:
        raise AnalysisInputError(f"{where}: '{name}' is {'an angle' if want == 'angle' else 'a length'}"
                                 f"{' rate' if order == 1 else ' acceleration' if order == 2 else ''}, "
                                 f"{text!r} is {'an' if given.kind == 'angle' else 'a'} {given.kind}; "
                                 f"e.g. {example}")
    if not math.isfinite(given):
        raise AnalysisInputError(f"{where}: {text!r} is not a finite number")
    return float(given)


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


def file_value(si: float, scale: float) -> float:
    """The value in file units (``scale``: SI per file unit) of an SI value that came from the
    file: the shortest decimal (12, else 15 significant digits) whose SI value is exactly ``si``
    (``30`` for 30 deg's radians, where ``si / scale`` gives 29.999999999999996), else
    ``si / scale``. The echo differs from the SI value used by no bit."""
    x = float(si) / scale
    for digits in (12, 15):
        clean = float(f"{x:.{digits}g}")
        if clean * scale == si:
            return clean
    return x


def format_inputs(mech: CompiledMechanism, a: np.ndarray, digits: int = 6) -> str:
    """``crank = 30 deg, slide = 0.2 m``: actuated values (n_act,) SI in the file's units."""
    parts = []
    for k, i in enumerate(mech.q_actuated):
        rot = mech.q_is_rotation[i]
        value = a[k] / (mech.angle_scale if rot else mech.length_scale)
        parts.append(f"{mech.q_names[i]} = {value:.{digits}g} {mech.angle_unit if rot else mech.length_unit}")
    return ", ".join(parts)


@dataclass(frozen=True)
class InputGrid:
    """The actuated inputs of a sweep: ``path`` (n, n_act) SI in solve order (what the solver
    takes), ``file`` (n, n_act) the same in the file's units, computed there (the requested
    grid values and ``--set`` values exactly as asked: ``30``, never ``29.999999999999996``
    from a round trip through radians; the columns the tables echo), and ``order`` such that
    ``path[order]`` gives the rows in output order."""

    path: np.ndarray
    file: np.ndarray
    order: np.ndarray


def input_grid(mech: CompiledMechanism, values: dict[str, float], sweeps: list[Sweep], mode: str,
               option: str = "--set") -> InputGrid:
    """The sweep of ``sweeps`` (``mode`` "grid" or "zip") around the actuated values
    ``values`` (file units; the others at the assembly estimate), see :class:`InputGrid`."""
    base = actuated_values(mech, values, option, default=mech.q_init[mech.q_actuated])
    # the others (the assembly estimate) as the file wrote them: 30, not 29.999999999999996
    base_file = np.array([file_value(si, sc) for si, sc in zip(base, actuated_scale(mech), strict=True)])
    for name, v in values.items():  # as asked, not through SI
        base_file[actuated_index(mech, name, option)] = v
    file, order, swept = _grid(mech, base_file, sweeps, mode)
    path = np.tile(base, (len(file), 1))
    path[:, swept] = file[:, swept] * actuated_scale(mech)[swept]
    return InputGrid(path, file, order)


def _grid(mech: CompiledMechanism, base: np.ndarray, sweeps: list[Sweep], mode: str):
    """``(values (n, n_act) file units in solve order, order, swept indices)`` of the sweep
    around ``base`` (n_act,) file units."""
    if not sweeps:
        return base[None, :].copy(), np.zeros(1, dtype=int), np.zeros(0, dtype=int)
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
    axes = [s.values() for s in sweeps]
    swept = np.array(idx, dtype=int)
    if mode == "zip":
        if len({len(a) for a in axes}) != 1:
            listed = ", ".join(f"{s.name} {s.describe()} has {len(a)}" for s, a in zip(sweeps, axes, strict=True))
            raise AnalysisInputError(f"zipped sweeps (--zip) need equal point counts: {listed}; give them the same "
                                     "number of points (e.g. FROM:TO:nNUM for NUM points)")
        path = np.tile(base, (len(axes[0]), 1))
        for k, a in zip(idx, axes, strict=True):
            path[:, k] = a
        return path, np.arange(len(path)), swept
    grids = np.meshgrid(*axes, indexing="ij")
    shape = grids[0].shape
    natural = np.arange(grids[0].size).reshape(shape)
    serp = _serpentine(natural)
    path = np.tile(base, (grids[0].size, 1))
    for k, g in zip(idx, grids, strict=True):
        path[:, k] = g.ravel()[serp]
    order = np.argsort(serp)
    return path, order, swept


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
