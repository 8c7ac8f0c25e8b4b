"""Order of the unknowns of the step's saddle-point matrices (body velocity components and
constraint rows) that makes them banded: the bodies form a tree plus loop closures, so a
reverse Cuthill-McKee ordering (scipy) gives a bandwidth that, for a chain of loops, does not
grow with the number of bodies, and the banded LU (:func:`.linalg.band_lu_factor`) of the step
costs O(N) instead of O(N^3). Set up once per model, in Python.

With ``eliminated`` (a mask over the body velocity components), the pattern is that of the
system left after those components are eliminated first by their own mass blocks (block
Gaussian elimination, exact: see :func:`eliminable_components`): they are no unknowns, and the
rows of a body with eliminated components are coupled with each other (the fill
``G A^-1 G^T`` of the elimination)."""

from __future__ import annotations

import numpy as np
import scipy.sparse
from scipy.sparse.csgraph import reverse_cuthill_mckee

from .layout import AXIAL, E_ELEMENT, E_KIND, J_CHILD_BODY, J_PARENT_BODY, R_JOINT


def eliminable_components(m) -> np.ndarray:
    """(n,) int mask of the body velocity components that the step solves eliminate first, by
    the exact inverse of their own mass block: planar x, y (mass) and angle (inertia) each, spatial
    translation (mass) and the rotation block (inertia) as a whole, when that block is well
    conditioned (its smallest entry or eigenvalue at least 1e-3 of the body's mass times the
    model length squared; a smaller one, a point mass or a massless direction stays in the
    pivoted band factorisation, which handles zero blocks), and never on a body with a damper
    (the damper couples it with another body). For small models this is the constraint Schur
    complement (W3: the 8 x 8 constraint rows instead of 17 unknowns); for chains the
    eliminated system stays banded."""
    nb, nd = m.body_mass.shape[0], (3 if m.planar else 6)
    out = np.zeros(nd * nb, dtype=np.int64)
    damped: set[int] = set()
    for e in range(m.damper_index.shape[0]):
        i = m.damper_index[e, E_ELEMENT]
        if m.damper_index[e, E_KIND] == AXIAL:
            pair = (m.axial_bodies[i, 0], m.axial_bodies[i, 1])
        else:
            joint = m.torsional_index[i, 0]
            pair = (m.joint_index[joint, J_PARENT_BODY], m.joint_index[joint, J_CHILD_BODY])
        damped.update(int(b) for b in pair)
    L2 = m.mechanism_size ** 2
    for b in range(nb):
        mass = m.body_mass[b]
        if b in damped or not mass > 0:
            continue
        floor = 1e-3 * mass * L2
        if m.planar:
            out[nd * b: nd * b + 2] = 1
            out[nd * b + 2] = int(m.body_inertia[b, 2, 2] >= floor)
        else:
            out[nd * b: nd * b + 3] = 1
            out[nd * b + 3: nd * b + 6] = int(np.linalg.eigvalsh(m.body_inertia[b]).min() >= floor)
    return out


def _kkt_pattern(m, eliminated=None) -> tuple[np.ndarray, np.ndarray]:
    """Structural nonzeros ``(i, j)`` (both triangles) of the step matrices over all unknowns:
    body velocity components ``0 .. n-1`` then every constraint row of the model ``n + row``.
    A body's components are coupled with each other (mass block), with the rows of its joints
    and, through a damper, with the components of the other body of the damper. Components
    marked in ``eliminated`` are left out and the rows of their body coupled instead."""
    nb, nd = m.body_mass.shape[0], (3 if m.planar else 6)
    n = nd * nb
    kept = np.ones(n, dtype=bool) if eliminated is None else np.asarray(eliminated) == 0
    dofs = lambda b: [d for d in range(nd * b, nd * b + nd) if kept[d]] if b >= 0 else []  # noqa: E731
    ii: list[int] = []
    jj: list[int] = []

    def clique(idx):
        for a in idx:
            for b in idx:
                ii.append(a)
                jj.append(b)

    for b in range(nb):
        clique(list(dofs(b)))
    if eliminated is not None:
        touching: list[list[int]] = [[] for _ in range(nb)]
        for i_row in range(m.row_index.shape[0]):
            j = m.row_index[i_row, R_JOINT]
            for body in (m.joint_index[j, J_PARENT_BODY], m.joint_index[j, J_CHILD_BODY]):
                if body >= 0 and not kept[nd * body: nd * body + nd].all():
                    touching[body].append(n + i_row)
        for rows in touching:
            clique(rows)
    for i_row in range(m.row_index.shape[0]):
        j = m.row_index[i_row, R_JOINT]
        for body in (m.joint_index[j, J_PARENT_BODY], m.joint_index[j, J_CHILD_BODY]):
            for d in dofs(body):
                ii += [n + i_row, d]
                jj += [d, n + i_row]
        ii.append(n + i_row)  # the (zero) diagonal: every unknown is a node of the graph
        jj.append(n + i_row)
    for e in range(m.damper_index.shape[0]):
        i = m.damper_index[e, E_ELEMENT]
        pair = ((m.axial_bodies[i, 0], m.axial_bodies[i, 1]) if m.damper_index[e, E_KIND] == AXIAL
                else (m.joint_index[m.torsional_index[i, 0], J_PARENT_BODY],
                      m.joint_index[m.torsional_index[i, 0], J_CHILD_BODY]))
        clique([d for body in pair for d in dofs(body)])
    return np.array(ii, dtype=np.int64), np.array(jj, dtype=np.int64)


