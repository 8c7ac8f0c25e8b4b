"""W3: planar four-bar dynamics, linkcli's variational integrator against a scipy baseline.

Workload: ground 4, crank 1, coupler 3, rocker 3.5 m; uniform slender links of 1 kg/m (1, 3,
3.5 kg; I = m L^2 / 12 about the mid-length CG); gravity -9.81 in y; released from rest at a
crank angle of 60 deg; 10 s at dt = 1e-3, every step saved.

Baseline: the same bodies in maximal coordinates (x, y, angle per moving link), written here
with numpy: the index-3 DAE reduced to index 1 (constraint accelerations) with Baumgarte
stabilisation (alpha = beta = 10 1/s), integrated by scipy's solve_ivp (RK45, rtol 1e-8,
atol 1e-10) with output at every millisecond.

Scaling (``--scaling``): CPU time per step of planar chains of 5, 10, 20, 40 coupled four-bars
(11 .. 81 bodies, see :func:`fourbar_chain`), the log-log slope of cost against bodies, and the
CPU time of a whole 20 s run of the 81-body chain at dt 1e-3.

Against another checkout (``--baseline DIR``, e.g. a ``git worktree`` of an older commit): W3
stepping only, CPU of ``simulate`` in both, in alternating rounds of one run (:func:`run_against`).

Run: ``python benchmarks/bench_dynamics.py [--repeat 5] [--scaling] [--baseline DIR]``.
Prints a table of CPU times of this process (``time.process_time``, best of ``--repeat``; wall
times swing with the load of a shared machine, CPU times much less), the accuracy of both, and
numba's compile/load times (wall) measured in fresh processes (cold: empty cache directory;
cached: the package's cache).
"""

from __future__ import annotations

import argparse
import os

# One BLAS thread: the set-up's dense factorisations (row selection, consistent velocities) would
# otherwise spread over threads that fight the other processes of a loaded machine for its 2
# cores, which multiplies their CPU time and its noise (measured: 0.5 s instead of 0.08 s for
# the 81-body chain at load ~6).
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from scipy.integrate import solve_ivp

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
W3_FILE = REPO / "tests" / "data" / "dynamics" / "fourbar_w3.yaml"

R1, R2, R3, R4 = 4.0, 1.0, 3.0, 3.5
T_END, DT, CRANK0 = 10.0, 1e-3, np.radians(60.0)


# --- geometry shared by both (closed-form assembly of the start) ---------------------------------
def assemble(t2: float) -> np.ndarray:
    """Absolute link angles (crank, coupler, rocker) of the open assembly at crank angle t2."""
    A = R2 * np.exp(1j * t2)
    e = R1 - A
    L = abs(e)
    x = (R3**2 - R4**2 + L**2) / (2 * L)
    B = A + (x + 1j * np.sqrt(R3**2 - x**2)) * e / L
    return np.array([t2, np.angle(B - A), np.angle(B - R1)])


# --- linkcli ---------------------------------------------------------------------------------------
def run_linkcli(repeat: int, every: int = 1):
    from linkcli.compile import compile_mechanism
    from linkcli.core.dynamics import simulate
    from linkcli.io.loader import load_mechanism

    mech = compile_mechanism(load_mechanism(W3_FILE).model)
    t2, t3, t4 = assemble(CRANK0)
    q0 = np.array([t2, t3 - t2, t4 - t3, t4])  # joints crank_pin, A, B, O4
    simulate(mech, q0, np.zeros(4), t_end=0.01, dt=DT)  # load the compiled kernels
    best, result = np.inf, None
    for _ in range(repeat):
        t = time.process_time()
        result = simulate(mech, q0, np.zeros(4), t_end=T_END, dt=DT, every=every)
        best = min(best, time.process_time() - t)
    return best, result


# --- baseline ---------------------------------------------------------------------------------------
MASS = np.array([R2, R3, R4])
INERTIA = MASS * np.array([R2, R3, R4]) ** 2 / 12
HALF = np.array([R2, R3, R4]) / 2
# (body a, point a along its x from the CG, body b, point b) per pin; body -1 = ground point
PINS = [(-1, np.array([0.0, 0.0]), 0, -HALF[0]), (0, HALF[0], 1, -HALF[1]),
        (1, HALF[1], 2, HALF[2]), (-1, np.array([R1, 0.0]), 2, -HALF[2])]
