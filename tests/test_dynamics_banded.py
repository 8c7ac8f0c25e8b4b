"""The banded LU of the step's saddle-point matrices against numpy's dense solve.

The integrator factorises ``[[A, G^T], [G, 0]]`` (A the body blocks, some of them zero: point
masses, massless directions) by LU with partial pivoting in band storage, in a reverse
Cuthill-McKee order of the unknowns (:mod:`linkcli.core.dynamics.ordering`). Truth:
``numpy.linalg.solve`` (LAPACK gesv) of the same system, dense and in the natural order.
Tolerance: both are backward stable, so they agree to about ``cond(K) eps``; the systems here
have cond(K) < 1e8 (checked), so a relative difference of 1e-7 would already be a wrong solve,
and 1e-8 * cond * eps-scale is what we allow (``rtol = cond * 1e-14``).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse
from scipy.sparse.csgraph import reverse_cuthill_mckee
from test_dynamics_support import load

from linkcli.core.assembly import assemble
from linkcli.core.dynamics import integrator as it
from linkcli.core.dynamics import setup as dyn_setup
from linkcli.core.dynamics.linalg import band_lu_factor, band_lu_solve

EPS_FACTOR = 1e-14  # relative agreement per unit condition number (~50 ulps)


def _chain_saddle_point(rng, n_bodies: int, zero_every: int):
    """A random well-posed saddle-point system shaped like a chain of planar bodies: 3x3
    symmetric positive semi-definite body blocks (every ``zero_every``-th body's block is zero:
    a massless link), constraint rows touching two neighbouring bodies (2 per joint, 3 for a
    massless body, one joint per body to the previous one, the first to the ground), so that G has full row rank and A
    is positive definite on its null space (checked by the caller through cond)."""
    n = 3 * n_bodies
    A = np.zeros((n, n))
    for b in range(n_bodies):
        if (b + 1) % zero_every:
            L = rng.normal(size=(3, 3))
            A[3 * b:3 * b + 3, 3 * b:3 * b + 3] = L @ L.T + 0.1 * np.eye(3)
    rows = []
    for b in range(n_bodies):
        for _ in range(2 if (b + 1) % zero_every else 3):  # a massless body is held in all 3 directions
            g = np.zeros(n)
            g[3 * b:3 * b + 3] = rng.normal(size=3)
            if b > 0:
                g[3 * b - 3:3 * b] = rng.normal(size=3)
            rows.append(g)
    G = np.array(rows)
    K = np.block([[A, G.T], [G, np.zeros((len(G), len(G)))]])
    return K, rng.normal(size=len(K))


def _band_solve(K, rhs, order, kl):
    """Solve ``K x = rhs`` with the kernels' banded LU in the ordering ``order``."""
    N = len(K)
    B = np.zeros((N, 3 * kl + 1))
    for i, j in zip(*np.nonzero(K), strict=True):
        B[order[i], order[j] - order[i] + kl] = K[i, j]
    xb = np.zeros(N)
    xb[order] = rhs
    piv = np.zeros(N, dtype=np.int64)
    ratio = band_lu_factor(B, N, kl, piv)
    if ratio < it.SINGULAR_PIVOT:
        return None, ratio
    band_lu_solve(B, N, kl, piv, xb)
    return xb[order], ratio


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_banded_lu_in_rcm_order_solves_a_saddle_point_system_with_zero_mass_blocks(seed):
    rng = np.random.default_rng(seed)
    K, rhs = _chain_saddle_point(rng, n_bodies=12, zero_every=3)
    cond = np.linalg.cond(K)
    assert cond < 1e8  # well posed (else the comparison says nothing)
    expected = np.linalg.solve(K, rhs)
    perm = reverse_cuthill_mckee(scipy.sparse.csr_matrix(K != 0), symmetric_mode=True)
    order = np.empty(len(K), dtype=np.int64)
    order[perm] = np.arange(len(K))
    ii, jj = np.nonzero(K)
    kl = int(np.abs(order[ii] - order[jj]).max())
    assert kl < len(K) // 3  # the ordering does make it banded
    x, ratio = _band_solve(K, rhs, order, kl)
    assert ratio > 1e-14
    scale = np.abs(expected).max()
    np.testing.assert_allclose(x, expected, rtol=0, atol=cond * EPS_FACTOR * scale)
    # the dense LU is the degenerate case: natural order, bandwidth N - 1
    x_dense, _ = _band_solve(K, rhs, np.arange(len(K)), len(K) - 1)
    np.testing.assert_allclose(x_dense, expected, rtol=0, atol=cond * EPS_FACTOR * scale)


def test_banded_lu_reports_a_singular_saddle_point_system():
    """A massless body whose motion no row holds: the matrix is singular, and the factorisation
    says so instead of returning garbage."""
    rng = np.random.default_rng(3)
    K, rhs = _chain_saddle_point(rng, n_bodies=6, zero_every=3)
    n = 18
    K[n:, 6:9] = 0.0  # no row touches body 2 (whose block is zero)
    K[6:9, n:] = 0.0
    _, ratio = _band_solve(K, rhs, np.arange(len(K)), len(K) - 1)
    assert ratio < it.SINGULAR_PIVOT


