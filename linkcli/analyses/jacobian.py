"""The effector Jacobian at one configuration -> ResultTable (one row per twist component) plus
its metrics and the constraint Jacobian in the metadata.

Entries are in the file's units: e.g. ``m/s per deg/s`` for a linear-velocity row and a
revolute input. Per actuated variable X, ``X.dv_dq [m/deg]`` holds the linear-velocity rows and
``X.dw_dq [deg/deg]`` the angular ones (each empty on the other's rows): one unit per column.
The metrics (singular values, condition number, manipulability) are of the
dimensionless Jacobian (:func:`~linkcli.core.jacobian.homogenized_jacobian`, characteristic
length in the metadata), so they are the same in every unit system.
"""

from __future__ import annotations

import numpy as np

from ..core.assembly import assemble
from ..core.jacobian import characteristic_length, effector_jacobian, homogenized_jacobian, jacobian_metrics
from ..core.loop_closure import STATUS_TEXT, Status, constraints
from ..core.mechanism import CompiledMechanism
from ..core.mobility import mobility_report
from ..errors import AnalysisInputError
from ..results import ResultTable
from .inputs import actuated_scale, actuated_values
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
    res = assemble(mech, a, mech.q_init)
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
    metrics = jacobian_metrics(homogenized_jacobian(mech, J, L)) if ok else None
    rep = mobility_report(mech, res.q)
    table.metadata.update({
        "status": STATUS_TEXT[Status(int(res.status))],
        "configuration": {n: float(v / (mech.angle_scale if r else mech.length_scale))
                          for n, v, r in zip(mech.q_names, res.q, mech.q_is_rotation, strict=True)},
        "singular_values": None if metrics is None else metrics.singular_values,
        "condition": None if metrics is None else metrics.condition,
        "manipulability": None if metrics is None else metrics.manipulability,
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
    events = [] if ok else [Event("no_assembly", "cannot assemble at the given values "
                                  f"(status {table.metadata['status']})", 0)]
    table.metadata["events"] = [e.message for e in events]
    return AnalysisOutcome.of(table, 1, 0 if ok else 1, events, what="configurations")