ALPHA = BETA = 10.0


def _point(z, b, s):
    """Position, d/dangle and centripetal term of the point at distance ``s`` along body b's x
    axis from its CG (``s`` is the world point itself for the ground, b = -1)."""
    if b < 0:
        return s, None, np.zeros(2)
    x, y, th = z[3 * b: 3 * b + 3]
    c, sn = np.cos(th), np.sin(th)
    p = np.array([x + s * c, y + s * sn])
    return p, np.array([-s * sn, s * c]), np.array([s * c, s * sn])


def baseline_rhs(t, state):
    z, v = state[:9], state[9:]
    M = np.diag(np.repeat(MASS, 3) * np.tile([1.0, 1.0, 0.0], 3) + np.repeat(INERTIA, 3) * np.tile([0, 0, 1.0], 3))
    F = np.zeros(9)
    F[1::3] = -9.81 * MASS
    G, g, gamma = np.zeros((8, 9)), np.zeros(8), np.zeros(8)
    for k, (a, sa, b, sb) in enumerate(PINS):
        pa, da, ca = _point(z, a, sa)
        pb, db, cb = _point(z, b, sb)
        rows = slice(2 * k, 2 * k + 2)
        g[rows] = pb - pa
        G[rows, 3 * b: 3 * b + 2] = np.eye(2)
        G[rows, 3 * b + 2] = db
        wb = v[3 * b + 2]
        gamma[rows] = cb * wb**2
        if a >= 0:
            G[rows, 3 * a: 3 * a + 2] = -np.eye(2)
            G[rows, 3 * a + 2] = -da
            gamma[rows] -= ca * v[3 * a + 2] ** 2
    rhs = gamma - 2 * ALPHA * (G @ v) - BETA**2 * g
    K = np.block([[M, G.T], [G, np.zeros((8, 8))]])
    acc = np.linalg.solve(K, np.r_[F, rhs])[:9]
    return np.r_[v, acc]


def baseline_start() -> np.ndarray:
    angles = assemble(CRANK0)
    A = R2 * np.exp(1j * angles[0])
    cg = [HALF[0] * np.exp(1j * angles[0]), A + HALF[1] * np.exp(1j * angles[1]), R1 + HALF[2] * np.exp(1j * angles[2])]
    z = np.ravel([[c.real, c.imag, a] for c, a in zip(cg, angles, strict=True)])
    return np.r_[z, np.zeros(9)]


def baseline_energy(states) -> np.ndarray:
    z, v = states[:, :9], states[:, 9:]
    kin = 0.5 * (np.sum(np.repeat(MASS, 2) * (v[:, [0, 1, 3, 4, 6, 7]] ** 2), axis=1)
                 + np.sum(INERTIA * v[:, 2::3] ** 2, axis=1))
    return kin + 9.81 * np.sum(MASS * z[:, 1::3], axis=1)


def baseline_closure(states) -> np.ndarray:
    out = np.zeros(len(states))
    for i, s in enumerate(states):
        res = [(_point(s, b, sb)[0] - _point(s, a, sa)[0]) for a, sa, b, sb in PINS]
        out[i] = np.abs(res).max()
    return out


def run_baseline(repeat: int = 2):
    t_eval = np.linspace(0.0, T_END, int(round(T_END / DT)) + 1)
    best = np.inf
    for _ in range(repeat):
        t = time.process_time()
        sol = solve_ivp(baseline_rhs, (0.0, T_END), baseline_start(), rtol=1e-8, atol=1e-10, t_eval=t_eval)
        best = min(best, time.process_time() - t)
    return best, sol


# --- numba compile / load times in fresh processes ------------------------------------------------------
PROBE = """
import time, sys
t0 = time.perf_counter()
sys.path.insert(0, {bench!r})
import numpy as np
from bench_dynamics import assemble, W3_FILE
from linkcli.compile import compile_mechanism
from linkcli.io.loader import load_mechanism
from linkcli.core.dynamics import simulate
t1 = time.perf_counter()
mech = compile_mechanism(load_mechanism(W3_FILE).model)
a = assemble(np.radians(60.0))
simulate(mech, np.array([a[0], a[1] - a[0], a[2] - a[1], a[2]]), np.zeros(4), t_end=0.01, dt=1e-3)
print(t1 - t0, time.perf_counter() - t1)
"""


