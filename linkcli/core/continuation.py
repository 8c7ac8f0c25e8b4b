"""The decisions of the sweep continuation, written once.

The one continuation algorithm lives in :mod:`linkcli.core.sweep_kernel` (scalar loops, run
compiled with numba or interpreted as plain Python; :mod:`linkcli.core.sweep` routes to it).
Its limits and acceptance tests live here, as plain arithmetic on scalars (which also works
elementwise on numpy arrays), compiled into the kernel with its own policy. Nothing else may
restate these numbers (tests/test_kinematics_fast.py checks it).

Distances are max-norms over the joint variables (rad for rotations, m for translations, the
units of ``q``).

numba caches a compiled kernel per source file and does not notice edits to this file: after
changing it, delete ``linkcli/core/__pycache__`` (see jit.py's caching caveat).
"""

from __future__ import annotations

#: step bisections of one continuation step (the smallest step is 2**-MAX_DEPTH of the first)
MAX_DEPTH = 10
#: corrector iterations per point
MAX_ITER = 50


def corrector_left_branch(dev, moved):
    """A continuation step from q0 jumped off its branch: the corrector moved the prediction
    q_pred by ``dev = max|q1 - q_pred|``, more than 0.3 of the predictor's own step
    ``moved = max|q_pred - q0|`` (plus 1e-8 for steps that barely move). On the branch the
    corrector removes only the predictor's error, which is O(step^2): a fraction of the step
    for the steps the bisection reaches."""
    return dev > 0.3 * moved + 1e-8


def det_sign_flipped(det0, det1):
    """det J_p has opposite signs (-1, 0, 1) at the two ends of a continuation step: a singular
    configuration lies between, or the corrector landed on the other assembly mode (close in q
    near a change point, where the distance test above can pass). The step is then bisected: a
    real crossing survives down to the smallest step (where the distance test separates modes
    a finite distance apart), a jump does not."""
    return det0 * det1 < 0


def fine_point_left_branch(dev, span):
    """A point between two accepted coarse points, solved from its Hermite guess, did not stay
    on the guessed branch: it converged ``dev = max|q - guess|`` away, more than a quarter of
    the segment's own change ``span = max|q_b - q_a|`` (plus 1e-6). The guess takes the input
    as linear in the index between the coarse points, so on a path that reverses inside a
    segment it can be far off, and the corrector may then land on the same assembly mode with
    joint angles whole turns away, which no det J_p test can see
    (tests/reference/test_fourbar_closed_form.py, reversing paths)."""
    return dev > 0.25 * span + 1e-6


def det_sign_left_branch(det, det_a, det_b):
    """A point between coarse points a and b whose det J_p sign (-1, 0, 1) differs from both
    ends, which agree (no singular crossing between them), is on the other assembly mode,
    however close to its guess it landed (near a change point the modes are close in q)."""
    return (det_a == det_b) & (det != det_a)


def hermite_weights(t):
    """Cubic Hermite basis (h00, h10, h01, h11) at fraction t of a segment:
    ``q(t) = h00 q_a + h10 m_a + h01 q_b + h11 m_b`` with end tangents m = N(q) dQ."""
    t2 = t * t
    t3 = t2 * t
    return 2.0 * t3 - 3.0 * t2 + 1.0, t3 - 2.0 * t2 + t, -2.0 * t3 + 3.0 * t2, t3 - t2
