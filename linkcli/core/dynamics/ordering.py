"""Order of the unknowns of the step's saddle-point matrices (body velocity components and
constraint rows) that makes them banded: the bodies form a tree plus loop closures, so a
reverse Cuthill-McKee ordering (scipy) gives a bandwidth that, for a chain of loops, does not
grow with the number of bodies, and the banded LU (:func:`.linalg.band_lu_factor`) of the step
costs O(N) instead of O(N^3). Set up once per model, in Python."""

from __future__ import annotations

import numpy as np
import scipy.sparse
from scipy.sparse.csgraph import reverse_cuthill_mckee

from .layout import AXIAL, E_ELEMENT, E_KIND, J_CHILD_BODY, J_PARENT_BODY, R_JOINT


def kkt_pattern(m) -> tuple[np.ndarray, np.ndarray]:
    """Structural nonzeros ``(i, j)`` (both triangles) of the step matrices over all unknowns:
    body velocity components ``0 .. n-1`` then every constraint row of the model ``n + row``.
    A body's components are coupled with each other (mass block), with the rows of its joints
    and, through a damper, with the components of the other body of the damper."""
    nb, nd = m.body_mass.shape[0], (3 if m.planar else 6)
    n = nd * nb
    dofs = lambda b: range(nd * b, nd * b + nd) if b >= 0 else range(0)  # noqa: E731  (ground: none)
    ii: list[int] = []
    jj: list[int] = []

    def clique(idx):
        for a in idx:
            for b in idx:
                ii.append(a)
                jj.append(b)

    for b in range(nb):
        clique(list(dofs(b)))
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


def kkt_order(m) -> tuple[np.ndarray, int]:
    """``(order, bandwidth)``: the position of every unknown of :func:`kkt_pattern` in a
    reverse Cuthill-McKee ordering (scipy) and the bandwidth of the step matrices in it. For a
    chain of loops the bandwidth does not grow with the number of bodies, so the banded LU of
    the step costs O(N). Any subset of the rows, kept in this relative order, has a bandwidth no
    larger (removing unknowns only brings the others closer)."""
    N = m.coordinate_scale.shape[0] + m.row_index.shape[0]
    ii, jj = kkt_pattern(m)
    if N == 0:
        return np.zeros(0, dtype=np.int64), 0
    A = scipy.sparse.csr_matrix((np.ones(len(ii)), (ii, jj)), shape=(N, N))
    perm = reverse_cuthill_mckee(A, symmetric_mode=True)
    order = np.empty(N, dtype=np.int64)
    order[perm] = np.arange(N)
    bw = int(np.abs(order[ii] - order[jj]).max()) if len(ii) else 0
    return order, bw
