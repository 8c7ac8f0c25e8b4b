"""When a stalled Newton run of ``find_equilibria`` counts as a rest position (``settled``).

A run whose steps fell below rounding is a rest position only if its holding torque is within
the tolerance, or its Newton correction ``|K^-1 tau|`` is below ``sqrt(tol)`` of the input's own
scale (1 rad + |a| for a rotation; mechanism size + |a| for a slide, both in metres) AND the
configuration is regular (kinematic condition <= SINGULAR_CONDITION).

Independent truth: a slider on a prismatic joint along x tied by two springs to ground anchors
off the slide. With the slider at P = (x, 0), V(x) = sum_i k_i/2 (|P - A_i| - L_i)^2 (gravity acts
across the slide and is carried by the joint); the rest position is the root of dV/dx, found by
brentq on central differences of V. Scaling every length by s (stiffness unchanged) scales V by
s^2 and the root by s: the rest position relative to the size is the same at every scale.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import brentq

#: (anchor x, anchor y, stiffness N/m, free length) at scale 1 (m)
SPRINGS = [(-2.0, 1.0, 50.0, 1.0), (3.0, -1.0, 80.0, 2.0)]

SLIDER = """\
name: two-spring slider
kind: planar
units: {{length: m, angle: rad}}
gravity: [0, -9.81]
links:
  ground:
    frames: {{O: [0, 0], A1: [{a1x}, {a1y}], A2: [{a2x}, {a2y}]}}
  slider:
    mass: 1.0
    cg: [0, 0]
    inertia: 0.1
    frames: {{O: [0, 0]}}
joints:
  slide: {{type: prismatic, parent: ground.O, child: slider.O, axis: [1, 0]}}
springs:
  k1: {{between: [ground.A1, slider.O], stiffness: {k1}, free_length: {l1}}}
  k2: {{between: [ground.A2, slider.O], stiffness: {k2}, free_length: {l2}}}
