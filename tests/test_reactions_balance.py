"""Joint reactions and driver loads are counted once (tryout 6): a revolute joint transmits no
moment about its axis, driven or not; a motion driver's torque is reported in its own column
only, like a torque driver's load (:mod:`linkcli.core.dynamics.reactions`). A hand free-body
balance of every link of the slider-crank -- joint reactions (plus on the child, minus on the
parent) + driver torques about the driven axis (plus on the child, minus on the parent) +
weights = m a, and the moments about each CG = Izz alpha -- closes the same way for a
motion-driven and a torque-driven crank, with accelerations by central differences of the saved
motion (independent of the dynamics code)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from test_dynamics_support import planar_balance_residuals

from linkcli.compile import compile_mechanism
from linkcli.core import kinetostatics as ks
from linkcli.core.assembly import assemble
from linkcli.core.dynamics import simulate
from linkcli.core.forward import tree_kinematics
from linkcli.core.velocity import joint_rates
from linkcli.io.loader import load_mechanism

SLIDER_CRANK = Path(__file__).resolve().parent.parent / "mechanisms" / "slider_crank.yaml"
MOTOR = "motor: {joint: crank_pin, type: constant_speed, speed: 360}"


def slider_crank(tmp_path: Path, torque: bool):
    text = SLIDER_CRANK.read_text(encoding="utf-8")
    assert MOTOR in text
    if torque:
        text = text.replace(MOTOR, "motor: {joint: crank_pin, kind: torque, type: constant, value: 5}")
    path = tmp_path / f"sc_{torque}.yaml"
    path.write_text(text, encoding="utf-8")
    mech = compile_mechanism(load_mechanism(path).model)
    start = assemble(mech, np.radians([45.0]), mech.q_init)
    qd0 = np.zeros(mech.n_q) if torque else joint_rates(mech, start.q, np.array([2 * math.pi]))
    return mech, start.q, qd0


@pytest.mark.parametrize("torque", [False, True], ids=["motion-driven", "torque-driven"])
def test_the_free_body_balance_of_every_link_counts_reactions_and_driver_loads_once(tmp_path, torque):
    mech, q0, qd0 = slider_crank(tmp_path, torque)
    r = simulate(mech, q0, qd0, t_end=0.3, dt=1e-4, every=10)
    assert r.status == "ok", r.message
    pin = mech.joint_names.index("crank_pin")
    tau = r.driver_force[:, 0]
    assert np.abs(tau).max() > 1.0  # the driver carries a real load (N m) in both cases
    # an ideal revolute transmits no moment about its axis: 0 up to round-off of the ~50 N m loads
    assert np.abs(r.reaction_moment[:, pin, 2]).max() <= 1e-9 * np.abs(tau).max()
    # the motor turns the crank (about z) and pushes back on the ground
    f_res, m_res, force, moment = planar_balance_residuals(mech, r, [(pin, tau)])
    # second differences at a saved step of 1e-3 s: error ~ dt^2 / 12 times the 4th derivative, ~1e-5
    # of the loads (the crank turns at ~1 rev/s); the integrator's own O(dt^2) error at dt = 1e-4 is
    # smaller still. Counting the motor twice (in crank_pin.Mz too) misses by |tau|, 1e-1 of the moments.
    assert np.abs(f_res).max() < 1e-3 * np.abs(force[:, 1:]).max()
    assert np.abs(m_res).max() < 1e-3 * np.abs(moment[:, 1:]).max()


def test_forces_reports_no_moment_about_the_driven_pin_and_the_motor_torque_once(tmp_path):
    mech, q0, _ = slider_crank(tmp_path, torque=False)
    q = assemble(mech, np.radians([30.0]), q0).q[None]
    fr = ks.inverse_dynamics(mech, q, np.zeros_like(q), np.zeros_like(q))  # kinetostatics: gravity only
    pins = [j for j, name in enumerate(mech.joint_names) if name in ("crank_pin", "A", "B")]
    tau = fr.driver_force[0, 0]
    assert abs(tau) > 1.0  # the motor holds the crank against gravity (N m)
    assert np.abs(fr.reaction_moment_local[:, pins, 2]).max() <= 1e-9 * abs(tau)
    # the holding torque from the static balance of the crank about its pivot, by hand: the pin A
    # force on the crank (minus A's reaction on the coupler) and the crank's weight, about O2
    A = mech.joint_names.index("A")
    crank = mech.link_names.index("crank")
    Tw = tree_kinematics(mech, q[0]).T_world_link
    a = (Tw[crank] @ mech.T_parent_joint[A])[:2, 3]  # pin A on the crank (the pivot O2 is the origin)
    cg = (Tw[crank] @ np.r_[mech.link_cg[crank], 1.0])[:2]
    F_A = -fr.reaction_force[0, A, :2]  # on the crank (the parent of A)
    w = mech.link_mass[crank] * mech.gravity[:2]
    holding = -((a[0] * F_A[1] - a[1] * F_A[0]) + (cg[0] * w[1] - cg[1] * w[0]))
    assert tau == pytest.approx(holding, rel=1e-9)  # a sum of a few products: round-off
