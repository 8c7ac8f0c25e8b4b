"""W1 / W2: kinematic sweeps and serial-arm Jacobians, linkcli against hand-written numpy.

W1  four-bar (mechanisms/fourbar.yaml: ground 4, crank 1, coupler 3.5, rocker 3), 3600 crank
    angles over a full turn with branch tracking: ``solve_sweep`` (public API: the one sweep
    kernel, compiled, and the same kernel interpreted; the default path in a process after
    warm-up, where the compiled kernel is loaded) against a vectorised numpy closed form of
    the same sweep (circle intersection): (a) the joint angles, i.e. the same output as the
    sweep, (b) only the coupler-rocker pin position (the leanest closed form). "+ frame
    positions": the sweep plus what ``analyses.solve`` computes from it for its pose columns
    (``forward.planar_link_poses``, ``planar_effector_pose``, ``planar_frame_positions``);
    "run_solve": the public function whole (sweep, pose columns, statuses, events, limits, the
    result table in memory), the same 3600 crank angles.
SPATIAL  mechanisms/rssr_spatial.yaml (one RSSR loop written as a spatial file: 6 constraint
    rows, 7 passive variables), 721 and 3600 input angles over a full turn: the kernel compiled
    and interpreted, and with ``--baseline-repo DIR`` (a checkout from before issue 11, e.g.
    ``git worktree add /tmp/base be14d3c``) that checkout's numpy continuation
    (``LINKCLI_SWEEP=numpy``) timed the same way in a subprocess; and the peak RSS of a
    10^6-point spatial sweep (fresh process, ``--memory``).
W2  PUMA 560 (standard DH) effector pose and 6 x 6 geometric Jacobian at 10,000 random
    configurations: linkcli (a) one tree pass with ``jacobian_links=[effector link]`` plus the
    tool-point Jacobian, (b) the public ``effector_pose(link_poses)`` + ``geometric_jacobian``
    (two tree passes, every link's Jacobian), against a hand-written vectorised numpy DH
    implementation (cos/sin arrays, 6 DH matrices, matmul chain, z axes and origins with cross
    products). Results are checked equal to 1e-12 first.
E2E ``python -m linkcli solve mechanisms/fourbar.yaml -o <tmp>.csv`` (the file's 360-point sweep,
    interpreter start included), if the command exists.
JIT numba's compile (empty cache) and cached load of the sweep kernel, in fresh processes, and
    the interpreted kernel's cost per point: the size where loading the compiled kernel pays.

Times are medians of repeated runs in this process, linkcli and baseline interleaved, after a
warm-up (so JIT compilation is excluded; it is reported separately). Run from anywhere:
``python benchmarks/bench_kinematics.py [--repeat 30] [--no-jit-timing] [--baseline-repo DIR] [--memory]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from linkcli.analyses.inputs import Sweep  # noqa: E402
from linkcli.analyses.solve import SolveRequest, run_solve  # noqa: E402
from linkcli.compile import compile_mechanism  # noqa: E402
from linkcli.core import forward, sweep  # noqa: E402
from linkcli.core.jacobian import _point_jacobian, geometric_jacobian  # noqa: E402
from linkcli.io.loader import load_mechanism  # noqa: E402

FOURBAR = REPO / "mechanisms" / "fourbar.yaml"
PUMA = next(p for p in (REPO / "mechanisms" / "puma560.yaml", REPO / "tests" / "data" / "perf" / "puma560.yaml")
            if p.exists())


def load(path):
    return compile_mechanism(load_mechanism(str(path)).model)


def medians(fns: dict, repeat: int) -> dict:
    """Median wall time (s) of each callable, the callables interleaved round-robin; the median
    CPU time of this process (``time.process_time``) goes to :data:`CPU`."""
    for f in fns.values():  # warm-up
        f()
    times = {k: [] for k in fns}
    cpu = {k: [] for k in fns}
    for _ in range(repeat):
        for k, f in fns.items():
            c = time.process_time()
            t = time.perf_counter()
            f()
            times[k].append(time.perf_counter() - t)
            cpu[k].append(time.process_time() - c)
    CPU.update({k: float(np.median(v)) for k, v in cpu.items()})
    return {k: float(np.median(v)) for k, v in times.items()}


#: median CPU time (s) of each callable of the :func:`medians` calls. On a machine loaded above
#: its core count a call of a few ms is nearly always preempted while a 0.2 ms baseline mostly
#: is not, which biases ratios of wall times against the longer call; CPU time counts only the
#: work (all threads of this process: BLAS helpers included). Both ratios are printed.
CPU: dict = {}


# --- W1 ---------------------------------------------------------------------------------------------
D, A_, B_, C_ = 4.0, 1.0, 3.5, 3.0  # ground, crank, coupler, rocker


def closed_form_angles(theta):
    """Joint variables (coupler relative to crank, rocker relative to coupler) of the four-bar
    at crank angles theta, by circle intersection (the branch of fourbar.yaml's assembly)."""
    ct, st = np.cos(theta), np.sin(theta)
    ax, ay = A_ * ct, A_ * st
    vx, vy = D - ax, -ay
    L2 = vx * vx + vy * vy
    xl = (B_ * B_ - C_ * C_ + L2) / (2 * L2)
    hl = np.sqrt(B_ * B_ / L2 - xl * xl)
    bx, by = ax + xl * vx - hl * vy, ay + xl * vy + hl * vx
    coupler = np.arctan2(by - ay, bx - ax)
    rocker = np.arctan2(by, bx - D)
    return coupler - theta, rocker - coupler


def closed_form_pin(theta):
    """Only the coupler-rocker pin B (x, y) by circle intersection."""
    ct, st = np.cos(theta), np.sin(theta)
    vx, vy = D - A_ * ct, -A_ * st
    L2 = vx * vx + vy * vy
    xl = (B_ * B_ - C_ * C_ + L2) / (2 * L2)
    hl = np.sqrt(B_ * B_ / L2 - xl * xl)
    return A_ * ct + xl * vx - hl * vy, A_ * st + xl * vy + hl * vx


def pylinkage_fourbar(n: int):
    """pylinkage's numba path (``Linkage.step_fast``) for the same four-bar and coupler point P
    over n crank steps of 2 pi / n (starting one step after 0), or None when not installed."""
    try:
        from pylinkage import Crank, FixedDyad, Ground, RRRDyad
        from pylinkage.simulation import Linkage
    except ImportError:
        return None
    O2, O4 = Ground(0.0, 0.0, name="O2"), Ground(D, 0.0, name="O4")
    crank = Crank(anchor=O2, radius=A_, angular_velocity=2 * np.pi / n, name="A")
    B = RRRDyad(anchor1=crank.output, anchor2=O4, distance1=B_, distance2=C_, name="B")
    P = FixedDyad(anchor1=crank.output, anchor2=B, distance=float(np.hypot(1.75, 0.6)),
                  angle=float(np.arctan2(0.6, 1.75)), name="P")
    return Linkage([O2, O4, crank, B, P])


def w1(repeat: int):
    """W1 timings (s): the sweep alone (compiled / interpreted kernel), the sweep plus every
    frame's position as ``linkcli solve`` computes them (default rule after warm-up /
    compiled), pylinkage, and the closed forms."""
    mech = load(FOURBAR)
    n = 3600
    theta = 2 * np.pi * np.arange(1, n + 1) / n  # pylinkage's crank angles: one step after 0
    Q = theta[:, None]
    t0 = time.perf_counter()
    sweep.solve_sweep(mech, Q[:10], mech.q_init, method="many")  # load the kernel
    load_s = time.perf_counter() - t0
    res = sweep.solve_sweep(mech, Q, mech.q_init, method="many")
    assert np.all(res.status == 0) and res.events == ()
    assert sweep._use_compiled(mech, n), "the default rule must use the loaded compiled kernel"
    rel = closed_form_angles(theta)
    for k, r in enumerate(rel, start=1):  # same branch, same configuration
        d = (res.q[:, k] - r + np.pi) % (2 * np.pi) - np.pi
        assert np.abs(d).max() < 1e-8, np.abs(d).max()

    iP, iB = mech.frame_names.index("coupler.P"), mech.frame_names.index("coupler.B")

    def with_frames(method):  # what analyses.solve does for a planar mechanism: sweep, planar link poses,
        r = sweep.solve_sweep(mech, Q, mech.q_init, method=method)  # effector pose, frame origins (x, y)
        P = forward.planar_link_poses(mech, r.q)
        forward.planar_effector_pose(mech, P)
        return forward.planar_frame_positions(mech, P)

    # the whole public function: sweep, pose columns, statuses, events, limits, the result table
    table_req = {m: SolveRequest(sweeps=[Sweep("crank_pin", 0.1, 360.0, num=n)], sweep_method=m)
                 for m in ("many", "auto")}
    P_table = run_solve(mech, table_req["many"]).table["coupler.P.x [m]"]
    assert np.abs(P_table - with_frames("many")[:, iP, 0]).max() < 1e-9  # the same crank angles to rounding

    fns = {
        "compiled": lambda: sweep.solve_sweep(mech, Q, mech.q_init, method="many"),
        "interpreted": lambda: sweep._solve_sweep_interpreted(mech, Q, mech.q_init, 1e-10, np.radians(10.0)),
        "compiled_frames": lambda: with_frames("many"),
        "default_frames": lambda: with_frames("auto"),
        "compiled_table": lambda: run_solve(mech, table_req["many"]),
        "default_table": lambda: run_solve(mech, table_req["auto"]),
        "cf_angles": lambda: closed_form_angles(theta),
        "cf_pin": lambda: closed_form_pin(theta),
    }
    lk = pylinkage_fourbar(n)
    if lk is not None:
        traj = lk.step_fast(iterations=n)
        p = with_frames("many")
        err = max(np.abs(traj[:, 4] - p[:, iP, :2]).max(), np.abs(traj[:, 3] - p[:, iB, :2]).max())
        assert err < 1e-8, err  # same mechanism, same points (pylinkage accumulates its crank angle)
        fns["pylinkage"] = lambda: lk.step_fast(iterations=n)
    # the floor of a compiled Newton continuation with the same per-point work (w1_floor.py),
    # checked against linkcli's sweep first (same configuration, same pins)
    import w1_floor

    phi0 = res.q[0, 1] + theta[0]  # absolute coupler and rocker angles of the first point
    psi0 = phi0 + res.q[0, 2]
    floor_args = (theta, (phi0, psi0), (A_, B_, C_, D), (1.75, 0.6))
    _, _, _, fst, _, fpins = w1_floor.run(*floor_args)
    ref = with_frames("many")
    assert np.abs(fpins[:, 4:6] - ref[:, iP, :2]).max() < 1e-9 and np.abs(fpins[:, 2:4] - ref[:, iB, :2]).max() < 1e-9
    assert (fst[2:] == 0).all()  # after the first two (no quadratic term yet), every point by the chord step
    fns["floor"] = lambda: w1_floor.run(*floor_args)
    t = medians(fns, repeat)
    return t, load_s


# --- spatial sweeps ----------------------------------------------------------------------------------
RSSR = REPO / "mechanisms" / "rssr_spatial.yaml"

_SPATIAL_SCRIPT = """
import json, sys, time, numpy as np
sys.path.insert(0, %(repo)r)
from linkcli.compile import compile_mechanism
from linkcli.core import sweep
from linkcli.io.loader import load_mechanism
m = compile_mechanism(load_mechanism(%(file)r).model)
out = {}
for n in (721, 3600):
    Q = m.q_init[m.q_actuated] + np.linspace(0, 2 * np.pi, n)[:, None]
    sweep.solve_sweep(m, Q, m.q_init)
    ts = []
    for _ in range(%(repeat)d):
        c = time.process_time(); sweep.solve_sweep(m, Q, m.q_init); ts.append(time.process_time() - c)
    out[n] = float(np.median(ts))
print(json.dumps(out))
"""


def spatial(repeat: int, baseline_repo: str | None):
    """CPU s (median) of rssr_spatial sweeps of 721 and 3600 points: compiled and interpreted
    kernel here; the numpy continuation of ``baseline_repo`` (a subprocess) when given."""
    mech = load(RSSR)
    out = {}
    for n in (721, 3600):
        Q = mech.q_init[mech.q_actuated] + np.linspace(0, 2 * np.pi, n)[:, None]
        fns = {f"compiled_{n}": lambda Q=Q: sweep._solve_sweep_compiled(mech, Q, mech.q_init, 1e-10, np.radians(10.0))}
        if n == 721:
            fns[f"interpreted_{n}"] = lambda Q=Q: sweep._solve_sweep_interpreted(mech, Q, mech.q_init, 1e-10,
                                                                                 np.radians(10.0))
        medians(fns, max(3, repeat // 10))
        out.update({k: CPU[k] for k in fns})
    if baseline_repo:
        env = {**os.environ, "LINKCLI_SWEEP": "numpy", "PYTHONPATH": baseline_repo}
        script = _SPATIAL_SCRIPT % {"repo": baseline_repo, "file": str(RSSR), "repeat": max(3, repeat // 3)}
        proc = subprocess.run([sys.executable, "-c", script], env=env, cwd=baseline_repo, capture_output=True,
                              text=True, check=True)
        out.update({f"numpy_{k}": v for k, v in json.loads(proc.stdout).items()})
    return out


_MEMORY_SCRIPT = """
import resource, sys, time, numpy as np
sys.path.insert(0, %(repo)r)
from linkcli.compile import compile_mechanism
from linkcli.core import sweep
from linkcli.io.loader import load_mechanism
m = compile_mechanism(load_mechanism(%(file)r).model)
Q = m.q_init[m.q_actuated] + np.linspace(0, 2 * np.pi * %(turns)d, %(n)d)[:, None]
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.perf_counter()
r = sweep.solve_sweep(m, Q, m.q_init)
dt = time.perf_counter() - t
assert (r.status == 0).all(), np.unique(r.status)
print(before / 1024, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, dt)
"""


def memory(n: int = 1_000_000, repo: str | None = None):
    """(RSS MB before the sweep, peak RSS MB, s) of a fresh process sweeping rssr_spatial over
    n points (100 turns) with the default rule (LINKCLI_JIT=auto)."""
    repo = repo or str(REPO)
    env = {**os.environ, "LINKCLI_JIT": "auto", "PYTHONPATH": repo}
    script = _MEMORY_SCRIPT % {"repo": repo, "file": str(RSSR), "n": n, "turns": 100}
    proc = subprocess.run([sys.executable, "-c", script], env=env, cwd=repo, capture_output=True, text=True,
                          check=True)
    return tuple(float(x) for x in proc.stdout.split())


# --- W2 ---------------------------------------------------------------------------------------------
DH_A = np.array([0.0, 0.4318, 0.0203, 0.0, 0.0, 0.0])
DH_D = np.array([0.0, 0.0, 0.15005, 0.4318, 0.0, 0.0])
DH_ALPHA = np.radians([90.0, 0.0, -90.0, 90.0, -90.0, 0.0])


def dh_baseline(q):
    """Hand-written vectorised standard-DH forward kinematics and geometric Jacobian:
    T (n, 4, 4) of link 6 and J (n, 6, 6) (linear velocity of its origin; angular velocity)."""
    n = len(q)
    ct, st = np.cos(q), np.sin(q)
    ca, sa = np.cos(DH_ALPHA), np.sin(DH_ALPHA)
    A = np.zeros((n, 6, 4, 4))
    A[..., 0, 0], A[..., 0, 1], A[..., 0, 2], A[..., 0, 3] = ct, -st * ca, st * sa, DH_A * ct
    A[..., 1, 0], A[..., 1, 1], A[..., 1, 2], A[..., 1, 3] = st, ct * ca, -ct * sa, DH_A * st
    A[..., 2, 1], A[..., 2, 2], A[..., 2, 3] = sa, ca, DH_D
    A[..., 3, 3] = 1.0
    T = A[:, 0]
    z = [np.broadcast_to(np.array([0.0, 0.0, 1.0]), (n, 3))]
    o = [np.zeros((n, 3))]
    for i in range(1, 6):
        z.append(T[:, :3, 2])
        o.append(T[:, :3, 3])
        T = T @ A[:, i]
    J = np.empty((n, 6, 6))
    p = T[:, :3, 3]
    for i in range(6):
        J[:, :3, i] = np.cross(z[i], p - o[i])
        J[:, 3:, i] = z[i]
    return T, J


def w2(repeat: int):
    mech = load(PUMA)
    q = np.random.default_rng(0).uniform(-np.pi, np.pi, (10_000, 6))
    eff = int(mech.frame_link[mech.effector_frame])

    def single_pass(q):
        kin = forward.tree_kinematics(mech, q, jacobian_links=[eff])
        T = forward.effector_pose(mech, kin.T_world_link)
        return T, _point_jacobian(kin.J_link[:, 0], T[:, :3, 3])

    def public_api(q):
        return forward.effector_pose(mech, forward.link_poses(mech, q)), geometric_jacobian(mech, q)

    T_ref, J_ref = dh_baseline(q)
    for f in (single_pass, public_api):
        T, J = f(q)
        assert np.abs(T - T_ref).max() < 1e-12 and np.abs(J - J_ref).max() < 1e-12
    return medians({"single": lambda: single_pass(q), "api": lambda: public_api(q),
                    "baseline": lambda: dh_baseline(q)}, repeat)


# --- end to end ----------------------------------------------------------------------------------
def e2e(repeat: int):
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    probe = subprocess.run([sys.executable, "-m", "linkcli", "solve", "--help"], cwd=REPO, env=env,
                           capture_output=True, text=True)
    if probe.returncode != 0:
        return None
    out = Path(tempfile.mkdtemp()) / "x.csv"
    cmd = [sys.executable, "-m", "linkcli", "solve", str(FOURBAR), "-o", str(out)]
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True)
        times.append(time.perf_counter() - t)
        if proc.returncode != 0:
            print(f"linkcli solve failed ({proc.returncode}): {proc.stderr.strip()[:200]}", file=sys.stderr)
            return None
    bare = []
    for _ in range(repeat):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], env=env)
        bare.append(time.perf_counter() - t)
    shutil.rmtree(out.parent, ignore_errors=True)
    return float(np.median(times)), float(np.median(bare))


# --- JIT start-up and the break-even size ------------------------------------------------------------
_JIT_SCRIPT = """
import json, time, numpy as np
t0 = time.perf_counter()
import numba
t1 = time.perf_counter()
from linkcli.compile import compile_mechanism
from linkcli.core import sweep
from linkcli.io.loader import load_mechanism
m = compile_mechanism(load_mechanism(%r).model)
t2 = time.perf_counter()
sweep._solve_sweep_compiled(m, np.linspace(0, 1, 10)[:, None], m.q_init, 1e-10, np.radians(10.0))
t3 = time.perf_counter()
print(json.dumps({"import_numba": t1 - t0, "first_call": t3 - t2}))
"""


def jit_timing():
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    env.pop("LINKCLI_NO_JIT", None)
    script = _JIT_SCRIPT % str(FOURBAR)
    cold_dir = tempfile.mkdtemp()
    try:
        cold = json.loads(subprocess.run([sys.executable, "-c", script], env={**env, "NUMBA_CACHE_DIR": cold_dir},
                                         capture_output=True, text=True, check=True).stdout)
    finally:
        shutil.rmtree(cold_dir, ignore_errors=True)
    cached = [json.loads(subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                                        check=True).stdout) for _ in range(3)]
    return cold, {k: float(np.median([c[k] for c in cached])) for k in cached[0]}


def interpreted_per_point(repeat: int):
    mech = load(FOURBAR)
    out = {}
    for n in (360, 3600):
        Q = np.linspace(0, 2 * np.pi, n + 1)[:-1, None]
        out[n] = medians({"i": lambda Q=Q: sweep._solve_sweep_interpreted(mech, Q, mech.q_init, 1e-10,
                                                                          np.radians(10.0)),
                          "k": lambda Q=Q: sweep._solve_sweep_compiled(mech, Q, mech.q_init, 1e-10, np.radians(10.0))},
                         max(3, repeat // 10))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--no-jit-timing", action="store_true", help="skip the fresh-process JIT measurements")
    ap.add_argument("--baseline-repo", help="a checkout from before issue 11: its numpy continuation on the spatial "
                    "sweep (and memory) as the 'before'")
    ap.add_argument("--memory", action="store_true", help="peak RSS of a 10^6-point spatial sweep (fresh process)")
    args = ap.parse_args()
    print(f"# {platform.node()} | {platform.processor() or platform.machine()} | {os.cpu_count()} cores | "
          f"python {platform.python_version()} | numpy {np.__version__} | load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} | {time.strftime('%Y-%m-%d %H:%M')}")
    # fresh-process measurements first: after heavy numpy work this process's OpenBLAS threads
    # keep spinning for a while and would slow the child processes down (2x measured)
    e = e2e(max(5, args.repeat // 4))
    jit = None if args.no_jit_timing else jit_timing()
    mem = memory() if args.memory else None
    mem_base = memory(repo=args.baseline_repo) if args.memory and args.baseline_repo else None
    t1, load_s = w1(args.repeat)
    sp = spatial(args.repeat, args.baseline_repo)
    t2 = w2(args.repeat)
    t = {**t1, **t2}  # median wall times (s) by name; CPU: median CPU times
    rows = [
        ("W1 four-bar 3600-pt sweep (compiled) / closed-form joint angles", "compiled", "cf_angles"),
        ("W1 four-bar 3600-pt sweep (compiled) / closed-form pin B only", "compiled", "cf_pin"),
        ("W1 four-bar 3600-pt sweep (interpreted kernel) / closed-form joint angles", "interpreted", "cf_angles"),
        ("W1 default path (after warm-up) + frame positions / closed-form joint angles", "default_frames",
         "cf_angles"),
        ("W1 compiled path + frame positions / closed-form joint angles", "compiled_frames", "cf_angles"),
        ("W1 run_solve (default path), whole result table / closed-form joint angles", "default_table", "cf_angles"),
        ("W1 run_solve (compiled path), whole result table / closed-form joint angles", "compiled_table", "cf_angles"),
    ] + ([
        ("W1 pylinkage step_fast (numba; A, B, P) / closed-form joint angles", "pylinkage", "cf_angles"),
        ("W1 compiled path + frame positions / pylinkage step_fast", "compiled_frames", "pylinkage"),
    ] if "pylinkage" in t else []) + [
        ("W1 floor: one hand-written compiled continuation loop + pins (w1_floor.py) / closed-form joint angles",
         "floor", "cf_angles"),
        ("W1 compiled path + frame positions / that floor", "compiled_frames", "floor"),
    ] + [
        ("W2 PUMA pose + 6x6 Jacobian, 10k configs (one pass, jacobian_links)", "single", "baseline"),
        ("W2 PUMA pose + 6x6 Jacobian, 10k configs (link_poses + geometric_jacobian)", "api", "baseline"),
    ]
    print("\n| workload | linkcli ms (wall / CPU) | baseline ms (wall / CPU) | ratio (wall) | ratio (CPU) |"
          "\n|---|---|---|---|---|")
    for name, a, b in rows:
        print(f"| {name} | {t[a] * 1e3:.3f} / {CPU[a] * 1e3:.3f} | {t[b] * 1e3:.3f} / {CPU[b] * 1e3:.3f} | "
              f"{t[a] / t[b]:.1f}x | {CPU[a] / CPU[b]:.1f}x |")
    print("\n| spatial sweep (rssr_spatial) | CPU ms | / compiled |\n|---|---|---|")
    for n in (721, 3600):
        for kind in ("compiled", "interpreted", "numpy"):
            k = f"{kind}_{n}"
            if k in sp:
                what = "numpy continuation (before, baseline repo)" if kind == "numpy" else f"kernel {kind}"
                print(f"| {n} points, {what} | {sp[k] * 1e3:.1f} | {sp[k] / sp[f'compiled_{n}']:.1f}x |")
    if mem is not None:
        line = f"\n10^6-point spatial sweep (rssr_spatial, default rule): peak RSS {mem[1]:.0f} MB " \
               f"({mem[0]:.0f} MB before the sweep), {mem[2]:.1f} s"
        if mem_base is not None:
            line += f"; before (numpy continuation): peak {mem_base[1]:.0f} MB, {mem_base[2]:.1f} s"
        print(line)
    if e is None:
        print("\nE2E: `linkcli solve` not available, skipped")
    else:
        print(f"\nE2E `python -m linkcli solve mechanisms/fourbar.yaml -o x.csv` (361 points, default rule): "
              f"{e[0] * 1e3:.0f} ms wall (bare `python -c pass`: {e[1] * 1e3:.0f} ms)")
    if "pylinkage" not in t1:
        print("\npylinkage not installed: its row is skipped (pip install pylinkage)")
    print(f"\nkernel load in this process (first compiled call, cache present): {load_s * 1e3:.0f} ms")
    if jit is not None:
        cold, cached = jit
        print(f"fresh process: import numba {cached['import_numba'] * 1e3:.0f} ms; first compiled sweep "
              f"{cached['first_call'] * 1e3:.0f} ms with the cache, {cold['first_call']:.1f} s compiling (empty cache)")
        per = interpreted_per_point(args.repeat)
        print("\n| points | interpreted kernel ms | compiled kernel ms (loaded) |\n|---|---|---|")
        for n, t in per.items():
            print(f"| {n} | {t['i'] * 1e3:.1f} | {t['k'] * 1e3:.2f} |")
        slope = (per[3600]["i"] - per[360]["i"]) / 3240 - (per[3600]["k"] - per[360]["k"]) / 3240
        start = cached["import_numba"] + cached["first_call"]
        print(f"interpreted kernel costs {slope * 1e6:.0f} us/point more; numba start-up {start:.2f} s -> loading "
              f"the cached kernel pays from ~{start / slope:,.0f} points (sweep.py's rule projects it with "
              f"{sweep.DEFAULT_SECONDS_PER_UNIT:g} s per point, constraint row and variable until this machine's "
              f"record says otherwise); compiling pays from ~{cold['first_call'] / slope:,.0f} points")

if __name__ == "__main__":
    main()