@pytest.mark.parametrize("name, angle", [("slider_crank_spatial.yaml", 30.0), ("fourbar_w3.yaml", 60.0)])
def test_the_step_newton_solve_equals_a_dense_solve_of_the_same_system(name, angle):
    """One Newton solve of the integrator (banded, RCM order) against numpy.linalg.solve of the
    step matrix assembled densely from the work arrays: planar four-bar, and the spatial
    slider-crank whose slider has zero inertia (zero rotational mass blocks)."""
    mech = load(name)
    start = assemble(mech, np.array([np.radians(angle)]), mech.q_init)
    st, w, nrow = dyn_setup.prepare(mech, start.q, np.zeros(mech.n_q), 0.01, 1e-3)
    km, wk, h = st.km, st.wk, st.h
    n = w.P.shape[0]
    it.momentum(km, w.rot, w.vel, w.omg, w.P, w.S[0])
    w.P[:] += 0.5 * h * w.Qf
    it._predict(km, wk, h)
    it.evaluate_trial(km, wk, nrow, st.drv[2])
    it._residual(km, wk, h, nrow, 1e-10)
    # the dense step matrix, independently of the band assembly (no dampers in these models)
    A = np.zeros((n, n))
    nd = 3 if mech.planar else 6
    for b in range(len(st.model.body_mass)):
        o = nd * b
        if mech.planar:
            mb = st.model.body_mass[b]
            A[o:o + 3, o:o + 3] = np.diag([mb, mb, st.model.body_inertia[b, 2, 2]]) / h
        else:
            A[o:o + 3, o:o + 3] = st.model.body_mass[b] / h * np.eye(3)
            S = np.zeros((3, 3))
            it.discrete_momentum_jacobian(st.model.body_inertia[b], w.rot[b], w.rot1[b], h, S, np.zeros((3, 3)),
                                          np.zeros((3, 3)))
            A[o + 3:o + 6, o + 3:o + 6] = S
    assert (np.trace(st.model.body_inertia, axis1=1, axis2=2) == 0).any() == (name == "slider_crank_spatial.yaml")
    G, G1 = w.G[:nrow], w.G1[:nrow]
    K = np.block([[A, G.T], [G1, np.zeros((nrow, nrow))]])
    rhs = np.r_[-w.r, -w.g1[:nrow]]
    expected = np.linalg.solve(K, rhs)
    assert it._newton_solve(km, wk, h, nrow)
    cond = np.linalg.cond(K)
    np.testing.assert_allclose(w.rhs[:n + nrow], expected, rtol=0,
                               atol=cond * EPS_FACTOR * np.abs(expected).max())


def test_components_eliminated_by_their_mass_blocks():
    """W3's bodies are all eliminated (its step solves reduce to the 8 x 8 constraint Schur
    complement); a slider without rotational inertia keeps its rotation in the pivoted band
    factorisation, and a body on a damper is kept whole."""
    from linkcli.core.dynamics.ordering import eliminable_components

    def model(name, angle=None):
        mech = load(name)
        start = mech.q_init if angle is None else assemble(mech, np.array([np.radians(angle)]), mech.q_init).q
        return dyn_setup.prepare(mech, start, np.zeros(mech.n_q), 0.01, 1e-3)

    st, w, nrow = model("fourbar_w3.yaml", 60.0)
    assert eliminable_components(st.model).all() and w.band[1] == nrow == 8
    st, w, _ = model("slider_crank_spatial.yaml", 30.0)
    flat = np.linalg.eigvalsh(st.model.body_inertia).min(axis=1) <= 0
    assert flat.any()
    mask = eliminable_components(st.model).reshape(-1, 6)
    assert (mask[:, :3] == 1).all() and (mask[flat, 3:] == 0).all() and (mask[~flat, 3:] == 1).all()
    st, w, _ = model("damped_shaft.yaml")
    assert st.model.damper_index.shape[0] and not eliminable_components(st.model).any()


def test_the_ordering_is_kept_per_structure_and_equals_a_fresh_computation():
    """kkt_order / kkt_pattern are computed once per model structure (ordering._MEMO): a model
    with the same structure and other numbers (masses) gets the ordering computed afresh for it,
    a different structure (other eliminated components, another mechanism) its own; returned
    arrays are new on every call (a caller writing into one does not change the next)."""
    from linkcli.core.dynamics import ordering
    from linkcli.core.dynamics.bodies import inertial_properties
    from linkcli.core.dynamics.model import build_model

    mech = load("fourbar_w3.yaml")
    mass, inertia = inertial_properties(mech)
    heavy = build_model(mech, 3.0 * mass, 3.0 * inertia)
    light = build_model(mech, mass, inertia)
    other = build_model(load("slider_crank_spatial.yaml"), *inertial_properties(load("slider_crank_spatial.yaml")))
    for m in (heavy, light, other):
        for eliminated in (None, ordering.eliminable_components(m), np.zeros(m.coordinate_scale.shape[0], np.int64)):
            ordering._MEMO.clear()
            fresh = ordering._kkt_order(m, eliminated)
            first = ordering.kkt_order(heavy, None)  # another structure's entry in the memo
            got = ordering.kkt_order(m, eliminated)
            assert np.array_equal(got[0], fresh[0]) and got[1] == fresh[1]
            got[0][:] = -1
            again = ordering.kkt_order(m, eliminated)
            assert np.array_equal(again[0], fresh[0])
            pattern = set(zip(*ordering.kkt_pattern(m, eliminated), strict=True))
            assert pattern == set(zip(*ordering._kkt_pattern(m, eliminated), strict=True))
            assert first[1] == ordering._kkt_order(heavy, None)[1]
