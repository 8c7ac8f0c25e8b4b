"""The result of a simulation: saved samples as numpy arrays, SI units, world frame."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, eq=False)
class SimulationResult:
    """Samples at ``t`` (every ``every``-th step and the last one); ``n_s`` rows each.

    t (n_s,) s. status: ``"ok"``, ``"diverged"`` (a step's Newton iteration did not converge)
    or ``"singular"`` (singular step matrix, e.g. a dead-centre or lost assembly); when not ok,
    the arrays hold every sample computed before the failing step and ``message`` says where
    and why.

    q, qd (n_s, n_q): joint variables (rad, m; rotations continuous, never wrapped) and rates,
        reconstructed from the body poses and velocities.
    link_pose (n_s, n_links, 4, 4): ``T_world_link``; link_velocity (n_s, n_links, 6): velocity of
        each link-frame origin (m/s) and angular velocity (rad/s), ``(v, w)``, world frame;
        effector_pose (n_s, 4, 4): ``T_world_tool``.
    axial_length (m), axial_rate (m/s), axial_force (N, positive = tension) (n_s, n_axial).
    torsional_angle (rad, continuous), torsional_rate (rad/s), torsional_torque (N m on the
        child about the joint axis) (n_s, n_tors).
    reaction_force (N), reaction_moment (N m) (n_s, n_joints, 3): wrench that the joint exerts ON
        ITS CHILD link from the joint's own constraint, world frame, moment about the child's
        joint-frame origin; a driver's torque/force on that joint (motion or torque driver alike)
        is not included: it is ``driver_force`` (see :mod:`.reactions`). The parent receives the
        opposite. Statically indeterminate joints (see
        ``warnings``) get the minimum-norm split.
    driver_force (n_s, n_drivers): N m or N along the driven variable; motion drivers: the
        constraint force needed (inverse dynamics); torque drivers: the applied profile value.
    kinetic, potential, total (n_s,) J: potential = gravity + axial and torsional springs.
        Constant loads are not potentials: their work is ``work_loads``.
    work_dampers, work_drivers, work_loads (n_s,) J: cumulative work since t = 0 (dampers <= 0),
        so that ``total - total[0] = work_drivers + work_dampers + work_loads`` up to the
        integrator's O(dt^2) energy error.
    constraint_residual (n_s,): largest |constraint| over all joint and driver rows (m; angular
    rows times the mechanism size, the gap they open at the mechanism's extent).
    warnings: regularised masses, dropped redundant constraints, projections of the initial
        rates, ...
    kinetic_regularising (n_s,) J: the part of ``kinetic`` carried by the regularising masses
        and inertias (``warnings``; 0 without), which the file's masses do not have: a freedom
        without mass of its own moving much faster than the mechanism (a spring ringing on it)
        shows here (:class:`~linkcli.core.dynamics.accuracy.EnergyBalanceCheck` judges it).
    massless_springs: ``"spring 'tw' (links bob)"`` for each spring acting on a freedom without
        inertia of its own (:func:`~linkcli.core.dynamics.modes.spring_modes` at t = 0).
    dt (s): the step used (``t_end`` divided into whole steps); newton_iterations: largest
    number of Newton iterations of a step; refined_steps: steps that failed or were implausible
    at dt and were recomputed as substeps (the saved grid is unchanged).
    """

    t: np.ndarray
    status: str
    message: str
    q: np.ndarray
    qd: np.ndarray
    link_pose: np.ndarray
    link_velocity: np.ndarray
    effector_pose: np.ndarray
    axial_length: np.ndarray
    axial_rate: np.ndarray
    axial_force: np.ndarray
    torsional_angle: np.ndarray
    torsional_rate: np.ndarray
    torsional_torque: np.ndarray
    reaction_force: np.ndarray
    reaction_moment: np.ndarray
    driver_force: np.ndarray
    kinetic: np.ndarray
    potential: np.ndarray
    total: np.ndarray
    work_dampers: np.ndarray
    work_drivers: np.ndarray
    work_loads: np.ndarray
    constraint_residual: np.ndarray
    warnings: tuple[str, ...]
    dt: float
    newton_iterations: int
    refined_steps: int = 0
    kinetic_regularising: np.ndarray | None = None
    massless_springs: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def energy_balance_error(self) -> np.ndarray:
        """(n_s,) J: ``total - total[0] - (work_drivers + work_dampers + work_loads)``."""
        return self.total - self.total[0] - (self.work_drivers + self.work_dampers + self.work_loads)
