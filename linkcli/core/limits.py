"""Failed sweep points told truthfully, and the limits of a sweep located by bisection.

Two questions the continuation of :mod:`linkcli.core.sweep` cannot answer by itself:

* **Does a configuration exist at a failed point?** Newton failing is not a proof. A planar loop
  whose passive joints are all revolutes is, once the actuated variables are fixed, a closed
  polygon: its vertices are the passive joint centres, its sides the fixed distances between
  consecutive centres (rigid links, actuated and fixed joints in between). A closed polygon
  with free angles exists if and only if its longest side is at most the sum of the others
  (Grashof's and the four-bar input range's argument, for any number of sides). Each loop of a
  multi-loop mechanism must close on its own, so a loop whose longest side is longer than the
  sum of the others *proves* that no configuration exists (the loop's reach certificate,
  :func:`reach_excess`). A failed point without such a certificate is only "not converged".
* **Where exactly does the motion end?** Between a solved point and a failed neighbour (an end
  of the range of motion, e.g. a toggle/dead centre of the input) and between two solved points
  whose passive Jacobian changes the sign of its determinant (a dead centre or branch point
  crossed), :func:`locate_limits` bisects the input segment, following the branch from the
  solved side, until the bracket is narrower than ``width`` (SI: rad or m).

Status vocabulary of a sweep row (:data:`ROW_STATUS`, written in the ``status`` column):
``ok``, ``no_configuration`` (proven: a loop cannot reach), ``not_converged`` (the solver found
no configuration; none is proven not to exist), ``branch_jump`` (a configuration was found, but
on another assembly branch than the one followed), ``singular``, ``outside_limits`` (solved,
but a joint variable is beyond its ``limits``: see :func:`limit_violations`), ``other_branch``
(solved after a reassembly, but not in the estimate's assembly mode: SweepResult.other_branch).

Everything is SI (m, rad); no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .forward import link_poses
from .loop_closure import (
    SINGULAR_CONDITION,
    Status,
    _residual_jacobian,
    condition_number,
    mechanism_size,
    passive_indices,
    solve_configuration,
)
from .mechanism import FIXED, REVOLUTE, CompiledMechanism

OK, NO_CONFIGURATION, NOT_CONVERGED, BRANCH_JUMP, SINGULAR, OUTSIDE_LIMITS, OTHER_BRANCH = (
    "ok", "no_configuration", "not_converged", "branch_jump", "singular", "outside_limits", "other_branch")
#: every value of a sweep's ``status`` column, with its meaning (README "Statuses" repeats it)
ROW_STATUS = {
    OK: "solved: the configuration closes every loop to the tolerance",
    NO_CONFIGURATION: "no configuration exists at this input (proven: a loop's longest side is longer than "
                      "the sum of its other sides, so the links cannot reach)",
    NOT_CONVERGED: "the solver found no configuration here, but its absence is not proven (e.g. a loop with "
                   "prismatic joints, or spatial loops)",
    BRANCH_JUMP: "a configuration was found, but on another assembly branch than the one followed",
    SINGULAR: "converged at a singular configuration",
    OUTSIDE_LIMITS: "solved, but a joint variable is outside its `limits` (an input given beyond them, or a "
                    "passive joint the solution puts there); the row keeps its values and counts as failed",
    OTHER_BRANCH: "solved, but not in the assembly mode of the file's estimate: after the branch was lost (failed "
                  "points, or a restart) the configuration was found again by assembly, and following the "
                  "estimate's branch to this input gives another configuration (or does not reach it); the row "
                  "keeps its values and counts as failed",
}

#: rounding allowance of the reach certificate, relative to the mechanism size: the sides are
#: distances computed by forward kinematics (a few float64 operations per link, errors ~1e-15
#: of the size), so an excess above 1e-12 of the size cannot be rounding
_REACH_MARGIN = 1e-12


@dataclass(frozen=True)
class _LoopPolygon:
    """The polygon of one loop: ``vertices`` are passive revolute joints in loop order, the cut
    joint ``cut`` first (its parent-side centre) and last (its child-side centre)."""

    loop: int
    cut: int
    vertices: tuple[int, ...]  # tree joints between the two ends of the cut joint, in loop order


def _tree_path(mech: CompiledMechanism, a: int, b: int) -> list[int] | None:
    """Tree joints on the path from link ``a`` to link ``b`` in order (None if not connected)."""
    def up(link):
        out = []
        while link >= 0:
            out.append(link)
            link = int(mech.link_tree_parent[link])
        return out

    ua, ub = up(a), up(b)
    common = next((link for link in ua if link in ub), None)
    if common is None:
        return None
    ja = [int(mech.link_tree_joint[link]) for link in ua[:ua.index(common)]]
    jb = [int(mech.link_tree_joint[link]) for link in ub[:ub.index(common)]]
    return ja + jb[::-1]


def _polygons(mech: CompiledMechanism) -> list[_LoopPolygon | None]:
    """Per loop, its polygon when a reach certificate applies (planar, every passive joint of the
    loop revolute, the cut joint passive and revolute), else None."""
    out: list[_LoopPolygon | None] = []
    for li, k in enumerate(mech.loop_joint):
        k = int(k)
        if not mech.planar or mech.joint_type[k] != REVOLUTE or mech.joint_actuated[k]:
            out.append(None)
            continue
        path = _tree_path(mech, int(mech.joint_parent[k]), int(mech.joint_child[k]))
        vertices, ok = [], path is not None
        for j in path or []:
            if mech.joint_actuated[j] or mech.joint_type[j] == FIXED:
                continue  # rigid once the inputs are fixed
            if mech.joint_type[j] != REVOLUTE:
                ok = False
                break
            vertices.append(j)
        out.append(_LoopPolygon(li, k, tuple(vertices)) if ok else None)
    return out


def reach_excess(mech: CompiledMechanism, Q_act: np.ndarray, q_ref: np.ndarray | None = None) -> np.ndarray:
    """(n, n_loops) m: for each point's actuated values Q_act (n, n_act) SI and each loop, its
    polygon's longest side minus the sum of the other sides (> 0: the loop cannot close); NaN
    for loops without a certificate. ``q_ref`` (n_q,) supplies the other variables (they do not
    change the sides)."""
    Q_act = np.atleast_2d(np.asarray(Q_act, dtype=float))
    n = len(Q_act)
    out = np.full((n, mech.n_loops), np.nan)
    polys = _polygons(mech)
    if not any(p is not None for p in polys):
        return out
    q = np.tile(mech.q_init if q_ref is None else q_ref, (n, 1))
    q[:, mech.q_actuated] = Q_act
    T = link_poses(mech, q)  # (n, n_links, 4, 4)

    def centre(link_T, T_joint):
        return link_T[:, :3, :3] @ T_joint[:3, 3] + link_T[:, :3, 3]

    for p in polys:
        if p is None:
            continue
        k = p.cut
        pts = [centre(T[:, mech.joint_parent[k]], mech.T_parent_joint[k])]
        pts += [centre(T[:, mech.joint_parent[j]], mech.T_parent_joint[j]) for j in p.vertices]
        pts.append(centre(T[:, mech.joint_child[k]], mech.T_child_joint[k]))
        P = np.stack(pts, axis=1)  # (n, m, 3)
        sides = np.linalg.norm(np.diff(P, axis=1), axis=-1)
        out[:, p.loop] = 2 * sides.max(axis=1) - sides.sum(axis=1)
    return out


def proven_unreachable(mech: CompiledMechanism, Q_act: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(proven (n,) bool, loop (n,) int, excess (n,) m): a loop provably cannot close at each
    point (see the module docstring), which loop (the one with the largest excess) and by how
    much its longest side exceeds the others."""
    ex = reach_excess(mech, Q_act)
    if ex.shape[1] == 0:
        n = len(ex)
        return np.zeros(n, bool), np.full(n, -1), np.full(n, np.nan)
    filled = np.where(np.isnan(ex), -np.inf, ex)
    loop = filled.argmax(axis=1)
    worst = filled[np.arange(len(ex)), loop]
    proven = worst > _REACH_MARGIN * mechanism_size(mech)
    return proven, np.where(proven, loop, -1), np.where(proven, worst, np.nan)


