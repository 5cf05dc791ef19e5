"""What the tests of the two base-rule agents share (the inspector, learned backfilling; `schedrl.agents.baserule`):
hand-built workloads whose best decision is known, an env on a workload, and the checks of a trained checkpoint
through the shared commands (its export's decisions, its ray-free network, its tune files)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from schedrl.workload import Workload
from schedrl.workload.fields import FIELD_NAMES

REPO = Path(__file__).resolve().parents[1]
OFFSET = 1_000_000.0
"""Submit times start here, so F1's 870 log10(submit) term barely differs between the jobs of a case and its
log10(request) x procs term decides (F1's key is undefined at submit 0)."""


def make_workload(submit, run, procs, max_procs, time_req=None, name="case") -> Workload:
    """Jobs with these submit times, run times, processors (and requested times: the run times by default)."""
    n = len(submit)
    columns = {field: np.full(n, -1) for field in FIELD_NAMES}
    columns.update(job_id=np.arange(1, n + 1), submit=np.asarray(submit, dtype=float), run=run, procs_req=procs,
                   procs_alloc=procs, time_req=run if time_req is None else time_req, status=np.ones(n))
    return Workload(columns, max_procs=max_procs, max_nodes=max_procs, name=name)


def block_then_burst() -> Workload:
    """Rejecting is better than accepting (the inspector): a 10-processor machine; at t0 a whole-machine job of
    5,000 s is proposed (the queue holds nothing else and the machine is idle); 60 s later eight 100-s one-processor
    jobs arrive. Accepting it (every base heuristic's choice) makes the eight wait ~4,940 s each (mean bounded
    slowdown ~44.9); rejecting it once lets them run first and it starts 100 s later (~1.0)."""
    submit = [OFFSET] + [OFFSET + 60.0] * 8
    return make_workload(submit, [5000] + [100] * 8, [10] + [1] * 8, 10, name="block-then-burst")


def long_before_short() -> Workload:
    """A non-first-fit backfill is better (learned backfilling): a 10-processor machine. t0: job 0 (5 procs, 1,000 s)
    starts. t0+1: job 1 (10 procs, 100 s) is held, reserved at t0+1,000. t0+2: jobs 2 (5 procs, 900 s) and 3 (5 procs,
    10 s) arrive; both end by the reservation and either fits the 5 free processors, not both: the one decision with a
    choice. First fit (queue order) starts job 2; job 3 then waits until t0+902 (bounded slowdown 91; the mean over
    the four jobs is 26.0). Starting job 3 first lets job 2 start at t0+12 (mean about 3.5)."""
    submit = [OFFSET, OFFSET + 1, OFFSET + 2, OFFSET + 2]
    return make_workload(submit, [1000, 100, 900, 10], [5, 10, 5, 5], 10, name="long-before-short")


def write_swf(workload: Workload, path: Path) -> Path:
    """The workload as an SWF file (for the CLI and env configs, which take a trace path)."""
    from schedrl.workload.swf import write_swf as write

    write(workload, path)
    return path


def env_on(env_class, workload: Workload, **config):
    """A base-rule env whose one episode is the whole `workload` (its config class's defaults otherwise)."""
    config = {"sequence_length": len(workload), "starts": (0,), "train_fraction": 1.0, **config}
    return env_class(env_class.config_class(**config), workload=workload)


# ---------------------------------------------------------------- a trained checkpoint (integration tests)
def checkpoint_of(run: Path, agent: str) -> Path:
    """The last checkpoint of a `schedrl train AGENT --out RUN` run."""
    return sorted(run.glob(f"{agent}/*/checkpoint_*"))[-1]


def exported_decisions(checkpoint: Path, out: Path, jobs: int):
    """Export `checkpoint` into `out` and run both on `jobs` jobs of the default trace from job 36,000 under the run's
    semantics: the same decisions (every call logged) and start times. Returns the checkpoint's logged calls."""
    from schedrl.agents.checkpoint import export_policy, load_policy
    from schedrl.scenarios.scoring import run_policy
    from schedrl.sim import Simulator
    from schedrl.workload.catalog import load_trace
    from schedrl.workload.cleaning import CleaningRules
    from schedrl.workload.sampling import sequence
    from schedrl.zoo import decisions

    export_policy(checkpoint, out, check_jobs=256)
    window = sequence(load_trace("default", CleaningRules.preset("default")), 36000, jobs)
    config = load_policy(checkpoint).record.sim_config

    def run(policy):
        return run_policy(policy, Simulator(window, config)).start

    original, starts = decisions.logged(load_policy(checkpoint), run)
    exported, exported_starts = decisions.logged(load_policy(str(out)), run)
    assert decisions.first_difference(original, exported) is None
    np.testing.assert_array_equal(starts, exported_starts)
    return original.calls


def check_inference_network(checkpoint: Path, inference_network, layer: str, refusal: str) -> None:
    """The ray-free network of the checkpoint's module holds its `layer` alone; anything else is refused with
    `refusal`."""
    import pytest

    from schedrl.agents.checkpoint import load_policy

    module = load_policy(checkpoint).module
    net = inference_network(module)
    assert set(net.state_dict()) == {k for k in module.state_dict() if k.startswith(f"{layer}.")}
    with pytest.raises(ValueError, match=refusal):
        inference_network(object())


def check_tune_files(agent: str, pattern: str) -> None:
    """Every tune_configs file matching `pattern` (one at least) reads as a sweep of `agent`."""
    from schedrl.training.sweep_file import load_sweep

    paths = sorted((REPO / "tune_configs").glob(pattern))
    assert paths
    for path in paths:
        assert load_sweep(path).agent == agent, path
