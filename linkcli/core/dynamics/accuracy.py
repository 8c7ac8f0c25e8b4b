"""How a run divides its time and how far its energy balance can be trusted (no kernels: the
analyses import this module before they decide whether to compile the integrator's).

* :func:`whole_steps`: ``t_end`` divided into whole steps of about ``dt`` (the step the run
  actually takes, which the stability and accuracy checks must use).
* :class:`EnergyBalanceCheck`: the energy balance error ``total - total_0 - work`` judged
  against the energy the run moves, row after row, carried over chunks.

Criterion (scale-free): at each saved time t the run's energy scale is

    S(t) = max over rows up to t of  KE + |PE - PE_0| + |W_dampers| + |W_drivers| + |W_loads|

(J; every term independent of the potential's datum and of the frame's origin), and the
balance is bad at t when ``|balance(t)| > BALANCE_RTOL * S(t)`` plus a round-off floor for
runs where nothing moves: :data:`ROUNDOFF_RTOL` times the larger of the largest energy
magnitude seen and the mechanism's own energy unit ``M (L / T)^2`` (:func:`reference_energy`:
its mass moved its size over the run's duration). A mechanism without mass has only the
regularising masses the integrator adds (their energies are noise): it is not judged.
Since ``|balance| <= KE_0 + S``, the ratio is about 1 when the balance error is the energy of
the run (an unstable step feeding energy in). The variational integrator's error is
second order: ``|balance| / S`` measured 1.6e-4 (dt 1e-4) and 1.6e-2 (dt 1e-3) for the shaker
pendulum with a 2e5 N/m spring (omega dt = 0.045 and 0.45), below 1e-4 for the example files,
and 0.9999 at omega dt = 4.5 and 3.2 (unstable). :data:`BALANCE_RTOL` = 0.1 is where the energies,
and so the loads computed from them, are wrong by a tenth: about omega dt = 1.1 by the
second-order scaling, half the linear stability limit (omega dt = 2).

What the criterion cannot see: an error that keeps the balance closed. A damper too strong for
the step (``c h / m > 2``) makes the trapezoidal damping update ``v+ = (1 - ch/2m) / (1 + ch/2m)
v-`` flip the velocity every step: the motion rings, the driver torques and reactions are wrong
by orders of magnitude, yet the damper's discrete work absorbs the difference and the balance
stays at ~1e-3 of S (the shaker pendulum with c = 2e4 N s/m at dt = 1e-2 s). That case is judged
by :func:`linkcli.model.checks.damper_step_problems` from the step and the damped mass instead.
"""

from __future__ import annotations

import math

import numpy as np

#: the balance error, relative to the run's energy scale S(t), beyond which a run's energy
#: balance (and its loads) are no longer trusted (see the module docstring)
BALANCE_RTOL = 0.1
#: the share of the run's energy scale S beyond which the kinetic energy of the regularising
#: masses (:func:`linkcli.core.dynamics.bodies.regularise`, 1e-6 of the mechanism's mass and
#: inertia scale) says a freedom without mass of its own moves about sqrt(1e-4 / 1e-6) = 10 times
#: faster than the mechanism: its motion (a spring ringing on it) is the regularisation's, not
#: physical. A massless link carried along by the mechanism holds ~1e-6 of S.
REGULARISED_SHARE = 1e-4

#: relative round-off allowed in a residual (64 ulps of its largest term): the integrator's Newton
#: tests and the closure tolerance's floor
ROUNDOFF = 64 * 2.22e-16


def closure_tolerance(tol: float, size: float, extent):
    """The run's closure tolerance (m): every constraint row of every row within ``tol`` (the
    relative Newton tolerance) times the mechanism ``size`` (m), plus the round-off of positions
    of magnitude ``extent`` (m, at least the size; a float or an array of them). The integrator
    closes the solved rows to ``tol`` times a step's displacement and checks the dropped ones
    against this."""
    return tol * size + ROUNDOFF * np.maximum(size, extent)


#: float64 round-off of energies summed over bodies and accumulated over steps: far above it,
#: far below any meaningful error (relative to the largest |KE|, |PE|, |total| of the run)
ROUNDOFF_RTOL = 1e-9


def reference_energy(total_mass: float, size: float, duration: float) -> float:
    """``M (L / T)^2`` (J): the kinetic energy of the mechanism's mass ``total_mass`` (kg)
    moving its size ``size`` (m) in the run's duration ``duration`` (s); inf for a mechanism
    without mass (nothing to judge: see the module docstring)."""
    if not total_mass > 0:
        return math.inf
    return total_mass * (size / duration) ** 2


def whole_steps(t_end: float, dt: float) -> tuple[int, float]:
    """``(n_steps, h)``: ``t_end`` (s) divided into ``n_steps`` whole steps of ``h = t_end /
    n_steps`` s, the smallest number of steps with ``h <= dt`` (a ``dt`` that divides
    ``t_end`` up to 1e-9 of a step is kept)."""
    n_steps = max(1, int(math.ceil(t_end / dt - 1e-9)))
    return n_steps, t_end / n_steps