def row_status(mech: CompiledMechanism, Q_act: np.ndarray, status: np.ndarray,
               other_branch: np.ndarray | None = None) -> np.ndarray:
    """Status text (n,) of each sweep point from the solver's :class:`Status` codes: failed
    points become ``no_configuration`` when a loop provably cannot close there, else
    ``not_converged``; ``branch_jump`` rows hold a configuration that closes the loops at their
    own input (the sweep reports the point's own corrector result, never a bisection midpoint's:
    tests/reference/test_sweep_limits.py); converged rows flagged in ``other_branch`` (n,) bool
    (:class:`linkcli.core.sweep.SweepResult`'s) become ``other_branch``."""
    status = np.asarray(status)
    # wide enough for every status: a caller may mark rows OUTSIDE_LIMITS without truncation
    # (a string array from the start: filling an object array and converting it took 4x longer)
    out = np.full(len(status), NOT_CONVERGED, dtype=f"<U{max(map(len, ROW_STATUS))}")
    out[status == Status.CONVERGED] = OK
    out[status == Status.BRANCH_JUMP] = BRANCH_JUMP
    out[status == Status.SINGULAR] = SINGULAR
    if other_branch is not None:
        out[(status == Status.CONVERGED) & np.asarray(other_branch, dtype=bool)] = OTHER_BRANCH
    failed = (status != Status.CONVERGED) & (status != Status.BRANCH_JUMP)
    if failed.any():
        proven, _, _ = proven_unreachable(mech, Q_act[failed])
        out[np.flatnonzero(failed)[proven]] = NO_CONFIGURATION
    return out


