"""Regenerate tests/data/sweeps_numpy_path.npz: sweeps by the numpy continuation that the sweep
kernel replaced (linkcli/core/sweep.py::_solve_sweep_numpy at commit be14d3c), an independent
implementation of the same rules kept as a frozen reference for tests/test_sweep_kernel.py.

    git worktree add --detach /tmp/old be14d3c
    python tests/data/make_sweeps_numpy_path.py /tmp/old      # from this repository's root
    git worktree remove /tmp/old

Keys ``<file>__<field>`` (the original 721-point turns, max_step 10 deg) and
``<file>__<case>__<field>`` (CASES below); fields q (n, n_q) SI, status (n,), events
("index:kind"), Q (n, n_act) the inputs.
"""

import sys
from pathlib import Path

import numpy as np

OLD = Path(sys.argv[1]).resolve()
sys.path.insert(0, str(OLD))

from linkcli.compile import compile_mechanism  # noqa: E402
from linkcli.core import sweep  # noqa: E402
from linkcli.core.loop_closure import mechanism_size  # noqa: E402
from linkcli.io.loader import load_mechanism  # noqa: E402

assert Path(sweep.__file__).resolve().is_relative_to(OLD), sweep.__file__
OUT = Path(__file__).resolve().parent / "sweeps_numpy_path.npz"

TURNS = ["fourbar", "watt_sixbar", "parallelogram", "rssr_spatial", "planar_fourbar_as_spatial", "gallery/bennett",
         "gallery/sarrus"]
# (file, case): the paths of tests/test_sweep_kernel.py::path_of
CASES = [("../tests/data/perf/double_rocker", "turn"), ("gallery/chebyshev", "turn"), ("coupling_rod", "turn"),
         ("fourbar", "reversing"), ("parallelogram", "reversing"), ("coupling_rod", "reversing"),
         ("fourbar", "coarse45"), ("watt_sixbar", "coarse45"), ("parallelogram", "coarse45"),
         ("fivebar", "grid")]


def path_of(mech, case):
    """(Q (n, n_act), max_step rad) of a case: ``turn`` 721 points over a full input turn (0.3
    mechanism sizes for a translation), max_step 10 deg; ``reversing`` 10 deg steps out to half
    a turn, back to minus half a turn and back to the start; ``coarse45`` the turn with
    max_step 45 deg; ``grid`` a 21 x 21 serpentine grid of +-30 deg around the estimate."""
    rot = mech.q_is_rotation[mech.q_actuated]
    a0 = mech.q_init[mech.q_actuated]
    span = np.where(rot, 2 * np.pi, 0.3 * mechanism_size(mech))
    if case in ("turn", "coarse45"):
        Q = a0 + np.linspace(0, 1, 721)[:, None] * span
        return Q, np.radians(45.0 if case == "coarse45" else 10.0)
    if case == "reversing":
        out = np.linspace(0, 0.5, 19)
        t = np.concatenate([out, out[::-1][1:], -out[1:], -out[::-1][1:]])
        return a0 + t[:, None] * span, np.radians(10.0)
    g = np.radians(np.linspace(-30, 30, 21))
    rows = [np.stack([np.full(21, a), g if i % 2 == 0 else g[::-1]], -1) for i, a in enumerate(g)]
    return a0 + np.concatenate(rows), np.radians(10.0)


def main():
    out = {}
    root = OLD / "mechanisms"
    jobs = [(n, "turn", n.replace("/", "__")) for n in TURNS]
    jobs += [(n, c, f"{Path(n).name}__{c}") for n, c in CASES]
    for name, case, key in jobs:
        mech = compile_mechanism(load_mechanism(str(root / f"{name}.yaml")).model)
        Q, max_step = path_of(mech, case)
        r = sweep._solve_sweep_numpy(mech, Q, mech.q_init, 1e-10, max_step)
        out[key + "__q"], out[key + "__status"] = r.q, r.status
        out[key + "__events"] = np.array([f"{e.index}:{e.kind}" for e in r.events], dtype=str)
        if key != name.replace("/", "__"):
            out[key + "__Q"] = Q
        print(key, len(Q), "events", len(r.events), flush=True)
    np.savez_compressed(OUT, **out)


if __name__ == "__main__":
    main()
