"""Branch check of the integrator's steps: a step that flips the orientation of the constraint
Jacobian (another assembly branch, or a singular position passed) is refined, and accepted only
as a continuous passage.

Truths: the closed-form position of a motor-driven four-bar on its circuit (fully driven, so
the motion is the kinematics), and the minimal-coordinate pendulum equation of a chain of
parallelograms (every rocker turns alike, the couplers translate) solved by solve_ivp.
"""

from __future__ import annotations

import numpy as np
from scipy.integrate import solve_ivp

from linkcli.compile import compile_mechanism
from linkcli.core.assembly import assemble
from linkcli.core.dynamics import integrator as it
from linkcli.core.dynamics import runner, simulate
from linkcli.core.dynamics.setup import prepare
from linkcli.io.loader import validate_document

GROUND, CRANK, COUPLER, ROCKER = 2.0, 1.0, 2.0, 1.00001  # m: 1e-5 m from a change point
SPEED = 2 * np.pi  # rad/s, the motor
G = 9.81


def _rod(a: str, b: str, length: float) -> dict:
    return {"shape": {"type": "rod", "between": [a, b], "mass": 1.0}, "frames": {a: [0, 0], b: [length, 0]}}


def near_change_point_fourbar():
    """Crank-rocker 2 / 1 / 2 / 1.00001 m turned by a motor at 1 rev/s: at crank angles 0 and pi
    the links are nearly aligned and its two circuits (assembly modes) pass 3e-3 rad apart."""
    doc = {"name": "near change point", "kind": "planar", "units": {"length": "m", "angle": "rad"},
           "gravity": [0, -G],
           "links": {"ground": {"frames": {"O2": [0, 0], "O4": [GROUND, 0]}}, "crank": _rod("O2", "A", CRANK),
                     "coupler": _rod("A", "B", COUPLER), "rocker": _rod("O4", "B", ROCKER)},
           "joints": {"crank_pin": {"type": "revolute", "parent": "ground.O2", "child": "crank.O2", "actuated": True},
                      "A": {"type": "revolute", "parent": "crank.A", "child": "coupler.A"},
                      "B": {"type": "revolute", "parent": "coupler.B", "child": "rocker.B"},
                      "O4": {"type": "revolute", "parent": "ground.O4", "child": "rocker.O4"}},
           "base": "ground", "assembly": {"crank_pin": 0.5, "A": 0.0, "B": 0.0, "O4": 0.0},
           "drivers": {"motor": {"joint": "crank_pin", "type": "constant_speed", "speed": SPEED}}}
    return compile_mechanism(validate_document(doc, None, "<near change point>").model)


def circuit(crank: np.ndarray, side: float) -> np.ndarray:
    """Joint variables (crank_pin, A, B, O4) in closed form on the circuit where B lies on
    ``side`` (+1 / -1) of the line from A to O4: a crank-rocker never changes that side (its
    transmission angle stays in (0, pi) or in (-pi, 0)), so this is the motion's own branch."""
    A = CRANK * np.exp(1j * crank)
    e = GROUND - A
    L = np.abs(e)
    x = (COUPLER**2 - ROCKER**2 + L**2) / (2 * L)
    B = A + (x + side * 1j * np.sqrt(np.maximum(COUPLER**2 - x**2, 0.0))) * e / L
    t3, t4 = np.angle(B - A), np.angle(B - GROUND)
    return np.c_[crank, t3 - crank, t4 - t3, t4]


def _wrapped(a):
    return np.abs(np.angle(np.exp(1j * a)))


def _run_without_branch_check(mech, q0, t_end, dt, tol=1e-10):
    """The integrator's steps with the branch check off (every other check on): the rows an
    unchecked run would write, and the status it ends with."""
    setup, w, nrow = prepare(mech, q0, np.zeros(mech.n_q), t_end, dt)
    runner._warm_start(setup, w, nrow, tol, 20)
    rows, acc = [w.q.copy()], np.zeros(3)
    for k in range(setup.n_steps):
        status, _, _, _ = it.advance(setup.km, setup.wk, nrow, setup.h, setup.drv[k + 1], setup.drv[k + 2],
                                     setup.rate[k + 2], tol, 20, acc, True)
        if status != it.OK:
            return np.array(rows), status
        rows.append(w.q.copy())
    return np.array(rows), it.OK


def test_a_step_onto_the_other_circuit_is_rejected_and_refined_and_the_run_matches_the_closed_form():
    mech = near_change_point_fourbar()
    side = 1.0
    q0 = circuit(np.array([0.5]), side)[0]
    t_end, dt = 1.0, 1e-2  # the crank turns 0.063 rad per step, far below the rotation bound
    t = np.arange(101) * dt
    truth = circuit(0.5 + SPEED * t, side)
    unchecked, status = _run_without_branch_check(mech, q0, t_end, dt)
    # without the check the run ends "ok" with rows on the other circuit from t = 0.43 s on (3.1
    # rad away at the coupler), and no other check (Newton, rotation bound) notices
    assert status == it.OK and len(unchecked) == len(t)
    assert _wrapped(unchecked - truth).max() > 1.0
    r = simulate(mech, q0, np.zeros(4), t_end=t_end, dt=dt)
    assert r.status == "ok", r.message
    assert r.refined_steps >= 1  # measured 2: near crank angles pi and 2 pi
    # on the circuit at every row (measured 3.4e-9 rad at its largest): the constraints hold to
    # ~1e-10 m, which the near-aligned links amplify by 1 / sin(transmission angle) ~ 1 /
    # sqrt(1e-5) into the angles: 1e-6 rad is 30x that margin and a million times below the
    # other circuit's distance
    assert _wrapped(r.q - truth).max() < 1e-6


