"""A simulation whose time step is unstable or too coarse says so: the spring-step check uses the
step the run takes (``--dt``, fitted to ``t_end``), and a run whose energy balance error
outgrows its energy scale ends ``inaccurate`` (exit 1) with every row kept and the time from
which it went bad (:mod:`linkcli.core.dynamics.accuracy`)."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import numpy as np
import pytest

from linkcli.cli.common import ExitCode
from linkcli.core.dynamics.accuracy import BALANCE_RTOL, EnergyBalanceCheck, reference_energy, whole_steps

SHAKER = Path(__file__).resolve().parent.parent / "mechanisms" / "shaker_pendulum.yaml"
BOB_KG = 1.0  # the lighter moving link the spring joins (the bob, 1 kg; the arm is 0.5 kg but is not joined)


def shaker_with(tmp_path: Path, old: str, new: str) -> Path:
    """The example shaker pendulum with the text ``old`` (present) replaced by ``new``."""
    text = SHAKER.read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / f"shaker_{abs(hash(new))}.yaml"
    path.write_text(text.replace(old, new), encoding="utf-8")
    return path


def shaker(tmp_path: Path, stiffness: str) -> Path:
    """The example shaker pendulum with its spring's stiffness (N/m) replaced."""
    return shaker_with(tmp_path, "stiffness: 200,", f"stiffness: {stiffness},")


