"""A mechanism with nothing actuated (a free pendulum) is a design for simulate and forces
--equilibrium, not an actuation mistake (tryout 6, item 9): info says what it is without the
"under-actuated" warning, --equilibrium searches its free hinges as README promises (with a
warning), and simulate's summary says "no drivers" instead of "peak driver load no drivers".

Independent truth: a compound pendulum (rod mass m1 with CG at r1, bob m2 at r2, gravity g
along -y, hinge angle from +x) rests hanging at -90 deg with reduced stiffness
g (m1 r1 + m2 r2) (N m/rad): d^2V/dq^2 of V = -g (m1 r1 + m2 r2) cos(q + 90 deg)."""

from __future__ import annotations

import json

PENDULUM = """\
name: free pendulum
kind: planar
units: {length: m, angle: deg}
gravity: [0, -9.81]
links:
  ground: {frames: {O: [0, 0]}}
  arm:
    mass: 2.0
    cg: [0.25, 0]
    inertia: 0.0417
    frames: {O: [0, 0], tip: [0.5, 0]}
    masses: {bob: {at: tip, mass: 3.0}}
joints:
  pin: {type: revolute, parent: ground.O, child: arm.O}
base: ground
effector: arm.tip
assembly: {pin: -60}
"""


def _file(tmp_path):
    path = tmp_path / "pendulum.yaml"
    path.write_text(PENDULUM, encoding="utf-8")
    return path


def test_equilibrium_of_a_free_pendulum_searches_its_hinge(run_cli, tmp_path):
    r = run_cli("forces", _file(tmp_path), "--equilibrium", "-f", "json")
    assert r.exit_code == 0, r.output
    assert "nothing is actuated: the rest position is sought over the free pin" in r.stderr
    data = json.loads(r.stdout)["data"]
    assert abs(data["pin.q [deg]"][0] + 90.0) < 1e-8  # Newton's tolerance, far below this
    stiffness = 9.81 * (2.0 * 0.25 + 3.0 * 0.5)
    assert abs(data["pin.stiffness [N m/rad]"][0] - stiffness) < 1e-9 * stiffness  # analytic, round-off only
    assert data["stability"] == ["stable"]


def test_info_of_a_free_pendulum_says_free_mechanism_not_under_actuated(run_cli, tmp_path):
    r = run_cli("info", _file(tmp_path))
    assert r.exit_code == 0, r.output
    assert "under-actuated" not in r.stderr and "warning" not in r.stderr
    assert "actuated: none (a free mechanism, mobility 1" in " ".join(r.stdout.split())


def test_simulate_summary_without_drivers():
    from linkcli.cli.commands.simulate import summary_line

    s = {"status": "ok", "steps": 10, "dt": 1e-3, "t_end": 0.01, "wall_time_s": 0.1, "max_constraint_residual_m": 0.0,
         "max_energy_balance_error_J": 0.0, "peak_driver_load": {}}
    assert summary_line(s).endswith("J; no drivers") and "peak driver load" not in summary_line(s)
    s |= {"peak_driver_load": {"motor": 2.5}, "peak_driver_load_unit": {"motor": "N m"}}
    assert summary_line(s).endswith("peak driver load motor 2.5 N m")
