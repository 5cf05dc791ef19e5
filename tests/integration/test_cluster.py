"""`schedrl train` on a real two-node Ray cluster: placement, env-runner restarts, driver kill + resume.

Each test runs `schedrl train` as a subprocess joined to the `ray_cluster` fixture through
`RAY_ADDRESS` (as `ray job submit` or a Slurm batch step would), with tiny budgets: 32-job episodes,
256-step batches, one epoch. Processes are told apart by the session they run in (see
`ray_nodes.py`), which is how a process is attributed to the head or the worker node.
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from ray_nodes import LocalCluster

pytestmark = pytest.mark.cluster

ENV_RUNNER = "SingleAgentEnvRunner"
TRAIN = [sys.executable, "-m", "schedrl", "train", "rlscheduler", "--trace", "default", "--batch-size", "256",
         "--epochs", "1", "--sequence-length", "32", "--num-env-runners", "1", "--envs-per-runner", "2",
         "--runner-resource", "worker_node=0.5", "--no-filtering", "--eval-sequences", "1", "--eval-jobs", "128",
         "--checkpoint-every", "1", "--keep-checkpoints", "0",
         # a validated checkpoint every iteration, and RLlib's synchronous PPO: what these tests were written for
         "--validate-every", "1", "--no-overlap-sampling"]
RUN_TIMEOUT_S = 150


def run_train(cluster: LocalCluster, out: Path, iterations: int, *extra: str,
              poll: Callable[[subprocess.Popen], None] | None = None,
              extra_env: dict[str, str] | None = None) -> subprocess.Popen:
    """`schedrl train` on the cluster until it exits; `poll(proc)` is called every 0.25 s meanwhile."""
    return cluster.run_driver([*TRAIN, "--iterations", str(iterations), "--out", str(out), *extra],
                              out.with_suffix(".log"), RUN_TIMEOUT_S, poll=poll, extra_env=extra_env)


def log_tail(out: Path, chars: int = 4000) -> str:
    log = out.with_suffix(".log")
    return log.read_text()[-chars:] if log.exists() else "(no log)"


def trial_dir(out: Path) -> Path:
    trials = sorted((out / "rlscheduler").glob("trial_*"))
    assert len(trials) == 1, f"expected one trial under {out}, found {trials}"
    return trials[0]


def results(out: Path) -> list[dict]:
    """Tune's result.json of the trial: one dict per reported iteration (both runs after a resume)."""
    path = trial_dir(out) / "result.json"
    rows = []
    for line in path.read_text().splitlines() if path.exists() else []:
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:  # the record a SIGKILLed driver was writing; the resumed run appends after it
            continue
    return rows


def checkpoints(out: Path) -> list[Path]:
    return sorted(trial_dir(out).glob("checkpoint_*")) if list((out / "rlscheduler").glob("trial_*")) else []


def saved_iteration(out: Path) -> int:
    """Last iteration recorded in Tune's experiment state (what `--resume` restores from), 0 if none."""
    states = sorted((out / "rlscheduler").glob("experiment_state-*.json"))
    if not states:
        return 0
    try:
        trial = json.loads(states[-1].read_text())["trial_data"][0]
        return int(json.loads(trial[1])["last_result"].get("training_iteration", 0))
    except (ValueError, KeyError, IndexError):  # caught mid-write
        return 0


def assert_complete(out: Path, iterations: int | None = None) -> list[dict]:
    """The run reached `iterations` (if given), checkpointed every one of them, and wrote its summary."""
    rows = results(out)
    assert rows, log_tail(out)
    if iterations is None:
        iterations = rows[-1]["training_iteration"]
    assert rows[-1]["training_iteration"] == iterations, log_tail(out)
    names = [p.name for p in checkpoints(out)]
    assert names == [f"checkpoint_{i:06d}" for i in range(iterations)], names
    for ckpt in checkpoints(out):
        assert (ckpt / "learner_group" / "learner" / "rl_module" / "default_policy").is_dir(), ckpt
    summary = json.loads((out / "summary.json").read_text())
    # the checkpoint evaluated is the one with the best validation score
    assert Path(summary["checkpoint"]).name in names and summary["selection"].startswith("checkpoint of iteration")
    assert (out / "evaluation.md").is_file()
    return rows