def rows(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


# -- the spring-step check uses the step run ---------------------------------------------------
def test_a_dt_option_too_large_for_the_spring_is_flagged(run_cli, tmp_path):
    path = shaker(tmp_path, "2.0e+5")
    omega = math.sqrt(2.0e5 / BOB_KG)  # rad/s, closed form of the spring-mass frequency
    quiet = run_cli("simulate", path, "--t-end", "0.01", "-o", tmp_path / "a.csv")
    assert "is too stiff for the time step" not in quiet.stderr  # the file's dt 1e-3: omega dt = 0.447 < 2
    r = run_cli("simulate", path, "--dt", "0.01", "--t-end", "0.1", "-o", tmp_path / "b.csv")
    assert "springs.tie.stiffness: spring 'tie' is too stiff" in r.stderr
    assert f"omega*dt = {omega * 0.01:.3g}" in r.stderr and "dt = 0.01 s from the dt requested (--dt)" in r.stderr
    assert r.stderr.splitlines()[0].startswith(f"{path}:39:")  # the spring's line in the file


def test_a_dt_option_small_enough_silences_the_files_warning(run_cli, tmp_path):
    path = shaker(tmp_path, "1.0e+7")  # omega = 3162 rad/s: the file's dt 1e-3 is unstable
    r = run_cli("simulate", path, "--t-end", "0.002", "-o", tmp_path / "a.csv")
    assert "omega*dt = 3.16" in r.stderr and "dt = 0.001 s from analysis.simulate.dt" in r.stderr
    r = run_cli("simulate", path, "--dt", "1e-5", "--t-end", "0.002", "-o", tmp_path / "b.csv")
    assert r.exit_code == 0, r.output
    assert "is too stiff for the time step" not in r.stderr


def test_the_check_uses_the_step_fitted_to_t_end(run_cli, tmp_path):
    # omega = sqrt(4.1e6) = 2024.8 rad/s: omega * 1e-3 = 2.02 > 2 (unstable) but the run takes
    # 3 steps of 0.0025/3 = 8.33e-4 s (omega h = 1.69 < 2): the step run is stable
    path = shaker(tmp_path, "4.1e+6")
    r = run_cli("simulate", path, "--dt", "1e-3", "--t-end", "0.0025", "-o", tmp_path / "a.csv")
    assert "is too stiff for the time step" not in r.stderr, r.stderr
    assert ("t_end = 0.0025 s is not a whole number of steps dt = 0.001 s: the run takes 3 steps of "
            f"{0.0025 / 3:.6g} s") in r.stderr
    r = run_cli("simulate", path, "--dt", "1e-3", "--t-end", "0.003", "-o", tmp_path / "b.csv")
    assert "omega*dt = 2.02" in r.stderr and "not a whole number" not in r.stderr


# -- the energy balance verdict ----------------------------------------------------------------------
def run_json(run_cli, path, tmp_path, *args) -> tuple:
    out = tmp_path / f"run{len(list(tmp_path.iterdir()))}.json"
    r = run_cli("simulate", path, *args, "-o", out)
    return r, json.loads(out.read_text()) if out.exists() else None


def test_an_unstable_step_ends_inaccurate_with_every_row(run_cli, tmp_path):
    path = shaker(tmp_path, "2.0e+5")
    r, coarse = run_json(run_cli, path, tmp_path, "--dt", "0.01", "--t-end", "0.5", "--every", "1")
    assert r.exit_code == ExitCode.ANALYSIS_FAILED, r.output
    s = coarse["metadata"]["summary"]
    assert s["status"] == "inaccurate" and s["steps"] == 50
    assert coarse["n_rows"] == 51  # nothing lost: every saved step is written
    assert s["energy_balance_relative"] > BALANCE_RTOL and s["energy_balance_bad_from_s"] is not None
    assert f"from t = {s['energy_balance_bad_from_s']:.6g} s on" in r.stderr
    assert r.stderr.count("inaccurate") >= 1 and "1 of 1 simulations failed" in r.stderr
    # the truth: a step 100 x smaller (omega dt = 0.045) keeps the balance to ~1e-4 of the scale
    # (second order), and the coarse run's motion is indeed wrong where it was flagged
    r, fine = run_json(run_cli, path, tmp_path, "--dt", "1e-4", "--t-end", "0.5", "--every", "100")
    assert r.exit_code == 0, r.output
    assert fine["metadata"]["summary"]["status"] == "ok"
    assert fine["metadata"]["summary"]["energy_balance_relative"] < 1e-3
    ke_coarse, ke_fine = (np.array(d["data"]["energy.kinetic [J]"]) for d in (coarse, fine))
    assert abs(ke_coarse[-1] - ke_fine[-1]) > 0.5 * ke_fine[-1]


def test_the_balance_error_is_second_order_in_dt(run_cli, tmp_path):
    """The criterion measures the integrator's error: halving dt divides it by ~4."""
    path = shaker(tmp_path, "2.0e+5")
    ratios = []
    for dt in ("4e-4", "2e-4"):
        r, data = run_json(run_cli, path, tmp_path, "--dt", dt, "--t-end", "0.2", "--every", "50")
        assert r.exit_code == 0, r.output
        ratios.append(data["metadata"]["summary"]["energy_balance_relative"])
    assert 3.0 < ratios[0] / ratios[1] < 5.0  # 4 for a second-order method; +-25 % for higher-order terms


# -- the criterion against a hand-written integrator -------------------------------------------------
def leapfrog(omega_h: float, n: int) -> tuple[np.ndarray, ...]:
    """Stoermer-Verlet on x'' = -x (omega = 1, m = 1, k = 1) from x = 1, v = 0, written without
    linkcli: times, kinetic and potential energy (J) at the full steps."""
    h = omega_h
    x, v = np.empty(n + 1), np.empty(n + 1)
    x[0], v[0] = 1.0, 0.0
    for i in range(n):
        vh = v[i] - 0.5 * h * x[i]
        x[i + 1] = x[i] + h * vh
        v[i + 1] = vh - 0.5 * h * x[i + 1]
    return h * np.arange(n + 1), 0.5 * v**2, 0.5 * x**2


def check_of(t, ke, pe, chunk: int | None = None, datum: float = 0.0) -> EnergyBalanceCheck:
    c = EnergyBalanceCheck()
    pe = pe + datum
    total = ke + pe
    balance = total - total[0]
    zero = np.zeros_like(t)
    step = chunk or len(t)
    for a in range(0, len(t), step):
        s = slice(a, a + step)
        c.update(t[s], ke[s], pe[s], total[s], (zero[s], zero[s], zero[s]), balance[s])
    return c


def test_a_stable_step_passes_and_its_error_is_second_order():
    fine, finer = check_of(*leapfrog(0.1, 2000)), check_of(*leapfrog(0.05, 4000))
    assert fine.ok and finer.ok
    # Verlet conserves E_h = v^2/2 + (1 - h^2/4) x^2/2 exactly on the oscillator, so
    # E - E_0 = h^2 (x^2 - 1) / 8 (omega = 1), at most h^2/8 at x = 0, where the scale
    # KE + |PE - PE_0| is its largest, 2 E_0 = 1: ratio h^2 / 8; 1 % for the sampling of x = 0
    assert fine.worst == pytest.approx(0.1**2 / 8, rel=0.01)
    assert fine.worst / finer.worst == pytest.approx(4.0, rel=0.05)


def test_an_unstable_step_is_flagged_before_its_energy_has_doubled():
    t, ke, pe = leapfrog(2.2, 60)  # beyond the linear stability limit omega h = 2
    check = check_of(t, ke, pe)
    assert not check.ok and check.worst > 0.9
    doubled = t[np.argmax(ke + pe > 2 * (ke[0] + pe[0]))]
    assert check.bad_from <= doubled


def test_the_verdict_does_not_depend_on_chunks_or_on_the_potentials_datum():
    t, ke, pe = leapfrog(1.9, 300)
    whole = check_of(t, ke, pe)
    for chunk in (1, 7, 64):
        c = check_of(t, ke, pe, chunk)
        assert (c.bad_from, c.scale) == (whole.bad_from, whole.scale)
        assert c.worst == pytest.approx(whole.worst, rel=1e-12)
    shifted = check_of(t, ke, pe, datum=1e3)  # a mechanism 1e3 J above the datum: same verdict
    assert shifted.bad_from == whole.bad_from and shifted.scale == pytest.approx(whole.scale, rel=1e-12)


def test_nothing_moving_is_not_flagged_by_round_off():
    t = np.linspace(0.0, 1.0, 11)
    pe = np.full(11, 5e4)  # at rest, far above the datum: round-off ~1e-11 J in the sums
    ke = np.zeros(11)
    c = EnergyBalanceCheck()
    c.update(t, ke, pe, ke + pe, (ke, ke, ke), np.r_[0.0, np.full(10, 3e-11)])
    assert c.ok


def test_whole_steps():
    assert whole_steps(0.0105, 0.001) == (11, pytest.approx(0.0105 / 11, rel=1e-15))
    assert whole_steps(2.0, 1e-3) == (2000, pytest.approx(1e-3, rel=1e-15))
    assert whole_steps(0.001, 1.0)[0] == 1


def test_noise_of_a_mechanism_at_rest_without_gravity_is_not_flagged():
    """No gravity, no springs (PE = 0), nothing moving: a kinetic energy of 1e-60 J is round-off,
    far below the mechanism's own energy unit M (L/T)^2 (1 kg, 1 m, 1 s: 1 J)."""
    t = np.linspace(0.0, 1.0, 11)
    ke = np.r_[0.0, np.full(10, 1e-60)]
    zero = np.zeros(11)
    c = EnergyBalanceCheck(reference_J=reference_energy(1.0, 1.0, 1.0))
    c.update(t, ke, zero, ke, (zero, zero, zero), ke)
    assert c.ok
    c = EnergyBalanceCheck()  # without the reference the same noise is 100 % of its own scale
    c.update(t, ke, zero, ke, (zero, zero, zero), ke)
    assert not c.ok
    c = EnergyBalanceCheck(reference_J=reference_energy(0.0, 1.0, 1.0))  # no mass: not judged
    c.update(t, ke, zero, ke, (zero, zero, zero), ke)
    assert c.ok and c.worst == 0.0


# -- a damper too strong for the step (the balance closes; the forces ring) -----------------------
def shaker_damper(tmp_path: Path, damping: str) -> Path:
    """The example shaker pendulum with its damper's coefficient (N s/m) replaced."""
    return shaker_with(tmp_path, "damping: 2.0}", f"damping: {damping}}}")


def test_the_damper_check_is_the_closed_form_c_h_over_m():
    from linkcli.io.loader import load_mechanism
    from linkcli.model.checks import DAMPING_STEP_LIMIT, damper_step_problems, damper_step_ratio

    model = load_mechanism(SHAKER).model
    drag = model.dampers["drag"]
    for c in (2.0e4, 3.0, 150.0):
        e = drag.model_copy(update={"damping": c})
        for h in (1e-2, 1e-3, 1e-5):
            ratio = damper_step_ratio(model, e, h)
            assert ratio is not None and ratio[0] == pytest.approx(c * h / BOB_KG, rel=1e-12)
    # warned exactly beyond c h / m = 2 (the trapezoidal update (1 - x/2)/(1 + x/2) < 0)
    strong = model.model_copy(update={"dampers": {"drag": drag.model_copy(update={"damping": 2.0e4})}})
    assert damper_step_problems(strong, 1.01 * DAMPING_STEP_LIMIT * BOB_KG / 2.0e4, "t")
    assert not damper_step_problems(strong, 0.99 * DAMPING_STEP_LIMIT * BOB_KG / 2.0e4, "t")


def test_a_damper_too_strong_for_the_step_ends_inaccurate_and_its_torques_are_wrong(run_cli, tmp_path):
    """The reviewer's case: c h / m = 2e4 * 1e-2 / 1 = 200: v+ = (1 - 100)/(1 + 100) v- rings,
    the balance still closes (0.004 of S) but the driver torque alternates +-235 N m against
    about -1..-3 N m at a step 400 x smaller (c h / m = 0.5, no ringing)."""
    path = shaker_damper(tmp_path, "2.0e+4")
    r, coarse = run_json(run_cli, path, tmp_path, "--dt", "0.01", "--t-end", "0.1", "--every", "1")
    assert r.exit_code == ExitCode.ANALYSIS_FAILED, r.output
    s = coarse["metadata"]["summary"]
    assert s["status"] == "inaccurate" and s["energy_balance_relative"] < BALANCE_RTOL  # the balance is blind
    assert "dampers.drag.damping: damper 'drag' is too strong for the time step: c*dt/m = 200 > 2" in r.stderr
    assert r.stderr.splitlines()[0].startswith(f"{path}:41:")  # the damper's line in the file
    assert "Use dt < 0.0001 s" in r.stderr
    r, fine = run_json(run_cli, path, tmp_path, "--dt", "2.5e-5", "--t-end", "0.1", "--every", "400")
    assert r.exit_code == 0, r.output
    assert "too strong for the time step" not in r.stderr
    tc, tf = (np.array(d["data"]["rock.torque [N m]"]) for d in (coarse, fine))
    assert len(tc) == len(tf) == 11
    # the fine run's torque stays within a few N m; the coarse one is off by ~100 x that
    assert np.max(np.abs(tf[1:])) < 10.0
    assert np.max(np.abs(tc[1:] - tf[1:])) > 50.0


# -- batch and the Python API judge the step they run, not the file's --------------------------------
def test_a_batch_strict_job_is_judged_at_its_own_dt(tmp_path, runner):
    """k = 1e7 N/m on the 1 kg bob: omega = 3162 rad/s, the file's dt 1e-3 is unstable (omega dt
    = 3.16) but the job's 1e-5 is not (0.032): the strict job runs; a job whose dt is too coarse
    is warned (loose) and refused (strict), naming the job's dt."""
    from linkcli.cli.app import app

    path = shaker(tmp_path, "1.0e+7")
    jobs = (f"jobs:\n  fine: {{files: {path.name}, analysis: simulate, strict: true, "
            "options: {dt: 1.0e-5, t_end: 0.002}}\n"
            f"  coarse: {{files: {path.name}, analysis: simulate, options: {{dt: 2.0e-3, t_end: 0.004}}}}\n"
            f"  coarse_strict: {{files: {path.name}, analysis: simulate, strict: true, "
            "options: {dt: 2.0e-3, t_end: 0.004}}\n")
    (tmp_path / "jobs.yaml").write_text(jobs, encoding="utf-8")
    runner.invoke(app, ["batch", str(tmp_path / "jobs.yaml"), "--out-dir", str(tmp_path / "out")])
    report = json.loads((tmp_path / "out" / "summary.json").read_text(encoding="utf-8"))
    status = {r["job"]: r for r in report["jobs"]}
    assert status["fine"]["status"] == "passed", status["fine"]
    text = json.dumps(status["coarse"])
    assert f"omega*dt = {math.sqrt(1e7) * 2e-3:.3g}" in text and "the job's dt (options.dt)" in text
    assert status["coarse_strict"]["status"] == "invalid"
    assert "the job's dt (options.dt)" in json.dumps(status["coarse_strict"])


def test_the_python_api_warns_at_the_step_it_runs(tmp_path):
    import linkcli

    mech = linkcli.load(shaker_damper(tmp_path, "2.0e+4"))
    out = mech.simulate(dt=1e-2, t_end=0.03)
    assert any("c*dt/m = 200 > 2" in m and "dt=" in m for m in out.messages), out.messages
    assert out.n_failed == 1  # ends inaccurate
    quiet = mech.simulate(dt=2.5e-5, t_end=0.001)
    assert not any("too strong for the time step" in m for m in quiet.messages)


def test_the_scale_counts_the_work_of_dampers_drivers_and_loads():
    """A damped oscillator (m = 1 kg, k = 1 N/m, c = 0.2 N s/m) held in steady state
    x = A sin t by a driver, written by hand: KE + |PE - PE_0| stays at most A^2/2, while the
    damper's work -c A^2 (t/2 + sin 2t / 4) and the driver's (its opposite plus the energy
    change) grow without bound, and a constant load's work F x is added and taken by the
    driver too. A balance error of 0.3 A^2/2 planted after 20 periods is 0.3 of KE + |dPE|
    (bad without the works in S) but below BALANCE_RTOL of S with them (the run's energy flow
    is then c A^2 t/2 ~ 6 A^2): the verdict depends on the work terms."""
    m, k, c, A, F = 1.0, 1.0, 0.2, 0.5, 0.3
    t = np.linspace(0.0, 40 * math.pi, 4001)  # 20 periods of omega = 1 rad/s
    x, v = A * np.sin(t), A * np.cos(t)
    ke, pe = 0.5 * m * v**2, 0.5 * k * x**2
    w_damper = -c * A**2 * (t / 2 + np.sin(2 * t) / 4)  # -int c v^2 dt, closed form
    w_load = F * x  # a constant force F along x
    w_driver = (ke + pe) - (ke[0] + pe[0]) - w_damper - w_load  # what keeps the balance closed
    planted = np.where(t > 38 * math.pi, 0.3 * 0.5 * k * A**2, 0.0)  # J
    total = ke + pe + planted  # the balance error enters the total
    balance = total - total[0] - (w_damper + w_driver + w_load)
    assert np.allclose(balance, planted, atol=1e-12)
    with_works = EnergyBalanceCheck()
    with_works.update(t, ke, pe, total, (w_damper, w_driver, w_load), balance)
    flow = ke + np.abs(pe - pe[0]) + np.abs(w_damper) + np.abs(w_driver) + np.abs(w_load)
    expected = np.max(np.abs(balance) / np.maximum.accumulate(flow))  # the docstring's criterion
    assert with_works.ok and with_works.worst == pytest.approx(expected, rel=1e-6)
    assert with_works.scale == pytest.approx(np.max(flow), rel=1e-12)
    # the same run with the work series hidden: the planted error is 0.3 of the energy moved
    blind = EnergyBalanceCheck()
    zero = np.zeros_like(t)
    blind.update(t, ke, pe, total, (zero, zero, zero), balance)
    assert not blind.ok and blind.worst > BALANCE_RTOL


def test_the_summary_residual_is_in_metres_and_says_so(run_cli, tmp_path):
    """The shaker is a mm file: its column is in mm, the summary key and the stderr line in m
    (the column's largest value / 1000)."""
    r, out = run_json(run_cli, SHAKER, tmp_path, "--t-end", "0.05", "--every", "1")
    assert r.exit_code == 0, r.output
    s = out["metadata"]["summary"]
    column = np.array(out["data"]["constraint_residual [mm]"])
    assert column.max() > 0  # a round-off residual to compare (else the check is 0 == 0)
    assert s["max_constraint_residual_m"] == pytest.approx(column.max() / 1000.0, rel=1e-12)
    assert f"max constraint residual {s['max_constraint_residual_m']:.3g} m;" in r.stderr
