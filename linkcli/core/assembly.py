"""Assembly from an estimate: the configuration closest to the user's starting estimate.

Newton from the estimate usually lands on the assembly mode the estimate describes. When it
stalls (a poor estimate far from any solution), seeded restarts spread around the estimate are
solved as one batch and the converged solution nearest to the estimate (angles compared
modulo 2 pi) is kept. Either way the passive angles are then shifted by whole turns to lie
closest to the estimate (the configuration is unchanged), so angles start where the user
expects them; the actuated values are the inputs given.
"""

from __future__ import annotations

import numpy as np

from .loop_closure import ConfigurationResult, Status, mechanism_size, passive_indices, solve_configuration
from .mechanism import CompiledMechanism
from .transforms import wrap_to_pi


def _distance(mech: CompiledMechanism, q: np.ndarray, q_ref: np.ndarray) -> np.ndarray:
    """Distance (...,) between configurations: angles modulo 2 pi (rad), lengths relative to
    the mechanism size."""
    d = q - q_ref
    d = np.where(mech.q_is_rotation, wrap_to_pi(d), d / mechanism_size(mech))
    return np.linalg.norm(d, axis=-1)


def nearest_turn(mech: CompiledMechanism, q: np.ndarray, q_ref: np.ndarray, *,
                 passive_only: bool = False) -> np.ndarray:
    """Shift angles of ``q`` by whole turns towards ``q_ref`` (the configuration is unchanged);
    ``passive_only``: the actuated variables keep their values (they are the given inputs)."""
    turns = np.round((q - q_ref) / (2 * np.pi))
    rot = mech.q_is_rotation
    if passive_only:
        rot = rot.copy()
        rot[mech.q_actuated] = False
    return np.where(rot, q - 2 * np.pi * turns, q)


def assemble(mech: CompiledMechanism, q_actuated: np.ndarray, q_estimate: np.ndarray, *, tol: float = 1e-10,
             restarts: int = 64, seed: int = 0) -> ConfigurationResult:
    """Solve the configuration at one point (q_actuated (n_act,), q_estimate (n_q,), SI),
    falling back to seeded restarts when Newton from the estimate does not converge. Passive
    angles of a converged result are the representatives (+- whole turns) nearest the estimate
    (Newton from a poor estimate can end whole turns away); the inputs keep their values."""
    first = solve_configuration(mech, q_actuated, q_estimate, tol=tol)
    if first.status == Status.CONVERGED:
        q = nearest_turn(mech, first.q, q_estimate, passive_only=True)
        return ConfigurationResult(q, first.status, first.residual, first.iterations, first.condition,
                                   first.worst_loop)
    if restarts == 0:
        return first
    passive = passive_indices(mech)
    rng = np.random.default_rng(seed)
    starts = np.tile(np.asarray(q_estimate, float), (restarts, 1))
    spread = np.where(mech.q_is_rotation[passive], np.pi, mechanism_size(mech))
    starts[:, passive] += rng.uniform(-1.0, 1.0, (restarts, len(passive))) * spread
    many = solve_configuration(mech, np.broadcast_to(q_actuated, (restarts, mech.n_actuated)), starts, tol=tol)
    ok = np.flatnonzero(many.status == Status.CONVERGED)
    if len(ok) == 0:
        return first
    best = ok[np.argmin(_distance(mech, many.q[ok], q_estimate))]
    q = nearest_turn(mech, many.q[best], q_estimate, passive_only=True)
    return ConfigurationResult(q, many.status[best], many.residual[best], many.iterations[best] + first.iterations,
                               many.condition[best], many.worst_loop[best])