def parallelogram_chain(n_loops: int):
    """``n_loops`` coupled parallelograms (2 n + 1 uniform 1 m, 1 kg rods): rockers ``r0 .. rn``
    pinned to the ground at x = 0 .. n, couplers joining neighbouring rocker tips; free (no
    driver), gravity -9.81 y. All links are aligned on the x axis at rocker angles 0 and pi."""
    links = {"ground": {"frames": {f"O{i}": [float(i), 0.0] for i in range(n_loops + 1)}}}
    joints, assembly = {}, {}
    for i in range(n_loops + 1):
        links[f"r{i}"] = _rod("O", "T", 1.0)
        joints[f"p{i}"] = {"type": "revolute", "parent": f"ground.O{i}", "child": f"r{i}.O", "actuated": i == 0}
        assembly[f"p{i}"] = np.pi / 3
    for i in range(1, n_loops + 1):
        links[f"c{i}"] = _rod("A", "B", 1.0)
        joints[f"a{i}"] = {"type": "revolute", "parent": f"r{i - 1}.T", "child": f"c{i}.A"}
        joints[f"b{i}"] = {"type": "revolute", "parent": f"c{i}.B", "child": f"r{i}.T"}
        assembly[f"a{i}"], assembly[f"b{i}"] = -np.pi / 3, np.pi / 3
    doc = {"name": "parallelogram chain", "kind": "planar", "units": {"length": "m", "angle": "rad"},
           "gravity": [0, -G], "links": links, "joints": joints, "base": "ground", "assembly": assembly}
    return compile_mechanism(validate_document(doc, None, "<chain>").model)


def test_a_chain_of_parallelograms_passes_its_aligned_position_as_one_continuous_passage():
    """5 loops (an odd number: the orientation flips where all links align) released at 60 deg
    swing through the aligned positions at 0 and -pi rad; each passage is refined and
    accepted, and the motion is the one-degree-of-freedom pendulum of the parallelograms."""
    n = 5
    mech = parallelogram_chain(n)
    start = assemble(mech, np.array([np.pi / 3]), mech.q_init)
    t_end, dt = 1.2, 2e-3
    r = simulate(mech, start.q, np.zeros(mech.n_q), t_end=t_end, dt=dt, every=5)
    assert r.status == "ok", r.message
    # rockers: I = m L^2 / 3 about their pivots, CG at L/2; couplers translate with the tips
    inertia, weight_arm = (n + 1) / 3 + n, G * (0.5 * (n + 1) + n)
    sol = solve_ivp(lambda _, y: [y[1], -weight_arm * np.cos(y[0]) / inertia], (0, t_end), [np.pi / 3, 0.0],
                    method="DOP853", rtol=1e-12, atol=1e-12, dense_output=True).sol
    theta = sol(r.t)[0]
    assert theta.min() < -np.pi + 0.5 and (np.diff(np.sign(theta)) != 0).any()  # both aligned positions passed
    assert r.refined_steps >= 2
    # the scheme's second-order error at dt 2e-3: measured 5.1e-5 rad (1.3e-5 at dt 1e-3, ratio
    # 4); the other branch through the aligned position, the antiparallelogram, is off by order 1
    assert np.abs(r.q[:, 0] - theta).max() < 2e-4
    # energy: measured 3.0e-3 J of 78 J of weight times arm (a jump of the 40-loop chain onto the
    # other branch once gained 204 J)
    assert np.abs(r.total - r.total[0]).max() < 1e-2


def test_a_flip_without_a_consistent_passage_stops_the_run_and_keeps_the_good_rows(monkeypatch):
    """With the consistency bound at 0 no passage can be accepted: the run stops at the first
    aligned position, says when, where and why, and every row it keeps is on the motion."""
    monkeypatch.setattr(runner, "PASSAGE_CONSISTENCY", 0.0)
    n = 5
    mech = parallelogram_chain(n)
    start = assemble(mech, np.array([np.pi / 3]), mech.q_init)
    r = simulate(mech, start.q, np.zeros(mech.n_q), t_end=1.2, dt=2e-3, every=5)
    assert r.status == "diverged"
    assert "orientation of the constraint Jacobian flips" in r.message and "link '" in r.message
    assert "64 substeps" in r.message and "the rows up to t = " in r.message
    inertia, weight_arm = (n + 1) / 3 + n, G * (0.5 * (n + 1) + n)
    sol = solve_ivp(lambda _, y: [y[1], -weight_arm * np.cos(y[0]) / inertia], (0, 1.2), [np.pi / 3, 0.0],
                    method="DOP853", rtol=1e-12, atol=1e-12, dense_output=True).sol
    theta = sol(r.t)[0]
    # stopped just before the first aligned position (theta = 0), with the good rows only
    assert 0.0 < theta[-1] < 0.1 and len(r.t) > 10
    assert np.abs(r.q[:, 0] - theta).max() < 2e-4  # the scheme's error, as above
