"""How large a run linkcli computes at once, and the messages that refuse larger ones up front.

A sweep's rows and a simulation's saved samples are held in memory (every column float64,
plus the poses of every link and frame while the table is built: ~1-2 kB per row for the
shipped examples), and a simulation's steps take time in proportion. Rather than run until the
memory or the patience runs out, requests beyond these sizes are refused before anything is
computed, with the size and a way round it. Used by the file checks (exit 3, at the line) and
by the command-line options (exit 2). Standard library only (imported by the model layer).
"""

from __future__ import annotations

import math

#: sweep points (rows) per run: ~1-4 GB of table and poses for the shipped examples
MAX_SWEEP_POINTS = 2_000_000
#: simulation steps per run (~1-10 us each in the compiled integrator: minutes, not days)
MAX_SIM_STEPS = 100_000_000
#: saved simulation samples (rows) per run, like sweep points
MAX_SIM_SAMPLES = 2_000_000


def sweep_points(from_: float, to: float, step: float | None = None, num: int | None = None) -> float:
    """Number of points of one sweep (a float: it may be astronomically large or inf); both
    ends included when the step divides the span (as :class:`linkcli.analyses.inputs.Sweep`)."""
    if num is not None:
        return float(num)
    if step is None or step == 0:
        return 1.0
    ratio = abs(to - from_) / abs(step)
    return math.floor(ratio + 1e-9) + 1.0 if math.isfinite(ratio) else math.inf


def sweep_size_problem(n_points: float, what: str = "the sweep") -> str | None:
    """A refusal naming the size and a way round it, or None when ``n_points`` is fine."""
    if n_points <= MAX_SWEEP_POINTS:
        return None
    return (f"{what} has {n_points:.3g} points, more than the {MAX_SWEEP_POINTS:,} linkcli computes in one run; "
            "use a coarser step (or fewer points with nNUM / num:), or split the range into several runs")


def simulation_size_problem(t_end: float, dt: float, every: int = 1) -> str | None:
    """A refusal for a simulation with too many steps or saved samples, or None."""
    steps = t_end / dt if dt > 0 else math.inf
    if not math.isfinite(steps) or steps > MAX_SIM_STEPS:
        return (f"t_end / dt = {t_end:g} s / {dt:g} s is {steps:.3g} time steps, more than the {MAX_SIM_STEPS:.0e} "
                "linkcli runs at once; use a larger dt or a shorter t_end (or several runs)")
    samples = steps / max(int(every), 1) + 1
    if samples > MAX_SIM_SAMPLES:
        need = math.ceil(steps / (MAX_SIM_SAMPLES - 1))
        return (f"the simulation would save {samples:.3g} samples (t_end / dt / every), more than the "
                f"{MAX_SIM_SAMPLES:,} linkcli keeps in one run; save fewer with every >= {need} (--every {need}) "
                "or shorten t_end")
    return None


#: largest joint value linkcli accepts, in rad for angles and in mechanism sizes for lengths:
#: float64 spaces numbers 2.2e-16 of their magnitude apart, so beyond ~4.5e5 the spacing alone
#: exceeds the solver's tolerance (1e-10 rad, or 1e-10 of the mechanism size) and the answer
#: would be noise presented as a result; 1e5 (about 16,000 turns) keeps a 4x margin
MAX_JOINT_MAGNITUDE = 1e5


def joint_value_problem(value_si: float, is_rotation: bool, size_m: float = 1.0) -> str | None:
    """Why a joint value (rad, or m with ``size_m`` the mechanism size in m) cannot be solved
    meaningfully, or None."""
    limit = MAX_JOINT_MAGNITUDE * (1.0 if is_rotation else size_m)
    if not math.isfinite(value_si):
        return "is not a finite number"
    if abs(value_si) <= limit:
        return None
    what = f"{limit:.3g} rad (about 16,000 turns)" if is_rotation else f"{limit:.3g} m (1e5 times the mechanism's size)"
    return (f"is beyond {what}, where float64 cannot resolve a joint value to the solver's tolerance; "
            + ("give the angle within a few turns (e.g. modulo 360 deg)" if is_rotation
               else "check the value and its unit"))