def test_cluster_has_head_and_worker_nodes(ray_cluster):
    by_resource = {name: [n for n in ray_cluster.nodes if name in n["resources"]] for name in ("head_node", "worker_node")}
    assert len(ray_cluster.nodes) == 2
    assert len(by_resource["head_node"]) == len(by_resource["worker_node"]) == 1
    assert by_resource["head_node"][0]["node_id"] != by_resource["worker_node"][0]["node_id"]
    assert ray_cluster.processes("head") and ray_cluster.processes("worker")


def test_env_runner_is_placed_on_the_worker_node(ray_cluster, tmp_path):
    out = tmp_path / "placed"
    roles: dict[int, str | None] = {}

    def watch(_proc):
        for p in ray_cluster.actor_processes(ENV_RUNNER):
            roles.setdefault(p.pid, ray_cluster.role_of(p.pid))

    proc = run_train(ray_cluster, out, 2, poll=watch)
    assert proc.returncode == 0, log_tail(out)
    # the env runner is a worker process of the worker node's raylet, i.e. in that node's session
    assert roles and set(roles.values()) == {"worker"}, roles
    rows = assert_complete(out, 2)
    for row in rows:
        runners = row["env_runners"]
        assert runners["num_env_steps_sampled"] >= 256
        assert runners["num_episodes"] > 0
        assert math.isfinite(runners["schedrl_train_metric"]) and runners["schedrl_train_metric"] >= 1.0  # bsld >= 1
        assert row["fault_tolerance"]["num_healthy_workers"] == 1
        assert math.isfinite(row["learners"]["default_policy"]["total_loss"])


def sampled(row: dict) -> float:
    steps = row["env_runners"].get("num_env_steps_sampled", 0)
    return 0.0 if steps is None or math.isnan(steps) else steps


def test_training_survives_a_killed_env_runner(ray_cluster, tmp_path):
    out = tmp_path / "restart"
    # RLlib ends an iteration without samples while its only runner restarts (~8 s here, under
    # 2 s per empty iteration): stop on training time, so that however fast this machine iterates
    # the restarted runner has time to sample again
    budget_s = 30
    killed: list[int] = []
    killed_during: list[int] = []
    runners: set[int] = set()

    def kill_after_first_checkpoint(_proc):
        alive = [p.pid for p in ray_cluster.actor_processes(ENV_RUNNER)]
        runners.update(alive)
        if not killed and checkpoints(out) and alive:
            os.kill(alive[0], signal.SIGKILL)
            killed.append(alive[0])
            killed_during.append(len(results(out)) + 1)

    proc = run_train(ray_cluster, out, 10_000, "--time-budget", f"{budget_s}s", poll=kill_after_first_checkpoint)
    assert proc.returncode == 0, log_tail(out)
    assert killed, "training ended before an env runner could be killed"
    replacements = runners - set(killed)
    assert replacements, f"no env runner replaced the killed one ({killed}): {runners}"
    rows = assert_complete(out)
    assert rows[-1]["time_total_s"] >= budget_s, rows[-1]["time_total_s"]
    assert rows[-1]["fault_tolerance"]["num_remote_worker_restarts"] >= 1
    assert rows[-1]["fault_tolerance"]["num_healthy_workers"] == 1
    after = [row["training_iteration"] for row in rows if row["training_iteration"] > killed_during[0] and sampled(row)]
    assert after, f"the restarted env runner never sampled: {[(r['training_iteration'], sampled(r)) for r in rows]}"
    # its 2 envs were told to continue (new episode starts), not to replay the first runner's
    assert rows[-1]["schedrl"]["continued_envs"] >= 2, rows[-1]["schedrl"]


