"""The forces figure (``linkcli forces --plot``): from a forces result table, by column names.

* input torque/force (``J.torque [N m]`` / ``J.force [N]``) against the first input ``J.q``;
* polar joint-force diagrams: the tip of each joint's reaction force vector (``J.Fx``, ``J.Fy``,
  world frame, on the joint's child) over the sweep, from the origin: the classical pin-force
  diagrams, one colour per joint;
* the shaking force on the ground: locus of ``shaking.Fx``, ``shaking.Fy``;
* the shaking moment ``shaking.Mz`` against the input.

Spatial mechanisms show the x-y components. Returns a matplotlib Figure (not managed by
pyplot); written atomically when ``path`` is given.
"""

from __future__ import annotations

import os

import numpy as np

from ..core.mechanism import CompiledMechanism
from ..errors import AnalysisInputError
from . import require_matplotlib
from .draw import new_figure
from .figures import save_figure


def forces_figure(mech: CompiledMechanism, table, path: str | os.PathLike | None = None, *, dpi: float = 100):
    require_matplotlib()
    if table.metadata.get("analysis") != "forces":
        raise AnalysisInputError("--plot draws forces along a sweep; it is not available with --equilibrium")
    i0 = int(mech.q_actuated[0])
    name = mech.q_names[i0]
    x_col = table.find(name, "q")  # the column by entity and quantity, its unit as a field
    x = np.asarray(x_col.values, float)
    x_unit = x_col.unit
    fig = new_figure((11.0, 8.0))
    axes = fig.subplots(2, 2, squeeze=False)
    ax = axes[0, 0]
    for i in mech.q_actuated:
        h = f"{mech.q_names[i]}.torque [N m]" if mech.q_is_rotation[i] else f"{mech.q_names[i]}.force [N]"
        ax.plot(x, table[h], lw=1.2, label=h)
    ax.set_xlabel(f"{name} [{x_unit}]")
    ax.set_ylabel("input torque [N m] / force [N]")
    ax.set_title("driving torque", fontsize=10)
    ax.legend(fontsize=8)
    ax = axes[0, 1]
    for j in mech.joint_names:
        fx, fy = np.asarray(table[f"{j}.Fx [N]"], float), np.asarray(table[f"{j}.Fy [N]"], float)
        line = ax.plot(fx, fy, lw=1.0, label=j)[0]
        ok = np.isfinite(fx) & np.isfinite(fy)
        if ok.any():  # the first point: where the sweep starts
            k = int(np.flatnonzero(ok)[0])
            ax.plot([0.0, fx[k]], [0.0, fy[k]], color=line.get_color(), lw=0.6, alpha=0.6)
    ax.plot([0], [0], "k+", ms=10)
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_xlabel("Fx [N]")
    ax.set_ylabel("Fy [N]")
    ax.set_title("joint forces on the child link (polar diagrams)", fontsize=10)
    ax.legend(fontsize=8, ncol=2)
    ax = axes[1, 0]
    sx, sy = np.asarray(table["shaking.Fx [N]"], float), np.asarray(table["shaking.Fy [N]"], float)
    ax.plot(sx, sy, lw=1.2, color="C3")
    ax.plot([0], [0], "k+", ms=10)
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_xlabel("Fx [N]")
    ax.set_ylabel("Fy [N]")
    ax.set_title("shaking force on the ground (locus)", fontsize=10)
    ax = axes[1, 1]
    ax.plot(x, table["shaking.Mz [N m]"], lw=1.2, color="C4")
    ax.set_xlabel(f"{name} [{x_unit}]")
    ax.set_ylabel("Mz [N m]")
    ax.set_title("shaking moment about the world origin", fontsize=10)
    for a in axes.ravel():
        a.grid(True, linewidth=0.4, alpha=0.5)
    title = table.metadata.get("mechanism") or mech.name
    speed = table.metadata.get("input_speed") or {}
    static = (table.metadata.get("solver") or {}).get("static")
    what = "static" if static else ", ".join(f"{k} at {v['value']:.4g} {v['unit']}" for k, v in speed.items())
    fig.suptitle(f"{title}: forces ({what})", fontsize=10)
    if path is not None:
        save_figure(fig, path, dpi=dpi)
    return fig