def limit_violations(mech: CompiledMechanism, Q_act: np.ndarray, q: np.ndarray, solved: np.ndarray,
                     tol: float = 1e-10) -> np.ndarray:
    """(n, n_q) bool: joint variable ``i`` of row ``k`` is outside ``[q_lower, q_upper]``.

    Q_act (n, n_act) SI, the given inputs (judged on every row); q (n, n_q) SI, the solution
    (passive variables judged only where ``solved``). A value within ``10 * tol`` (rad, or that
    fraction of the mechanism size for lengths) of a limit is inside: grid inputs carry rounding
    (~1e-15) and solved values the solver's tolerance, so a joint resting on its stop is not
    called outside it."""
    full = np.array(q, dtype=float)
    full[:, mech.q_actuated] = Q_act
    slack = 10 * tol * np.where(mech.q_is_rotation, 1.0, mechanism_size(mech))
    outside = (full < mech.q_lower - slack) | (full > mech.q_upper + slack)
    judged = np.broadcast_to(np.asarray(solved, dtype=bool)[:, None], outside.shape).copy()
    judged[:, mech.q_actuated] = True
    return outside & judged


@dataclass(frozen=True)
class Limit:
    """A limit of a sweep between rows ``index`` and ``index + 1`` of the solve order.

    kind: ``end_of_range`` (the branch ends: the configuration stops existing, proven by a
    loop's reach), ``solver_limit`` (the solver stops following the branch; not proven to be the
    end of the motion) or ``singular_crossing`` (a dead centre / branch point crossed: the passive
    Jacobian's determinant changes sign). ``at`` (n_act,) SI: the located input, on the solved
    side of the bracket; ``beyond`` (n_act,) SI: the bracket's other end (the limit lies
    between ``at`` and ``beyond``); ``q`` (n_q,) the configuration at ``at``; ``loop`` the loop that cannot
    reach (end_of_range), else -1.
    """

    index: int
    kind: str
    at: np.ndarray
    beyond: np.ndarray
    q: np.ndarray
    loop: int = -1


#: above loop_closure.SINGULAR_CONDITION a determinant's sign is not trusted (as in sweep.py)

#: ... and inside a bisection, where the sign itself is the question: a determinant is computed
#: to a relative error of about condition * 1e-16, so its sign is sound below 1e13
_SIGN_CONDITION = 1e13

#: bisection steps at most (a 2^-80 fraction of any segment is below float64 resolution)
_MAX_BISECTIONS = 80