def first_call_times(cold: bool) -> tuple[float, float]:
    """(import time, first simulate call) in a fresh process; ``cold`` uses an empty numba cache."""
    env = dict(os.environ)
    env.pop("LINKCLI_NO_JIT", None)
    with tempfile.TemporaryDirectory() as cache:
        if cold:
            env["NUMBA_CACHE_DIR"] = cache
        out = subprocess.run([sys.executable, "-c", PROBE.format(bench=str(Path(__file__).parent))], env=env,
                             capture_output=True, text=True, check=True, cwd=REPO)
    imp, first = map(float, out.stdout.split())
    return imp, first


# --- W3 against another checkout, alternating rounds in one run -------------------------------------
WORKER = """
import os, sys, time
for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(v, "1")
import numpy as np
from linkcli.compile import compile_mechanism
from linkcli.core.dynamics import simulate
from linkcli.io.loader import load_mechanism
mech = compile_mechanism(load_mechanism({w3!r}).model)
q0 = np.array({q0!r})
simulate(mech, q0, np.zeros(4), t_end=0.01, dt={dt!r})  # load the compiled kernels
print("ready", flush=True)
for line in sys.stdin:
    t_end, repeat = float(line.split()[0]), int(line.split()[1])
    best = np.inf
    for _ in range(repeat):
        t = time.process_time()
        r = simulate(mech, q0, np.zeros(4), t_end=t_end, dt={dt!r}, every=10**9)
        best = min(best, time.process_time() - t)
    print(best, repr(float(r.q[-1, 0])), flush=True)
"""


