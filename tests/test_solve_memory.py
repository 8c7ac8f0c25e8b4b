"""A streamed solve's memory (issue 11, "bounded memory"): what the blocks do not need is let
go before the writer runs, and the loop gaps of a block are computed a bounded piece at a time.

Truths: ``loop_gaps`` over the whole array (each row's gap depends on that row alone, so the
pieces must give the very same floats, bit for bit); and the sweep's own arrays, watched through
weak references (numpy arrays support them), which must be collected once ``solve_stream`` has
returned -- while the configurations the blocks read stay alive. The peak figures themselves are
measured in benchmarks/bench_outputs.py (tests time and weigh nothing)."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

import numpy as np
import pytest

import linkcli.analyses.solve as solve_module
from linkcli.analyses.inputs import Sweep
from linkcli.analyses.solve import GAP_ROWS, SolveRequest, _loop_gaps, solve_stream
from linkcli.compile import compile_mechanism
from linkcli.core.loop_closure import loop_gaps
from linkcli.io.loader import load_mechanism

MECH = Path(__file__).resolve().parent.parent / "mechanisms"


def _mech(name: str):
    loaded = load_mechanism(str(MECH / name))
    return loaded, compile_mechanism(loaded.model)


@pytest.mark.parametrize("name", ["fourbar.yaml", "rssr_spatial.yaml", "stephenson_sixbar.yaml"])
@pytest.mark.parametrize("extra", [1, 2, GAP_ROWS - 1, GAP_ROWS + 1])
def test_loop_gaps_in_pieces_are_the_whole_arrays_gaps(name, extra):
    # planar (one loop, two loops) and spatial (4x4 poses, SO(3) log): configurations off their
    # loops (random angles, gaps up to metres) and closed ones, over 2 pieces + ``extra`` rows
    # (a last piece of 1 row joins the one before: a lone row's matrix products round apart)
    _, mech = _mech(name)
    rng = np.random.default_rng(7)
    n = 2 * GAP_ROWS + extra
    q = mech.q_init + rng.normal(scale=0.5, size=(n, mech.n_q))
    q[::3] = mech.q_init  # the assembly estimate itself (closed to its file's precision)
    whole = loop_gaps(mech, q)
    pieces = _loop_gaps(mech, q)
    assert pieces.shape == whole.shape == (n, mech.n_loops)
    assert np.array_equal(pieces, whole)  # bit for bit
    assert np.array_equal(_loop_gaps(mech, q[:5]), loop_gaps(mech, q[:5]))  # one piece: the call itself


def test_sweep_arrays_the_blocks_do_not_read_are_let_go_before_the_writer(monkeypatch):
    loaded, mech = _mech("fourbar.yaml")
    watched = {}
    solve_sweep = solve_module.solve_sweep

    def watching(*args, **kw):
        res = solve_sweep(*args, **kw)
        for field in ("q", "status", "residual", "worst_loop", "condition"):
            watched[field] = weakref.ref(getattr(res, field))
        return res

    monkeypatch.setattr(solve_module, "solve_sweep", watching)
    req = SolveRequest(sweeps=[Sweep("crank_pin", 0.0, 360.0, None, 2001)])
    outcome = solve_stream(mech, req, loaded, block_rows=300)
    gc.collect()
    # not read by any block: the solver's status codes (the rows' statuses are kept as 1-byte
    # codes), per-loop residuals (the column is the loop gap of the row's configuration) and
    # worst loops (the events are already told)
    assert {f: ref() is None for f, ref in watched.items()} == {
        "q": False, "condition": False, "status": True, "residual": True, "worst_loop": True}
    table = outcome.table.materialize()  # the blocks still read what they need
    assert table.n == 2001
