"""The benchmarks still run: `schedrl bench --quick` (every script, tiny budgets) prints each one's numbers.

Timings are not asserted (speed is measured by the benchmarks, not by tests); what is checked is that
each benchmark ran to its table. The scaling benchmark (a Ray + PPO run) is left to `schedrl bench`.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from shared_traces import shared_trace

pytestmark = pytest.mark.integration  # runs the benchmarks as `schedrl bench`


def run_quick(*names: str) -> tuple[str, list[str]]:
    """`schedrl bench NAMES --quick`: its output and the lines of its closing summary (it must exit 0)."""
    env = {**os.environ, "RAY_BACKEND_LOG_LEVEL": "fatal"}
    proc = subprocess.run([sys.executable, "-m", "schedrl", "bench", *names, "--quick"],
                          capture_output=True, text=True, timeout=600, env=env)
    out = proc.stdout
    assert proc.returncode == 0, out[-3000:] + proc.stderr[-3000:]
    return out, out[out.index("== summary"):].splitlines()[1:]


def test_quick_benchmarks_run_and_print_their_numbers():
    for name in ("lublin_256.swf.gz", "SDSC-SP2-1998-4.2-cln.swf.gz", "HPC2N-2002-2.2-cln.swf.gz"):
        shared_trace(name)
    out, summary = run_quick("load", "sim", "policy", "dtsim")
    assert [line.split()[0] for line in summary] == ["load", "sim", "policy", "dtsim"]
    assert all(line.endswith(" ok") for line in summary), summary
    assert "HPC2N FCFS + EASY" in out and "starts/s" in out and "decisions/s" in out
    assert "pick (observation + forward + argmax)" in out and "actions/s" in out
    for trace in ("lublin_256", "SDSC-SP2", "HPC2N"):
        assert any(line.startswith(trace) and "skipped" not in line for line in out.splitlines()), trace


def test_quick_agents_benchmark_runs_every_case():
    # DRAS/MRSch pieces (bench_agents.py); a missing trace falls back to a Lublin stand-in, so nothing skips
    out, summary = run_quick("agents")
    assert [line.split()[0] for line in summary] == ["agents"] and summary[0].endswith(" ok"), summary
    for case in ("Theta-sized state", "128-node state", "DRAS-PG     21,890,053", "DRAS-DQL    21,449,004",
                 "S4, 256 nodes", "RLlib DFPTorchLearner.update", "pick (observation + goal + forward + argmax)",
                 "GAPolicy.pick, exhaustive"):
        assert case in out, case


def test_unknown_benchmark_is_an_input_error():
    proc = subprocess.run([sys.executable, "-m", "schedrl", "bench", "nope"], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 2
    assert "unknown benchmark nope; choose from load, sim, policy, scaling, agents, dtsim" in proc.stderr


def test_quick_train_benchmark_prints_a_row_per_agent():
    # bench_train.py --quick: one timed training iteration of RLScheduler, DRAS-PG and MRSch at tiny settings
    out, summary = run_quick("train")
    assert [line.split()[0] for line in summary] == ["train"] and summary[0].endswith(" ok"), summary
    assert "| agent | iter s | env steps/s | sample s | learn s | learn share | sampling steps/s |" in out
    assert "warm start in the settings (warm_start=auto): not run" in out
    for agent in ("rlscheduler", "dras-pg", "mrsch"):
        row = next((line for line in out.splitlines() if line.startswith(f"| {agent} |")), None)
        assert row is not None and "failed" not in row and "n/a" not in row, (agent, row)


def test_quick_leaderboard_benchmark_prints_its_time():
    out, summary = run_quick("leaderboard")
    assert [line.split()[0] for line in summary] == ["leaderboard"] and summary[0].endswith(" ok"), summary
    assert "default" in out and "target <= 600 s" in out
