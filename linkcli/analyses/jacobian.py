"""The effector Jacobian at one configuration -> ResultTable (one row per twist component) plus
its metrics and the constraint Jacobian in the metadata.

Entries are in the file's units: e.g. ``m/s per deg/s`` for a linear-velocity row and a
revolute input. Per actuated variable X, ``X.dv_dq [m/deg]`` holds the linear-velocity rows and
``X.dw_dq [deg/deg]`` the angular ones (each empty on the other's rows): one unit per column.
The metrics (singular values, condition number, manipulability) are of the
dimensionless Jacobian (:func:`~linkcli.core.jacobian.homogenized_jacobian`, characteristic
length in the metadata), so they are the same in every unit system. A rank-deficient
dimensionless Jacobian (condition above SINGULAR_CONDITION) is flagged (``singular``, ``rank``,
``lost_directions``) and warned about as a ``singular_point`` event; the configuration is still
solved (status ok), as solve keeps its rows at a dead centre.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.jacobian import characteristic_length, effector_jacobian, homogenized_jacobian, jacobian_metrics
from ..core.loop_closure import SINGULAR_CONDITION, STATUS_TEXT, Status, constraints
from ..core.mechanism import CompiledMechanism
from ..core.mobility import mobility_report
from ..core.sweep import configuration_at
from ..errors import AnalysisInputError
from ..results import ResultTable
from .inputs import actuated_scale, actuated_values, fallback_note, file_value, format_inputs, unreached_message
from .outcome import AnalysisOutcome, Event


def run_jacobian(mech: CompiledMechanism, values: dict[str, float], frame: str = "base",
                 loaded=None) -> AnalysisOutcome:
    """Assemble at the actuated values (file units; unset ones from the assembly estimate) and
    tabulate the actuated-rates -> effector-twist Jacobian: one case (the configuration), failed
    when the point could not be assembled (a ``no_assembly`` event)."""
    if mech.n_actuated == 0:
        raise AnalysisInputError(f"{mech.name}: no joint is actuated, and the Jacobian maps actuated rates to the "
                                 "tool twist; mark the joints you drive with 'actuated: true' (for a free mechanism "
                                 "such as a pendulum, use simulate)")
    if frame not in ("base", "effector"):
        raise AnalysisInputError(f"--frame must be base or effector, not {frame!r}")
    a = actuated_values(mech, values, "--set", default=mech.q_init[mech.q_actuated])
    res = configuration_at(mech, a)  # in the assembly mode of the file's estimate
    comps = ["vx", "vy", "wz"] if mech.planar else ["vx", "vy", "vz", "wx", "wy", "wz"]
    n_lin = 2 if mech.planar else 3
    table = ResultTable.for_mechanism(mech, loaded, n=len(comps), analysis="jacobian", frame=frame)
    table.add("", "component", "", comps)
    ok = res.status == Status.CONVERGED
    J = effector_jacobian(mech, res.q, frame) if ok else np.full((len(comps), mech.n_actuated), np.nan)
    out_scale = np.array([mech.length_scale] * n_lin + [mech.angle_scale] * (len(comps) - n_lin))
    in_scale = actuated_scale(mech)
    J_file = J * in_scale[None, :] / out_scale[:, None]
    # the unit of each row's entries (output per input: m/deg is m/s per deg/s), one per input
    # column, written once when the inputs share a unit
    in_units = [mech.angle_unit if mech.q_is_rotation[i] else mech.length_unit for i in mech.q_actuated]
    out_units = [mech.length_unit] * n_lin + [mech.angle_unit] * (len(comps) - n_lin)
    table.add("", "unit", "", [", ".join(dict.fromkeys(f"{o}/{u}" for u in in_units)) or "-" for o in out_units])
    linear = np.arange(len(comps)) < n_lin
    for k, i in enumerate(mech.q_actuated):
        in_unit = mech.angle_unit if mech.q_is_rotation[i] else mech.length_unit
        # two columns per input, each in one unit: dv_dq the linear-velocity rows (vx, vy[, vz]:
        # length per input unit), dw_dq the angular ones (angle per input unit); each is empty
        # on the other's rows, so no column (nor a figure over it) mixes m/deg and deg/deg
        table.add(mech.q_names[i], "dv_dq", f"{mech.length_unit}/{in_unit}", np.where(linear, J_file[:, k], np.nan))
        table.add(mech.q_names[i], "dw_dq", f"{mech.angle_unit}/{in_unit}", np.where(linear, np.nan, J_file[:, k]))
    L = characteristic_length(mech)
    J_dimless = homogenized_jacobian(mech, J, L)
    metrics = jacobian_metrics(J_dimless) if ok else None
    lost = singular_directions(J_dimless, comps, [mech.q_names[i] for i in mech.q_actuated]) if ok else None
    rep = mobility_report(mech, res.q)
    table.metadata.update({
        "status": STATUS_TEXT[Status(int(res.status))],
        # the requested values as asked (30, never 29.999999999999996 from a round trip through
        # radians, as solve echoes them); the others as solved, in file units
        "configuration": {n: float(values[n]) if n in values
                          else file_value(v, mech.angle_scale if r else mech.length_scale)
                          for n, v, r in zip(mech.q_names, res.q, mech.q_is_rotation, strict=True)},
        "singular_values": None if metrics is None else metrics.singular_values,
        "condition": None if metrics is None else metrics.condition,
        "manipulability": None if metrics is None else metrics.manipulability,
        # singular: the tool loses a direction of motion here (condition above SINGULAR_CONDITION,
        # the threshold of solve's singular_point events); rank of the dimensionless Jacobian
        "singular": None if lost is None else lost.singular,
        "rank": None if lost is None else lost.rank,
        "lost_directions": None if lost is None else lost.directions,
        "constraint_jacobian_si": constraints(mech, res.q).J,
        "mobility": {"gruebler": rep.gruebler, "rank": rep.rank, "mobility": rep.mobility,
                     "redundant_constraints": rep.redundant},
        "units_note": "entries in file units: output unit per input unit (e.g. m per deg: m/s per deg/s)",
        "characteristic_length_m": L,
        "metrics_note": ("singular values, condition and manipulability are of the dimensionless Jacobian: SI "
                         "(m/s, rad/s per rad/s or m/s), linear-velocity rows divided by the characteristic "
                         f"length L = {L:.6g} m (the largest link: largest distance between two frames of one "
                         "link), prismatic input columns multiplied by L; they do not depend on the file's units"),
    })
    events = [] if ok else [Event("no_assembly", unreached_message(mech, res, a), 0)]
    if lost is not None and lost.singular:
        events.append(Event("singular_point", lost.message(format_inputs(mech, a)), 0,
                            {"rank": lost.rank, "lost_directions": lost.directions}))
    if ok and fallback_note(mech, res):
        events.append(Event("warning", fallback_note(mech, res), 0))
    table.metadata["events"] = [e.message for e in events]
    return AnalysisOutcome.of(table, 1, 0 if ok else 1, events, what="configurations")


#: the largest singular value of the dimensionless Jacobian below which the tool does not move at
#: all (rank 0): rates of 1 rad/s move it less than 1e-12 characteristic lengths per second, i.e.
#: rounding of entries of order 1 (the relative test, SINGULAR_CONDITION, needs a nonzero largest)
_NO_MOTION = 1e-12


@dataclass(frozen=True)
class Singularity:
    """The rank of the dimensionless Jacobian (m, n) and what a rank deficiency loses.

    ``rank``: singular values above ``s_max / SINGULAR_CONDITION`` (the one singular threshold:
    solve's ``singular_point``); ``full``: min(m, n); ``singular``: rank < full; ``smallest``:
    the smallest of the min(m, n) singular values; ``directions``: per lost dimension, the tool
    twist it cannot have (``twist``, unit vector of the dimensionless components: linear ones per
    characteristic length) and the actuated rates that move nothing (``rates``, unit vector),
    coefficients below 0.01 left out."""

    rank: int
    full: int
    smallest: float
    directions: list

    @property
    def singular(self) -> bool:
        return self.rank < self.full

    def message(self, at: str) -> str:
        """The warning line: where, the rank, the smallest singular value and what is lost."""
        lost = "; ".join(f"the tool cannot move along {_combination(d['twist'])} (dimensionless twist: linear "
                         "components per characteristic length), and actuated rates "
                         f"{_combination(d['rates'])} move nothing" for d in self.directions)
        return (f"singular configuration at {at}: the Jacobian has rank {self.rank} of {self.full} "
                f"(smallest singular value {self.smallest:.3g}, dimensionless; condition number above "
                f"{SINGULAR_CONDITION:.0e}): {lost}")


def singular_directions(J_dimless: np.ndarray, components: list[str], inputs: list[str]) -> Singularity:
    """:class:`Singularity` of a dimensionless (homogenised) Jacobian (m, n): rows ``components``,
    columns ``inputs``. Scale-free: the threshold is relative to the largest singular value."""
    U, s, Vt = np.linalg.svd(J_dimless)
    full = len(s)
    if full == 0:
        return Singularity(0, 0, float("nan"), [])
    rank = 0 if s[0] <= _NO_MOTION else int(np.count_nonzero(s > s[0] / SINGULAR_CONDITION))
    directions = [{"twist": _unit_vector(U[:, k], components), "rates": _unit_vector(Vt[k], inputs),
                   "singular_value": float(s[k])} for k in range(rank, full)]
    return Singularity(rank, full, float(s[-1]), directions)


def _unit_vector(v: np.ndarray, names: list[str]) -> dict[str, float]:
    """{name: coefficient} of a unit vector, its largest coefficient positive, those below 0.01
    (rounding and near-zero mixing) left out, rounded to 3 decimals."""
    v = v * np.sign(v[np.argmax(np.abs(v))])
    return {n: round(float(c), 3) for n, c in zip(names, v, strict=True) if abs(c) >= 0.01}


def _combination(coeffs: dict[str, float]) -> str:
    """``wy`` for a single component, else ``(-0.707 joint4 + 0.707 joint6)``."""
    if len(coeffs) == 1:
        return next(iter(coeffs))
    terms = [f"{'-' if c < 0 else '+'} {abs(c):g} {n}" for n, c in coeffs.items()]
    terms[0] = terms[0].replace("+ ", "").replace("- ", "-")
    return "(" + " ".join(terms) + ")"