def locate_limits(mech: CompiledMechanism, Q_act: np.ndarray, q: np.ndarray, status: np.ndarray,
                  crossings=(), *, width: float | np.ndarray = 1e-11, tol: float = 1e-10) -> list[Limit]:
    """Every limit along a solved path, located by bisection (all brackets at once, batched).

    Q_act (n, n_act) SI in solve order (consecutive points are neighbours); q (n, n_q) and
    status (n,) the sweep's solution. Brackets: consecutive points of which exactly one
    converged (an end of motion), and the given ``crossings``: indices k of consecutive
    converged points k, k + 1 whose passive Jacobian determinant changes sign (the sweep's
    singular_crossing events; square passive partitions only). ``width`` scalar or (n_act,).
    Each bisection step solves at the
    midpoint starting from the solved side's configuration (so it follows that branch) with
    tolerance ``min(tol, 1e-13)`` (the position of a fold is known only as well as existence is
    decided, so the residual is driven near rounding), and stops when the bracket is narrower
    than ``width`` (rad or m).
    """
    Q_act = np.asarray(Q_act, dtype=float)
    status = np.asarray(status)
    ok = status == Status.CONVERGED
    n = len(Q_act)
    if n < 2 or mech.n_loops == 0:
        return []
    i = np.arange(n - 1)
    ends = i[ok[:-1] != ok[1:]]
    passive = passive_indices(mech)
    square = mech.n_constraints == len(passive) and len(passive) > 0
    crossings = np.asarray(crossings, dtype=int)
    if square and len(crossings):
        s0, s1 = _det_sign(mech, q[crossings], passive), _det_sign(mech, q[crossings + 1], passive)
        crossings = crossings[ok[crossings] & ok[crossings + 1] & (s0 * s1 < 0)]
    else:
        crossings = np.zeros(0, dtype=int)
    brackets = [(int(k), "end") for k in ends] + [(int(k), "crossing") for k in crossings]
    if not brackets:
        return []
    idx = np.array([b[0] for b in brackets])
    is_end = np.array([b[1] == "end" for b in brackets])
    good_first = np.where(is_end, ok[idx], True)  # which side is solved
    a_good = np.where(good_first[:, None], Q_act[idx], Q_act[idx + 1]).copy()
    a_bad = np.where(good_first[:, None], Q_act[idx + 1], Q_act[idx]).copy()
    q_good = np.where(good_first[:, None], q[idx], q[idx + 1]).copy()
    q_bad = np.where(good_first[:, None], q[idx + 1], q[idx]).copy()  # solved too for crossings
    s_good = _det_sign(mech, q_good, passive) if square else np.zeros(len(idx))
    tol_b = min(tol, 1e-13)
    for _ in range(_MAX_BISECTIONS):
        active = np.any(np.abs(a_bad - a_good) > width, axis=1)
        if not active.any():
            break
        a_mid = 0.5 * (a_good + a_bad)
        # start from the solved side (an end: q changes like a square root near a fold, no
        # predictor is better); a crossing starts from the mean of its two solved ends, which
        # keeps to the followed branch where another branch crosses it
        guess = np.where(is_end[:, None], q_good, 0.5 * (q_good + q_bad))
        res = solve_configuration(mech, a_mid[active], guess[active], tol=tol_b)
        conv = res.status == Status.CONVERGED
        # a midpoint that converges far from the solved side's configuration landed on another
        # branch: treat it as not on this branch (the bracket shrinks towards the solved side)
        dq = np.abs(res.q - q_good[active]).max(axis=1)
        advance = conv & (dq < _branch_step(a_mid[active] - a_good[active]))
        act = np.flatnonzero(active)
        cross_act = ~is_end[act]
        if square and cross_act.any():
            s_mid = _det_sign(mech, res.q, passive, _SIGN_CONDITION)
            # a crossing bracket keeps the sign of its first point on its "good" side
            advance = advance & (~cross_act | (s_mid == s_good[act]))
        move_good = act[advance]
        a_good[move_good] = a_mid[move_good]
        q_good[move_good] = res.q[advance]
        move_bad = act[~advance]
        a_bad[move_bad] = a_mid[move_bad]
        q_bad[move_bad] = res.q[~advance]
    out = []
    # an end is proven when the failed grid point itself is (the loop's excess is continuous in
    # the input, so the polygon stops closing inside the bracket)
    a_failed = np.where(good_first[:, None], Q_act[idx + 1], Q_act[idx])
    proven = proven_unreachable(mech, a_failed) if is_end.any() else (None, None, None)
    for b, (k, what) in enumerate(brackets):
        if what == "crossing":
            kind, loop = "singular_crossing", -1
        elif proven[0][b]:
            kind, loop = "end_of_range", int(proven[1][b])
        else:
            kind, loop = "solver_limit", -1
        out.append(Limit(k, kind, a_good[b].copy(), a_bad[b].copy(), q_good[b].copy(), loop))
    return out


def _branch_step(da: np.ndarray) -> np.ndarray:
    """Largest plausible change of q (rad or m) for an input change da on one branch: generous
    (near a fold q changes like the square root of the input change), only meant to reject a
    midpoint that converged onto another assembly mode far away."""
    d = np.abs(da).max(axis=1)
    return 10.0 * np.sqrt(d) + 10.0 * d + 1e-9


def _det_sign(mech: CompiledMechanism, q: np.ndarray, passive: np.ndarray,
              max_condition: float = SINGULAR_CONDITION) -> np.ndarray:
    """Sign (n,) of det J_p at configurations q (n, n_q); 0 where J_p's condition number
    exceeds ``max_condition``."""
    J = _residual_jacobian(mech, q)[1]
    Jp = J[..., passive]
    # a point sitting on a singular configuration has no reliable sign (0: no crossing counted;
    # the sweep reports it as a singular point at its exact input)
    return np.where(condition_number(Jp) > max_condition, 0.0, np.sign(np.linalg.det(Jp)))