def _kkt_order(m, eliminated=None) -> tuple[np.ndarray, int]:
    """``(order, bandwidth)``: the position of every unknown of :func:`_kkt_pattern` in a
    reverse Cuthill-McKee ordering (scipy) and the bandwidth of the step matrices in it. For a
    chain of loops the bandwidth does not grow with the number of bodies, so the banded LU of
    the step costs O(N). Any subset of the rows, kept in this relative order, has a bandwidth no
    larger (removing unknowns only brings the others closer). ``eliminated``: see
    :func:`_kkt_pattern` (eliminated components get positions too, never used)."""
    N = m.coordinate_scale.shape[0] + m.row_index.shape[0]
    ii, jj = _kkt_pattern(m, eliminated)
    if N == 0:
        return np.zeros(0, dtype=np.int64), 0
    # the graph in CSR form built directly (sorted, duplicates merged: what scipy's COO -> CSR
    # conversion gives, at half its cost on small models)
    nodes = np.unique(ii * N + jj)
    indptr = np.zeros(N + 1, dtype=np.int32)
    np.cumsum(np.bincount(nodes // N, minlength=N), out=indptr[1:])
    A = scipy.sparse.csr_matrix((np.ones(len(nodes)), (nodes % N).astype(np.int32), indptr), shape=(N, N))
    perm = reverse_cuthill_mckee(A, symmetric_mode=True)
    order = np.empty(N, dtype=np.int64)
    order[perm] = np.arange(N)
    bw = int(np.abs(order[ii] - order[jj]).max()) if len(ii) else 0
    return order, bw


# --- per structure, once per process ------------------------------------------------------------------
# The pattern and the ordering depend only on the model's structure (which bodies each row, joint and
# damper connects, and the eliminated components), not on its numbers: they are kept per structure,
# so repeated simulations of one mechanism (studies, parameter variants, a benchmark's repeats) do not
# recompute them. Measured on W3: ~0.3 ms of set-up per call (the Python pattern, scipy's CSR and RCM)
# against a 10 s run of 33 ms; the first call of a structure pays it.
_MEMO: dict = {}
_MEMO_SIZE = 64


def _structure_key(kind: str, m, eliminated) -> tuple:
    arrays = (m.row_index, m.joint_index, m.damper_index, m.axial_bodies, m.torsional_index,
              np.zeros(0, dtype=np.int64) if eliminated is None else np.asarray(eliminated, dtype=np.int64))
    return (kind, int(m.planar), m.body_mass.shape[0], eliminated is None) + tuple(
        (a.shape, a.tobytes()) for a in arrays)


def _remember(key, compute):
    hit = _MEMO.get(key)
    if hit is None:
        if len(_MEMO) >= _MEMO_SIZE:
            _MEMO.clear()
        hit = _MEMO[key] = compute()
    return hit


def kkt_pattern(m, eliminated=None) -> tuple[np.ndarray, np.ndarray]:
    """Structural nonzeros ``(i, j)`` of the step matrices (:func:`_kkt_pattern`), computed
    once per model structure and process (new arrays on every call)."""
    ii, jj = _remember(_structure_key("pattern", m, eliminated), lambda: _kkt_pattern(m, eliminated))
    return ii.copy(), jj.copy()


def kkt_order(m, eliminated=None) -> tuple[np.ndarray, int]:
    """``(order, bandwidth)`` of :func:`_kkt_order`, computed once per model structure and
    process (a new array on every call)."""
    order, bw = _remember(_structure_key("order", m, eliminated), lambda: _kkt_order(m, eliminated))
    return order.copy(), bw