class EnergyBalanceCheck:
    """The criterion of the module docstring over a run's rows, given chunk after chunk in
    row order (the result does not depend on the chunking). After the last chunk:
    ``scale`` S (J), ``worst`` the largest ``|balance| / S`` (S with the round-off floor; 0
    when nothing moves), ``bad_from`` the
    first saved time (s) at which the balance is bad (None: never), ``good_until`` the saved
    time before it (None: the first row is bad, or none is) and ``ok``; ``regularised_worst``
    the largest kinetic energy of the regularising masses relative to S (at its row),
    ``regularised_peak`` the largest (J) and
    ``regularised_from`` the first saved time it exceeds :data:`REGULARISED_SHARE` (None: never)."""

    def __init__(self, rtol: float = BALANCE_RTOL, reference_J: float = 0.0) -> None:
        self.rtol = rtol
        self.reference = reference_J  # J, :func:`reference_energy` (inf: nothing is judged)
        self.scale = 0.0  # J, S over the rows so far
        self.magnitude = 0.0  # J, the largest |KE|, |PE|, |total| so far (round-off floor)
        self.worst = 0.0
        self.potential_0: float | None = None
        self.bad_from: float | None = None
        self.good_until: float | None = None
        self._t_last: float | None = None  # s, the last row's time so far
        self.regularised_worst = 0.0
        self.regularised_peak = 0.0  # J
        self.regularised_from: float | None = None

    @property
    def ok(self) -> bool:
        return self.bad_from is None

    def update(self, t: np.ndarray, kinetic: np.ndarray, potential: np.ndarray, total: np.ndarray,
               works: tuple[np.ndarray, ...], balance: np.ndarray, regularising: np.ndarray | None = None) -> None:
        """The next rows: times ``t`` (s), energies and works (J), each (n,); ``regularising``
        the kinetic energy of the regularising masses (J, None: none)."""
        if not len(t):
            return
        if self.potential_0 is None:
            self.potential_0 = float(potential[0])
        flow = kinetic + np.abs(potential - self.potential_0) + sum(np.abs(w) for w in works)
        scale = np.maximum.accumulate(np.maximum(flow, self.scale))
        size = np.maximum.accumulate(np.maximum.reduce([np.abs(kinetic), np.abs(potential), np.abs(total),
                                                        np.full(len(t), self.magnitude)]))
        # |balance| relative to S, the round-off floor added (bad: ratio > rtol); NaN compares
        # False, but a NaN state ends the run in the integrator (status diverged) anyway
        floor = scale + ROUNDOFF_RTOL * np.maximum(size, self.reference) / self.rtol
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(floor > 0, np.abs(balance) / floor, 0.0)
        bad = ratio > self.rtol
        self.worst = float(np.max([self.worst, np.max(ratio)]))
        if self.bad_from is None and bad.any():
            first = int(np.argmax(bad))
            self.bad_from = float(t[first])
            self.good_until = float(t[first - 1]) if first > 0 else self._t_last
        if regularising is not None and np.isfinite(self.reference):
            with np.errstate(divide="ignore", invalid="ignore"):
                share = np.where(floor > 0, regularising / floor, 0.0)
            self.regularised_worst = float(np.max([self.regularised_worst, np.max(share)]))
            self.regularised_peak = float(np.max([self.regularised_peak, np.max(regularising)]))
            if self.regularised_from is None and (share > REGULARISED_SHARE).any():
                self.regularised_from = float(t[int(np.argmax(share > REGULARISED_SHARE))])
        self._t_last = float(t[-1])
        self.scale, self.magnitude = float(scale[-1]), float(size[-1])


def motion_rate_jumps(mech, t_end: float) -> list[tuple[str, float, float]]:
    """``(driver, t, |rate jump|)`` (s; rad/s or m/s) of every time in ``[0, t_end]`` at which
    the prescribed rate of a motion driver of the compiled mechanism ``mech`` jumps
    (:func:`~linkcli.core.profiles.rate_jumps`, the rule the file's warning uses too): a ramp's
    ``t_start``/``t_end``, a table's knots. A linear ramp's rate is 0 at ``t_start`` itself, so a
    ramp from t = 0 jumps in the first step: reported at t = 0. The run must stop the joint within
    one step there (an impulse): its energy balance error at that step is the driver's, not the
    step's."""
    from ..mechanism import DRIVE_MOTION
    from ..profiles import rate_jumps

    return [(name, t, abs(after - before))
            for name, kind, prof in zip(mech.driver_names, mech.driver_kind, mech.driver_profile, strict=True)
            if kind == DRIVE_MOTION
            for t, before, after, _ in rate_jumps(prof) if t <= t_end]
