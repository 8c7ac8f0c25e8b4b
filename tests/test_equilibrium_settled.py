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


def hand_potential(x, s):
    return sum(0.5 * k * (np.hypot(x - ax * s, ay * s) - L * s) ** 2 for ax, ay, k, L in SPRINGS)


def hand_rest(s):
    """Root of dV/dx (central differences, step 1e-5 s: truncation O(1e-10 s^2) relative)."""
    h = 1e-5 * s
    return brentq(lambda x: (hand_potential(x + h, s) - hand_potential(x - h, s)) / (2 * h),
                  -1.0 * s, 2.0 * s, xtol=1e-14 * s)


def _slider(tmp_path, s):
    from linkcli.api import load
    from linkcli.core.kinetostatics import freed_mechanism

    (a1x, a1y, k1, l1), (a2x, a2y, k2, l2) = SPRINGS
    f = tmp_path / f"slider_{s:g}.yaml"
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
        xs = np.array([x0 - d, x0 + d])
        eqs = find_equilibria(free, xs[:, None], _rows(free, xs), np.ones(2, dtype=bool))
        assert len(eqs) == 1, eqs
        e = eqs[0]
        size = 3.0 * s  # the largest frame offset: anchor A2 at x = 3 s
        assert e.converged, e.reason
        assert abs(e.a[0] - x0) <= RTOL_REST * size, (s, e.a[0], x0)
        results.append((e.converged, (e.a[0] - x0) / size, e.stability))
    assert len({r[0] for r in results}) == 1 and len({r[2] for r in results}) == 1