def run_against(baseline: str, rounds: int, repeat: int) -> None:
    """W3 stepping only (first and last sample saved), CPU of ``simulate`` (best of ``repeat``)
    in this checkout and in ``baseline`` (another checkout, e.g. ``git worktree add /tmp/base
    REV``), each in its own process, alternately for ``rounds`` rounds; also 0.01 s runs (the
    fixed cost of a call: set-up and results) and the per-step cost from the difference."""
    t2, t3, t4 = assemble(CRANK0)
    source = WORKER.format(w3=str(W3_FILE), q0=[t2, t3 - t2, t4 - t3, t4], dt=DT)
    trees = {"this": str(REPO), "baseline": str(Path(baseline).resolve())}
    procs = {}
    for name, root in trees.items():
        env = dict(os.environ, PYTHONPATH=root)
        env.pop("LINKCLI_NO_JIT", None)
        procs[name] = subprocess.Popen([sys.executable, "-c", source], cwd=root, env=env, text=True,
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert procs[name].stdout.readline().strip() == "ready", f"{name}: worker failed to start"

    def ask(name, t_end):
        procs[name].stdin.write(f"{t_end} {repeat}\n")
        procs[name].stdin.flush()
        best, q_end = procs[name].stdout.readline().split()
        return float(best), q_end

    times = {name: {"long": [], "short": [], "q": ""} for name in trees}
    load = [os.getloadavg()[0]]
    for _ in range(rounds):
        for name in trees:
            t, times[name]["q"] = ask(name, T_END)
            times[name]["long"].append(t)
            times[name]["short"].append(ask(name, 0.01)[0])
        load.append(os.getloadavg()[0])
    for p in procs.values():
        p.stdin.close()
        p.wait()
    steps = round(T_END / DT) - round(0.01 / DT)
    print(f"W3 stepping only, CPU of simulate, best of {repeat}, {rounds} alternating rounds; "
          f"load average {min(load):.1f}-{max(load):.1f}")
    print("| checkout | 10 s runs [s] | best [s] | fixed cost of a call [ms] | per step [us] | final crank angle |")
    print("|---|---|---|---|---|---|")
    for name, root in trees.items():
        lo, sh = min(times[name]["long"]), min(times[name]["short"])
        runs = " / ".join(f"{t:.4f}" for t in times[name]["long"])
        print(f"| {name} ({root}) | {runs} | {lo:.4f} | {1e3 * sh:.2f} | {1e6 * (lo - sh) / steps:.3f} | "
              f"{times[name]['q']} |")
    print(f"\nthis / baseline (best of the rounds): {min(times['this']['long']) / min(times['baseline']['long']):.3f}")


# --- scaling: chains of coupled four-bars --------------------------------------------------------
def fourbar_chain(n_loops: int):
    """A planar chain of ``n_loops`` coupled four-bars (2 n + 1 bodies, mobility 1): rockers
    ``r0 .. rn`` (uniform rods 1 m, 1 kg) pinned to the ground at x = 0, 1, ..., n, couplers
    ``c1 .. cn`` (rods 1 m, 1 kg: parallelograms) joining the tips of neighbouring rockers; gravity -9.81 y;
    rocker r0 is the actuated variable (no driver)."""
    from linkcli.compile import compile_mechanism
    from linkcli.io.loader import validate_document

    links = {"ground": {"frames": {f"O{i}": [float(i), 0.0] for i in range(n_loops + 1)}}}
    joints, assembly = {}, {}
    for i in range(n_loops + 1):
        links[f"r{i}"] = {"shape": {"type": "rod", "between": ["O", "T"], "mass": 1.0},
                          "frames": {"O": [0, 0], "T": [1, 0]}}
        joints[f"p{i}"] = {"type": "revolute", "parent": f"ground.O{i}", "child": f"r{i}.O", "actuated": i == 0}
        assembly[f"p{i}"] = 60.0
    for i in range(1, n_loops + 1):
        links[f"c{i}"] = {"shape": {"type": "rod", "between": ["A", "B"], "mass": 1.0},
                          "frames": {"A": [0, 0], "B": [1.0, 0]}}
        joints[f"a{i}"] = {"type": "revolute", "parent": f"r{i - 1}.T", "child": f"c{i}.A"}
        joints[f"b{i}"] = {"type": "revolute", "parent": f"c{i}.B", "child": f"r{i}.T"}
        assembly[f"a{i}"] = -60.0
        assembly[f"b{i}"] = 60.0
    doc = {"name": f"chain of {n_loops} four-bars", "kind": "planar", "units": {"length": "m", "angle": "deg"},
           "gravity": [0, -9.81], "links": links, "joints": joints, "base": "ground", "assembly": assembly}
    return compile_mechanism(validate_document(doc, None, "<chain>").model)


def run_scaling(loops=(5, 10, 20, 40), t_short: float = 0.05, t_long: float = 1.05, dt: float = 1e-3):
    """CPU time per step of the chains: the difference between runs of ``t_long`` and
    ``t_short`` (best of 3 each, every 100th step saved) over the difference in steps, so that
    the one-off set-up (row selection, consistent velocities: dense, O(N^3) but once per run)
    is not counted per step. Returns rows ``(loops, bodies, ms per step, set-up s)`` and the
    log-log slope of cost per step against bodies."""
    from linkcli.core.assembly import assemble
    from linkcli.core.dynamics import simulate

    rows = []
    for n in loops:
        mech = fourbar_chain(n)
        start = assemble(mech, np.array([np.radians(60.0)]), mech.q_init)
        simulate(mech, start.q, np.zeros(mech.n_q), t_end=2 * dt, dt=dt)  # compile/load
        best = {}
        for t_end in (t_short, t_long):
            best[t_end] = np.inf
            for _ in range(3):
                t0 = time.process_time()
                r = simulate(mech, start.q, np.zeros(mech.n_q), t_end=t_end, dt=dt, every=100)
                best[t_end] = min(best[t_end], time.process_time() - t0)
                assert r.status == "ok", r.message
        per_step = (best[t_long] - best[t_short]) / (round(t_long / dt) - round(t_short / dt))
        rows.append((n, mech.n_links - 1, 1e3 * per_step, best[t_short] - per_step * round(t_short / dt)))
    bodies, cost = np.log([r[1] for r in rows]), np.log([r[2] for r in rows])
    return rows, float(np.polyfit(bodies, cost, 1)[0])


def run_long_chain(n_loops: int = 40, t_end: float = 20.0, dt: float = 1e-3) -> tuple[float, str]:
    """CPU time (s) of one whole ``simulate`` of the chain (set-up included, every 100th step
    saved) and its status."""
    from linkcli.core.assembly import assemble
    from linkcli.core.dynamics import simulate

    mech = fourbar_chain(n_loops)
    start = assemble(mech, np.array([np.radians(60.0)]), mech.q_init)
    simulate(mech, start.q, np.zeros(mech.n_q), t_end=2 * dt, dt=dt)  # compile/load
    t0 = time.process_time()
    r = simulate(mech, start.q, np.zeros(mech.n_q), t_end=t_end, dt=dt, every=100)
    return time.process_time() - t0, r.status


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="linkcli runs (best time is reported)")
    parser.add_argument("--no-compile-times", action="store_true", help="skip the fresh-process timings")
    parser.add_argument("--scaling", action="store_true",
                        help="only the scaling run: cost per step of chains of 5 .. 40 coupled four-bars")
    parser.add_argument("--no-long-chain", action="store_true", help="with --scaling: skip the 20 s run of 81 bodies")
    parser.add_argument("--baseline", metavar="DIR",
                        help="only W3 stepping, alternately in this checkout and in DIR (another checkout)")
    parser.add_argument("--rounds", type=int, default=3, help="with --baseline: alternating rounds")
    args = parser.parse_args()
    if args.baseline:
        run_against(args.baseline, args.rounds, max(args.repeat, 7))
        return
    if args.scaling:
        rows, slope = run_scaling()
        print("| four-bar loops | bodies | CPU per step [ms] | set-up per run [s] |")
        print("|---|---|---|---|")
        for n, nb, ms, setup in rows:
            print(f"| {n} | {nb} | {ms:.4f} | {setup:.3f} |")
        print(f"\nlog-log slope of cost per step against bodies: {slope:.2f}")
        if not args.no_long_chain:
            cpu, status = run_long_chain()
            print(f"20 s at dt 1e-3 of the 81-body chain (every 100th step saved), whole run: {cpu:.1f} s of CPU "
                  f"({status})")
        return

    t_lk, res = run_linkcli(args.repeat)
    t_lk10, _ = run_linkcli(args.repeat, every=10)
    t_bl, sol = run_baseline()
    states = sol.y.T
    e_lk, e_bl = res.total - res.total[0], baseline_energy(states) - baseline_energy(states[:1])
    tenth = len(e_lk) // 10
    crank_bl = states[:, 2]

    print("| workload (CPU time) | linkcli [s] | baseline [s] | ratio |")
    print("|---|---|---|---|")
    print(f"| W3 four-bar, 10 s at dt = 1e-3, all 10 001 samples | {t_lk:.3f} | {t_bl:.2f} | {t_bl / t_lk:.0f}x |")
    print(f"| same, every 10th step saved (baseline unchanged) | {t_lk10:.3f} | {t_bl:.2f} | {t_bl / t_lk10:.0f}x |")
    print()
    print("| accuracy | linkcli | baseline |")
    print("|---|---|---|")
    print(f"| loop closure, max over the run [m] | {res.constraint_residual.max():.1e} | "
          f"{baseline_closure(states).max():.1e} |")
    print(f"| energy error, max in first / last tenth [J] | {np.abs(e_lk[:tenth]).max():.1e} / "
          f"{np.abs(e_lk[-tenth:]).max():.1e} | {np.abs(e_bl[:tenth]).max():.1e} / {np.abs(e_bl[-tenth:]).max():.1e} |")
    print(f"| crank angle difference linkcli - baseline, max [rad] | "
          f"{np.abs(res.q[:, 0] - crank_bl).max():.1e} | |")
    print(f"| RHS evaluations / Newton iterations per step (max) | {res.newton_iterations} | {sol.nfev} |")
    if not args.no_compile_times:
        imp_c, first_c = first_call_times(cold=True)
        imp_w, first_w = first_call_times(cold=False)
        print()
        print("| numba (fresh process) | import linkcli + dynamics [s] | first simulate call [s] |")
        print("|---|---|---|")
        print(f"| cold: empty cache, kernels compiled | {imp_c:.2f} | {first_c:.2f} |")
        print(f"| cached (cache=True, a later process) | {imp_w:.2f} | {first_w:.2f} |")


if __name__ == "__main__":
    main()
