"""The sweep kernel's model evaluation and its sweeps against independent truths.

* residual and Jacobian of the kernel's packed model (planar SE(2) poses, or general (R, p)
  poses with the exact SO(3) log) against loop_closure.constraints (the numpy definition) and
  against central finite differences of the kernel's own residual, on every mechanism with
  loops in mechanisms/ (gallery included) and the spatial test mechanisms, at configurations
  far from closure (so the log's near-pi branch is met too); compiled == interpreted;
* 721-point sweeps against the numpy continuation that the kernel replaced (issue 11): its
  results, computed at commit be14d3c with ``sweep._solve_sweep_numpy`` on the same inputs,
  are frozen in tests/data/sweeps_numpy_path.npz (an independent implementation of the same
  algorithm: batched Hermite fill, numpy linear algebra);
* square, tall and wide passive partitions: the corrector's least-squares / minimum-norm step
  against loop_closure._least_squares_step.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import numpy as np
import pytest

from linkcli.compile import compile_mechanism
from linkcli.core import loop_closure, sweep
from linkcli.core.loop_closure import Status, mechanism_size
from linkcli.io.loader import load_mechanism

REPO = Path(__file__).resolve().parent.parent
HAVE_NUMBA = importlib.util.find_spec("numba") is not None and not os.environ.get("LINKCLI_NO_JIT")
FILES = sorted([*(REPO / "mechanisms").glob("*.yaml"), *(REPO / "mechanisms" / "gallery").glob("*.yaml"),
                REPO / "tests" / "data" / "dynamics" / "fourbar_spatial.yaml",
                REPO / "tests" / "data" / "dynamics" / "slider_crank_spatial.yaml",
                REPO / "tests" / "data" / "perf" / "joint_zoo.yaml"])


def load(path):
    return compile_mechanism(load_mechanism(str(path)).model)


def with_loops():
    out = []
    for f in FILES:
        mech = load(f)
        if mech.n_loops:
            out.append(pytest.param(f, id=str(f.relative_to(REPO))))
    return out


def evaluate(pk, mech, q):
    mi, mf, n_wf, n_wi = pk.pack(sweep._kernel_model(mech))
    wf, _ = pk.workspace(n_wf, n_wi)
    r, J = np.empty(mech.n_constraints), np.empty((mech.n_constraints, mech.n_q))
    pk.evaluate(mi, mf, wf, np.ascontiguousarray(q, dtype=float), r, J)
    return r, J


@pytest.mark.parametrize("path", with_loops())
def test_kernel_residual_and_jacobian(path):
    """Against loop_closure.constraints to 1e-12 (the same formulas in another operation
    order: rounding of O(1e-16) times the mechanism's O(1) lengths and angles), and the
    Jacobian against central differences of the kernel's residual (h = 1e-6: truncation
    ~h^2 |r'''| ~ 1e-12 and rounding ~eps |r| / h ~ 1e-10, times the size; 1e-7 relative)."""
    mech = load(path)
    pk = sweep._interpreted_kernel()
    rng = np.random.default_rng(11)
    L = mechanism_size(mech)
    scale = np.where(mech.q_is_rotation, 1.0, L)
    for spread in (0.3, 2.0, 2.0, 2.0):
        q = mech.q_init + rng.normal(0, spread, mech.n_q) * scale
        r, J = evaluate(pk, mech, q)
        ev = loop_closure.constraints(mech, q)
        size = max(1.0, L)
        np.testing.assert_allclose(r, ev.r, rtol=0, atol=1e-12 * size)
        np.testing.assert_allclose(J, ev.J, rtol=0, atol=1e-12 * size)
        h = 1e-6
        fd = np.empty_like(J)
        for k in range(mech.n_q):
            dq = np.zeros(mech.n_q)
            dq[k] = h * scale[k]
            fd[:, k] = (evaluate(pk, mech, q + dq)[0] - evaluate(pk, mech, q - dq)[0]) / (2 * h * scale[k])
        angles = r.reshape(mech.n_loops, mech.loop_dim)[:, 2 if mech.planar else 3:]
        angle = np.linalg.norm(angles, axis=-1) if not mech.planar else np.abs(angles[:, 0])
        if np.all(angle < 3.1):  # (an angle residual at +-pi wraps between q - h and q + h)
            np.testing.assert_allclose(fd, J, rtol=0, atol=1e-7 * max(1.0, np.abs(J).max()))


def test_log_branch_near_pi_is_exercised():
    """The spatial residual's rotation part beyond pi / 2 (the log's symmetric-part branch)
    matches loop_closure there: a spatial four-bar with its coupler turned far from closure."""
    mech = load(REPO / "mechanisms" / "planar_fourbar_as_spatial.yaml")
    pk = sweep._interpreted_kernel()
    hits = 0
    for t in np.linspace(0.5, 3.1, 14):
        q = mech.q_init.copy()
        q[1:] += t
        r, J = evaluate(pk, mech, q)
        ev = loop_closure.constraints(mech, q)
        hits += int(np.linalg.norm(r[3:6]) > np.pi / 2)
        np.testing.assert_allclose(r, ev.r, rtol=0, atol=1e-12)
        np.testing.assert_allclose(J, ev.J, rtol=0, atol=1e-11)
    assert hits >= 3


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba not installed (or LINKCLI_NO_JIT set)")
@pytest.mark.parametrize("name", ["rssr_spatial.yaml", "planar_fourbar_as_spatial.yaml", "gallery/stewart_gough.yaml",
                                  "fourbar.yaml"])
def test_compiled_evaluation_equals_interpreted(name):
    """The same code compiled and as plain Python: equal to libm rounding (1e-13)."""
    mech = load(REPO / "mechanisms" / name)
    q = mech.q_init + np.random.default_rng(3).normal(0, 0.7, mech.n_q)
    ri, Ji = evaluate(sweep._interpreted_kernel(), mech, q)
    rc, Jc = evaluate(sweep._compiled_kernel(), mech, q)
    np.testing.assert_allclose(rc, ri, rtol=0, atol=1e-13)
    np.testing.assert_allclose(Jc, Ji, rtol=0, atol=1e-13)


REFERENCE = np.load(REPO / "tests" / "data" / "sweeps_numpy_path.npz")


@pytest.mark.parametrize("name", ["fourbar", "watt_sixbar", "parallelogram", "rssr_spatial",
                                  "planar_fourbar_as_spatial", "gallery/bennett", "gallery/sarrus"])
def test_sweeps_equal_the_numpy_continuation(name):
    """721 points over a full input turn (0.3 mechanism sizes for a translation): the same
    statuses and events as the numpy continuation, q to 1e-8 (both stop at weighted residuals
    below 1e-10 and these mechanisms' passive Jacobians are well conditioned away from their
    events: ~1e-10 measured, 1e-8 leaves room for a different last Newton step)."""
    mech = load(REPO / "mechanisms" / f"{name}.yaml")
    rot = mech.q_is_rotation[mech.q_actuated]
    span = np.where(rot, 2 * np.pi, 0.3 * mechanism_size(mech))
    Q = mech.q_init[mech.q_actuated] + np.linspace(0, 1, 721)[:, None] * span
    r = sweep.solve_sweep(mech, Q, mech.q_init)
    key = name.replace("/", "__")
    np.testing.assert_array_equal(r.status, REFERENCE[key + "__status"])
    assert [f"{e.index}:{e.kind}" for e in r.events] == list(REFERENCE[key + "__events"])
    np.testing.assert_allclose(r.q, REFERENCE[key + "__q"], rtol=0, atol=1e-8)


# (file under mechanisms/, case) frozen by tests/data/make_sweeps_numpy_path.py (its path_of says
# what each case's inputs are; they are stored with the reference as <key>__Q)
FROZEN_CASES = [("../tests/data/perf/double_rocker", "turn"), ("gallery/chebyshev", "turn"), ("coupling_rod", "turn"),
                ("fourbar", "reversing"), ("parallelogram", "reversing"), ("coupling_rod", "reversing"),
                ("fourbar", "coarse45"), ("watt_sixbar", "coarse45"), ("parallelogram", "coarse45"),
                ("fivebar", "grid")]
SINGULAR = ("singular_point", "singular_crossing")


@pytest.mark.parametrize("name, case", FROZEN_CASES)
def test_more_sweeps_equal_the_numpy_continuation(name, case):
    """Limit positions and reassembly (double rocker, Chebyshev), exact singular grid points
    (coupling rod, parallelogram: change points at 0 and 180 deg of a 0.5 deg grid), paths that
    reverse, 45 deg coarse steps and a two-input grid in serpentine order (five-bar): the same
    statuses as the numpy continuation and q to 1e-8 (as above; ~5e-10 measured with 45 deg
    coarse steps, whose coarse points converge from farther) where they converge. Events: the
    same number and kinds, except that a singular point or crossing *at* an exactly singular
    grid point may be reported one index earlier or later and as either kind (which side it is attributed to follows the
    sign of a det J_p that is zero up to rounding there). Where the numpy path itself was wrong
    (rows whole turns off after a limit position, found after it was frozen), the truth is the
    closed form instead: tests/reference/test_sweep_predictor_limit.py."""
    mech = load(REPO / "mechanisms" / f"{name}.yaml")
    key = f"{Path(name).name}__{case}"
    Q = REFERENCE[key + "__Q"]
    r = sweep._solve_sweep_compiled(mech, Q, mech.q_init, 1e-10, np.radians(45.0 if case == "coarse45" else 10.0))
    # the same points converge; where none does (past a limit position), whether the corrector
    # ends at max_iter or no_assembly depends on its start: the kernel starts from the latest
    # converged point, the numpy path started from the failed neighbour (whose q could be
    # 1e9 rad off)
    ok = r.status == Status.CONVERGED
    np.testing.assert_array_equal(ok, REFERENCE[key + "__status"] == Status.CONVERGED)
    # rows of runs started by reassembly take the whole turns nearest the last good point
    # (sweep._keep_turns; the numpy path kept whatever Newton gave, tests/test_branch_truth.py):
    # there the same configuration, angles compared modulo 2 pi
    d = r.q - REFERENCE[key + "__q"]
    rerun = (np.cumsum(r.reassembled) > 0)[:, None] & mech.q_is_rotation[None, :]
    d = np.where(rerun, (d + np.pi) % (2 * np.pi) - np.pi, d)
    np.testing.assert_allclose(d[ok], 0.0, rtol=0, atol=1e-8)
    frozen = [(int(i), k) for i, k in (e.split(":") for e in REFERENCE[key + "__events"])]
    assert len(r.events) == len(frozen), (r.events, frozen)
    for e, (i, kind) in zip(r.events, frozen, strict=True):
        if e.kind in SINGULAR and kind in SINGULAR:
            assert abs(e.index - i) <= 1, (e, i, kind)
            # the grid point between is singular: J_p's condition there is huge
            assert r.condition[min(e.index, i):max(e.index, i) + 2].max() > 1e8, (e, i)
        elif kind == "reassembled" and e.kind == kind:
            # the numpy path reported the coarse point it restarted at; the points between it and
            # the failed points before were already solved from it: the event names the first of
            # them (the first converged point of the run, issue: branch truth)
            j = i
            while j > 0 and ok[j - 1]:
                j -= 1
            assert e.index == j and not ok[j - 1] and ok[j:i + 1].all(), (e, i)
        else:
            assert (e.index, e.kind) == (i, kind)


@pytest.mark.parametrize("shape", [(3, 3), (6, 3), (6, 7), (4, 9), (9, 2)])
@pytest.mark.parametrize("damping", [0.0, 1e-3, 0.5])
def test_least_squares_step_equals_loop_closure(shape, damping):
    """The kernel's corrector step (square, tall, wide; undamped and damped) against
    loop_closure._least_squares_step's SVD form, to 1e-11 relative (Jacobi SVD vs LAPACK)."""
    pk = sweep._interpreted_kernel()
    m, n = shape
    rng = np.random.default_rng(m * 10 + n)
    A = rng.normal(size=(m, n))
    b = rng.normal(size=m)
    mi = np.zeros(pk.H_SIZE, dtype=np.int64)
    mi[pk.H_NC], mi[pk.H_NP] = m, n
    big = max(m, n)
    offs = np.cumsum([0, m * n, 9 + n * n, big * big, big * big, big, m])
    mi[pk.W_JP], mi[pk.W_LU], mi[pk.W_AW], mi[pk.W_V], mi[pk.W_SV], mi[pk.W_RHS] = offs[:6]
    mi[pk.W_DX] = offs[6]
    mi[pk.I_PIV] = 0
    wf = np.zeros(offs[6] + n)
    wi = np.zeros(n, dtype=np.int64)
    wf[mi[pk.W_JP]:mi[pk.W_JP] + m * n] = A.ravel()
    wf[mi[pk.W_RHS]:mi[pk.W_RHS] + m] = -b
    pk._solve_passive(mi, wf, wi, mi[pk.W_JP], mi[pk.W_RHS], damping, mi[pk.W_DX])
    x = wf[mi[pk.W_DX]:mi[pk.W_DX] + n]
    ref = loop_closure._least_squares_step(A, b, damping)
    np.testing.assert_allclose(x, ref, rtol=0, atol=1e-11 * max(1.0, np.abs(ref).max()))


def test_first_point_falls_back_to_assembly_at_the_first_input(monkeypatch):
    """When the estimate's branch does not reach the first input (simulated: the branch
    following reports it unreached), the sweep starts from the assembly at the first input
    (Newton from the estimate's assembly, seeded restarts), its angles nearest the estimate:
    the result equals a sweep started from that assembly, and its first point is reported as
    reassembled (a configuration not reached by continuation)."""
    from linkcli.core.assembly import assemble, nearest_turn

    mech = load(REPO / "tests" / "data" / "perf" / "double_rocker.yaml")
    pk = sweep._interpreted_kernel()
    Q = np.radians(np.linspace(300.0, 330.0, 31))[:, None]

    def unreached(mech, a, home, tol, max_step, pk, **_):
        return sweep.BranchPoint(home.copy(), int(Status.NO_ASSEMBLY), np.full(mech.n_loops, np.nan), np.inf, 0, "",
                                 home[mech.q_actuated], home[mech.q_actuated])

    monkeypatch.setattr(sweep, "_follow_branch", unreached)
    r = sweep._solve_sweep_kernel(mech, Q, mech.q_init, 1e-10, np.radians(10.0), pk)
    home = assemble(mech, mech.q_init[mech.q_actuated], mech.q_init, tol=1e-10)
    first = assemble(mech, Q[0], home.q, tol=1e-10)
    start = nearest_turn(mech, first.q, mech.q_init, passive_only=True)
    monkeypatch.undo()
    ref = sweep._solve_sweep_interpreted(mech, Q, start, 1e-10, np.radians(10.0))
    np.testing.assert_array_equal(r.status, ref.status)
    np.testing.assert_allclose(r.q, ref.q, rtol=0, atol=1e-12)
    assert r.reassembled is not None and r.reassembled[0] and r.events[0].kind == "reassembled"


@pytest.mark.parametrize("name", ["fourbar", "rssr_spatial"])
def test_non_finite_input_is_never_converged(name):
    """A NaN input (reaching the kernel past solve_sweep's check, as a study's worker may call
    it) fails at that point, compiled and interpreted alike: NaN compares False, so
    ``err > tol`` used to let a NaN residual through as converged (compiled) while the
    interpreted kernel raised ZeroDivisionError in the LU of a NaN J_p. Its loop residual is
    reported as NaN, not 0 (max() dropped NaN); its neighbours converge as usual. (An infinite
    input is left to solve_sweep's check: plain Python's math.cos raises on it where numba's
    returns NaN.)"""
    mech = load(REPO / "mechanisms" / f"{name}.yaml")
    a0 = mech.q_init[mech.q_actuated][0]
    Q = np.array([[a0], [np.nan], [a0 + 0.2]])
    results = [f(mech, Q, mech.q_init, 1e-10, np.radians(10.0))
               for f in (sweep._solve_sweep_compiled, sweep._solve_sweep_interpreted)]
    for r in results:
        assert r.status[0] == Status.CONVERGED and r.status[2] == Status.CONVERGED
        assert r.status[1] != Status.CONVERGED
        assert not np.isfinite(r.residual[1]).all()
        assert any(e.index == 1 for e in r.events)
    np.testing.assert_array_equal(results[0].status, results[1].status)


def test_lu_of_a_nan_matrix_is_singular():
    """The kernel's LU reports a NaN pivot as singular (sign 0), as it does an exact zero
    (``big == 0.0`` is False for NaN: the interpreted kernel then divided by zero)."""
    import importlib

    for kernel in (importlib.import_module("linkcli.core.sweep_kernel"), sweep._interpreted_kernel()):
        for A in (np.array([[np.nan, 1.0], [2.0, 3.0]]), np.zeros((2, 2))):
            wf, wi = A.ravel().copy(), np.zeros(2, dtype=np.int64)
            assert kernel._lu(wf, wi, 0, 0, 2) == (0.0, 0.0)
        wf, wi = np.array([2.0, 1.0, 4.0, 3.0]), np.zeros(2, dtype=np.int64)
        sign, ratio = kernel._lu(wf, wi, 0, 0, 2)
        assert sign == np.sign(2.0 * 3.0 - 1.0 * 4.0) and 0 < ratio <= 1  # det = 2


@pytest.mark.parametrize("argument", ["Q_act", "q_start"])
@pytest.mark.parametrize("bad", [np.nan, -np.inf])
def test_solve_sweep_rejects_non_finite_arguments(argument, bad):
    mech = load(REPO / "mechanisms" / "fourbar.yaml")
    Q = mech.q_init[mech.q_actuated] + np.zeros((3, 1))
    q0 = mech.q_init.copy()
    if argument == "Q_act":
        Q[1, 0] = bad
    else:
        q0[-1] = bad
    with pytest.raises(ValueError, match=rf"solve_sweep: {argument} must be finite"):
        sweep.solve_sweep(mech, Q, q0)