base: ground
"""


#: a spring anchored ON the slide at x = s, free length 0.01 s: its force jumps from +0.35 s to
#: -0.40 s N as the slider passes the anchor (compressed either side); the second spring adds
#: -0.14 s N there, so the holding force jumps across zero at x = s: no rest position
KINKED = [(1.0, 0.0, 50.0, 0.01), (3.0, -1.0, 80.0, float(np.sqrt(5.0)) - 0.002)]


def hand_potential(x, s, springs=SPRINGS):
    return sum(0.5 * k * (np.hypot(x - ax * s, ay * s) - L * s) ** 2 for ax, ay, k, L in springs)


def hand_rest(s):
    """Root of dV/dx (central differences, step 1e-5 s: truncation O(1e-10 s^2) relative)."""
    h = 1e-5 * s
    return brentq(lambda x: (hand_potential(x + h, s) - hand_potential(x - h, s)) / (2 * h),
                  -1.0 * s, 2.0 * s, xtol=1e-14 * s)


def _slider(tmp_path, s, springs=SPRINGS):
    from linkcli.api import load
    from linkcli.core.kinetostatics import freed_mechanism

    (a1x, a1y, k1, l1), (a2x, a2y, k2, l2) = springs
    f = tmp_path / f"slider_{s:g}_{a1y:g}.yaml"
    f.write_text(SLIDER.format(a1x=a1x * s, a1y=a1y * s, a2x=a2x * s, a2y=a2y * s, k1=k1, k2=k2,
                               l1=l1 * s, l2=l2 * s), encoding="utf-8")
    mech = load(f).compiled
    free = freed_mechanism(mech, mech.q_init)
    assert [free.q_names[k] for k in free.q_actuated] == ["slide"]
    return free


def _rows(free, xs):
    q = np.tile(free.q_init, (len(xs), 1))
    q[:, free.q_actuated[0]] = xs
    return q


#: the rest position against the hand root, relative to the size (3 s): Newton stops at
#: |tau| <= 1e-10 of the path's forces (~100 s N), i.e. ~1e-8 s / (stiffness ~130 N/m) m; the
#: hand root is good to ~1e-10 s (central differences): 1e-8 of the size leaves room, and
#: still rejects any other point (the potential has one minimum in [-s, 2 s])
RTOL_REST = 1e-8


@pytest.mark.parametrize("near", [False, True], ids=["wide_bracket", "stall_near_root"])
def test_rest_position_and_verdict_are_scale_invariant(tmp_path, near):
    """The same slider at scales 1e-3, 1, 1e3: the rest position relative to its size and the
    convergence verdict are the same. ``stall_near_root`` gives rows 1e-9 s either side of the
    root: the holding forces seen are ~1e-7 s N, so the tolerance (1e-10 of them) lies below the
    round-off of the spring forces (~1e-16 * 100 s N): Newton stalls and the verdict rests on the
    correction test, whose resolution must scale with s (the old ``size * (1 + |a|)``, a in m,
    did not: 1e6 times wider relative to the size at s = 1e3 than at s = 1e-3)."""
    from linkcli.core.kinetostatics import find_equilibria

    results = []
    for s in (1e-3, 1.0, 1e3):
        free = _slider(tmp_path, s)
        x0 = hand_rest(s)
        d = 1e-9 * s if near else 0.3 * s
        xs = np.array([x0 - d, x0 + 1.618 * d])  # (not symmetric: a first bisection lands off the root)
        eqs = find_equilibria(free, xs[:, None], _rows(free, xs), np.ones(2, dtype=bool))
        assert len(eqs) == 1, eqs
        e = eqs[0]
        size = 3.0 * s  # the largest frame offset: anchor A2 at x = 3 s
        assert e.converged, e.reason
        assert abs(e.a[0] - x0) <= RTOL_REST * size, (s, e.a[0], x0)
        results.append((e.converged, (e.a[0] - x0) / size, e.stability))
    assert len({r[0] for r in results}) == 1 and len({r[2] for r in results}) == 1


def test_a_force_jump_is_no_rest_position_at_any_scale(tmp_path):
    """The slider between rows 0.003 s before and 0.002 s past the anchor of a spring on the slide
    (KINKED): the holding force jumps from + to - there (hand potential: a cusp), so Newton's
    bracket collapses on x = s with |holding| 0.2 s to 0.54 s N and stiffness ~114 N/m: a Newton
    correction of 2e-3 s to 5e-3 s, far above sqrt(tol) (size + |a|) = 4e-5 s, at every scale.
    The old resolution sqrt(tol) size (1 + |a|) (a in m) was 30 m at s = 1e3 and accepted it
    there only (checked by mutation: reported converged with 643 N still holding)."""
    from linkcli.core.kinetostatics import find_equilibria, reduced_stiffness

    for s in (1e-3, 1.0, 1e3):
        free = _slider(tmp_path, s, KINKED)
        xs = np.array([0.997 * s, 1.002 * s])
        rows = _rows(free, xs)
        tau = reduced_stiffness(free, rows).holding[:, 0]
        # the hand potential's slope by central differences (step 1e-6 s, away from the cusp)
        h = 1e-6 * s
        hand = [(hand_potential(x + h, s, KINKED) - hand_potential(x - h, s, KINKED)) / (2 * h) for x in xs]
        # both slopes O(0.3 s) N; central differences of a quadratic: round-off ~1e-16 V / h
        np.testing.assert_allclose(tau, hand, rtol=1e-6)
        assert tau[0] > 0 > tau[1]
        eqs = find_equilibria(free, xs[:, None], rows, np.ones(2, dtype=bool))
        assert len(eqs) == 1
        e = eqs[0]
        assert not e.converged and e.reason, (s, e)
        # the bracket collapsed on the jump, the anchor: the run stops at steps of 1e-14 (1 + |a|)
        # (a in m), which at s = 1e-3 is 1e-11 s; 1e-10 s leaves room
        assert abs(e.a[0] - s) <= 1e-10 * s, (s, e.a[0])


# -- a sign change across a dead centre -------------------------------------------------------------
# fb_rock_spr: ground 4, crank 1, coupler 3.5, rocker 3 (m); the rocker (joint O4 = -psi, psi its
# angle from +x) is the input, the crank passive with a torsional spring (2 N m/rad, free at
# 180 deg) and gravity on all three links. The rocker's reach ends at a dead centre, crank and
# coupler in line (|O2 B| = 4.5 m): cos psi_f = (4.5^2 - 4^2 - 3^2) / (2 * 4 * 3). The two
# assembly modes (crank either side of O2 B) meet there, and the holding torque dV/dpsi passes
# through infinity between them: it has opposite signs on the two modes near psi_f.
ROCKER_FILE = Path(__file__).parent / "data" / "branch" / "fb_rock_spr.yaml"
PSI_DEAD = float(np.arccos((4.5**2 - 4.0**2 - 3.0**2) / 24.0))


def rocker_row(psi, mode):
    """Joint variables (crank_pin, A, B, O4) in rad at rocker angle psi, crank on side ``mode``
    (+-1) of O2 B (closed form: intersection of the crank's circle and the coupler's)."""
    B = np.array([4.0 + 3.0 * np.cos(psi), 3.0 * np.sin(psi)])
    d = np.linalg.norm(B)
    along = (1.0 - 3.5**2 + d * d) / (2.0 * d)
    A = along * B / d + mode * np.sqrt(max(1.0 - along**2, 0.0)) * np.array([-B[1], B[0]]) / d
    crank, coupler = np.arctan2(A[1], A[0]), np.arctan2(B[1] - A[1], B[0] - A[0])
    return np.array([crank, coupler - crank, psi - coupler, -psi])


def rocker_potential(psi, mode):
    """Hand potential (J): spring 2/2 (crank - pi)^2 (crank wrapped to (0, 2 pi)), weights of the
    crank (1 kg at 0.5 m along it), coupler (3.5 kg at its middle), rocker (3 kg at its middle)."""
    crank, rel_a, _, _ = rocker_row(psi, mode)
    coupler = crank + rel_a
    A = np.array([np.cos(crank), np.sin(crank)])
    y_crank = 0.5 * A[1]
    y_coupler = A[1] + 1.75 * np.sin(coupler)
    y_rocker = 1.5 * np.sin(psi)
    return 1.0 * (np.mod(crank, 2 * np.pi) - np.pi) ** 2 + 9.81 * (1.0 * y_crank + 3.5 * y_coupler + 3.0 * y_rocker)


def test_a_sign_change_across_a_dead_centre_is_no_rest_position():
    """Rows 0.05 rad and 1e-6 rad short of the dead centre on the two modes: the holding torque
    (checked against central differences of the hand potential: +93 and -1.2e4 N m) changes
    sign, and no rest position lies between (the mode of the first row keeps its sign all the
    way to the dead centre). The bracket collapses on the second row's input, 1e-6 rad from the
    dead centre on the first row's mode, where the holding torque is 1.2e4 N m but the stiffness
    6e9 N m/rad: the Newton correction, 2e-6 rad (twice the distance), is below sqrt(tol)
    (1 + |a|) = 2.8e-5 rad, and the kinematic condition (3.7e3) is far below SINGULAR_CONDITION.
    main reported it converged; it is not (the test fails when settled's torque check is
    removed: checked by mutation)."""
    from linkcli.api import load
    from linkcli.core import kinetostatics as ks
    from linkcli.core.loop_closure import SINGULAR_CONDITION
    from linkcli.core.sweep import configuration_at

    mech = load(ROCKER_FILE).compiled
    assert mech.q_names == ("crank_pin", "A", "B", "O4")
    psis = PSI_DEAD + np.array([0.05, 1e-6])
    rows = np.array([rocker_row(psis[0], -1), rocker_row(psis[1], 1)])
    tau = ks.reduced_stiffness(mech, rows).holding[:, 0]
    # dV/d(O4) = -dV/dpsi; step h = 1e-8 rad stays on the mode 1e-6 rad (= d) from the dead
    # centre, where the torque goes as d^-1/2: truncation ~ 3/8 (h/d)^2 = 4e-5 (measured 1.3e-5;
    # 3e-9 at the first row), round-off ~1e-16 * 100 J / h = 1e-6 N m: rtol 1e-4
    h = 1e-8
    hand = [-(rocker_potential(p + h, m) - rocker_potential(p - h, m)) / (2 * h)
            for p, m in zip(psis, (-1, 1), strict=True)]
    np.testing.assert_allclose(tau, hand, rtol=1e-4)
    assert tau[0] > 0 > tau[1]
    # the first row's mode keeps its sign up to the dead centre: no rest position in the bracket
    on_mode = [-(rocker_potential(p + h, -1) - rocker_potential(p - h, -1)) / (2 * h)
               for p in PSI_DEAD + np.geomspace(1e-6, 0.05, 60)]
    assert min(on_mode) > 0
    eqs = ks.find_equilibria(mech, rows[:, 3:], rows, np.ones(2, dtype=bool))
    assert len(eqs) == 1
    e = eqs[0]
    assert not e.converged and e.reason, e
    assert abs(e.holding[0]) > 0.5 * abs(tau[1])  # it stalled at the dead centre, holding ~1e4 N m
    # the condition alone would not have caught it
    assert configuration_at(mech, e.a, e.q).condition < SINGULAR_CONDITION