def test_killed_driver_resumes_from_its_checkpoints(ray_cluster, tmp_path):
    out = tmp_path / "resume"
    # stop on training time, not on an iteration count: however fast this machine iterates, the run
    # lasts long enough to be killed mid-training, and the resumed run only trains what is left
    budget_s = 30
    stop = (10_000, "--time-budget", f"{budget_s}s")
    before: list[Path] = []
    seen: list[tuple[float, int]] = []
    start = time.monotonic()

    def kill_once_a_checkpoint_is_recorded(proc):
        saved = saved_iteration(out)
        seen.append((round(time.monotonic() - start, 1), saved))
        # iteration >= 2 in Tune's experiment state means the iteration-1 checkpoint is in it
        # (the trial saves before it trains again)
        if saved >= 2 and proc.poll() is None:
            before.extend(checkpoints(out))
            proc.send_signal(signal.SIGKILL)
            proc.wait()

    # Tune writes its experiment state at most every 10 s by default (a SIGKILL loses at most that
    # much progress); once a second here
    first = run_train(ray_cluster, out, stop[0], *stop[1:], poll=kill_once_a_checkpoint_is_recorded,
                      extra_env={"TUNE_GLOBAL_CHECKPOINT_S": "1"})
    assert before, (f"the run ended (rc {first.returncode}) before a checkpoint was recorded; "
                    f"(seconds, saved iteration): {seen[::4]}\n{log_tail(out)}")
    assert first.returncode == -signal.SIGKILL
    assert not (out / "summary.json").exists()
    killed_at = max(int(p.name.split("_")[1]) for p in before) + 1

    second = run_train(ray_cluster, out, stop[0], *stop[1:], "--resume")
    assert second.returncode == 0, log_tail(out)
    rows = assert_complete(out)
    assert rows[-1]["time_total_s"] >= budget_s, rows[-1]["time_total_s"]
    assert all(p.is_dir() for p in before), before
    # restored from a checkpoint, not retrained from scratch
    assert rows[-1]["training_iteration"] >= killed_at
    assert rows[-1]["iterations_since_restore"] < rows[-1]["training_iteration"], \
        [(r["training_iteration"], r["iterations_since_restore"]) for r in rows]
    # the fresh runner's 2 envs continued from the restored iteration instead of replaying iteration 1's starts
    assert rows[-1]["schedrl"]["continued_envs"] == 2, rows[-1]["schedrl"]
    # the warm start ran once, before the kill: the resumed trial restored its weights and clock instead
    assert log_tail(out, 10**7).count("warm start: cloned") == 1, log_tail(out)
    resumed = [r for r in rows if r["iterations_since_restore"] < r["training_iteration"]]
    # (vacuous where the kill came before the first recorded row: there is no clock to have kept)
    assert resumed[0]["time_total_s"] >= max((r["time_total_s"] for r in rows if r["training_iteration"] < killed_at),
                                             default=0.0)


def test_learner_uses_a_gpu_when_one_exists(request, tmp_path):
    import torch

    if not torch.cuda.is_available():
        pytest.skip("no CUDA device (torch.cuda.is_available() is False): --num-gpus-per-learner 1 needs a GPU node")
    cluster = request.getfixturevalue("ray_cluster")
    out = tmp_path / "gpu"
    on_gpu: set[str] = set()

    def watch(_proc):
        query = subprocess.run(["nvidia-smi", "--query-compute-apps=pid", "--format=csv,noheader"],
                               capture_output=True, text=True).stdout
        pids = {int(x) for x in query.split() if x.isdigit()}
        on_gpu.update(p.cmdline.split(" ")[0] for p in cluster.processes() if p.pid in pids)

    proc = run_train(cluster, out, 2, "--num-gpus-per-learner", "1", poll=watch)
    assert proc.returncode == 0, log_tail(out)
    assert_complete(out, 2)
    # the learner is local to the trial's PPO actor (num_learners=0): ray::OverlappedPPO.train (schedrl's PPO subclass)
    assert any(title.split(".")[0] in ("ray::PPO", "ray::OverlappedPPO") for title in on_gpu), on_gpu
