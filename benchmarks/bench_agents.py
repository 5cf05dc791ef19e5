"""Speed of the DRAS and MRSch agents' pieces: env decisions/s, network passes, DFP updates, GA decisions.

    python benchmarks/bench_agents.py [--repeats 5] [--decisions 2000] [--quick]

Every case runs once untimed first (numba compilation, torch's first-call costs), then `--repeats`
times; tables show the median. Each table line names its configuration. Traces are catalog names
(`../shared/traces` and `../shared/data` beside the repository are searched when present); where a
trace is missing the benchmark says so and uses a Lublin-generated stand-in of the same machine size.

- DRAS env (`schedrl.agents.dras.env.DRASEnv`): `--decisions` env steps with uniformly random valid
  actions (`action_space.sample()`, which draws from the current mask), resets included, on a
  Theta-sized state (W = 50, N = 4,360: the `theta-cqgym` trace, state [4,460, 2]) and a 128-node
  state (W = 10: SDSC-SP2, state [148, 2]); 512-job episodes. Both levels count as decisions.
- DRAS networks, Theta preset (Table III: 21,890,053 / 21,449,004 parameters): forward, and forward
  + backward of a REINFORCE loss (PG) or a one-step TD loss on the taken action (DQL), on random
  states, batch of 1 decision and of 32. A DQN update also runs its target network (and, with
  double Q, the online one) forward on the next states: add one or two forward times. Torch on
  this CPU with 1 thread and with torch's default thread count.
- MRSch env (`MRSchEnv`): the same random-action loop, S4 augmentation (`augment_preset`) of
  `lublin_256` (256 nodes), W = 10, 256-job episodes.
- DFP learner (`dfp.DFPTorchLearner`, built by `DFPConfig.build_learner`, no Ray cluster): updates
  per second with the small preset and minibatches of 64, 32 minibatches per `update` call as
  `DFP.training_step` does, on replay rows from random-action MRSch episodes; and, for scale, the
  same loss and Adam step on the bare module (torch only, no RLlib learner pipeline).
- DFP decision latency, paper preset (state 4,000 -> 1,000 -> 512): `DFPPolicy.pick(sim)`
  (observation + goal vector + forward + argmax) on a Theta-sized state (`theta-cqgym` + S4: 4,360
  nodes, 1,260 one-TB burst-buffer units, state length 11,280), batch of one; the forward alone.
- GA baseline (`ga.GAPolicy.pick`): a decision on a full window of 10 jobs that all fit the empty
  256-node S4 machine (exhaustive search over the 1,024 subsets, as the paper's rule says for
  <= 10 candidates); for reference the genetic algorithm forced on the same window.

torch runs with 1 thread (`torch.set_num_threads(1)`) everywhere except the rows that say
otherwise: on the 2 shared cores of the development machine a second thread made every measured
network pass slower (the DRAS rows with 2 threads show it). `--quick` runs every case with tiny budgets (one repeat, 100 env steps,
batch of 1 only, 1 thread only, 2 GA generations): a smoke test whose numbers are not for reporting.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SHARED = HERE.parents[0].parent / "shared"
THETA_NODES = 4360


def _search_shared() -> None:
    extra = [str(SHARED / sub) for sub in ("traces", "data") if (SHARED / sub).is_dir()]
    if extra:
        os.environ["SCHEDRL_TRACE_PATH"] = os.pathsep.join(filter(None, [os.environ.get("SCHEDRL_TRACE_PATH"), *extra]))


def _trace(name: str, nodes: int, jobs: int = 5000):
    """(workload, description): catalog trace `name`, else a Lublin stand-in of `nodes` nodes."""
    from schedrl.workload.catalog import load_trace
    from schedrl.workload.lublin import generate_lublin

    try:
        wl = load_trace(name)
        return wl, f"{name} ({len(wl):,} jobs, {wl.max_procs:,} nodes)"
    except Exception as exc:  # a missing trace is not fatal: say so and generate one
        wl = generate_lublin(jobs, nodes=nodes, seed=0)
        return wl, f"Lublin-generated, {nodes:,} nodes ({name} not found: {type(exc).__name__})"


def _median(fn, repeats: int, inner: int = 1) -> float:
    """Median seconds of one `fn()` call: one warm-up, then `repeats` samples of `inner` calls each."""
    fn()
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        samples.append((time.perf_counter() - t0) / inner)
    return statistics.median(samples)


def _random_steps(env, n: int, seed: int = 0) -> tuple[int, int]:
    """Step `env` `n` times with random valid actions (resetting when done): (decisions, episodes ended)."""
    env.action_space.seed(seed)
    env.reset(seed=seed)
    episodes = 0
    for _ in range(n):
        _, _, done, _, _ = env.step(env.action_space.sample())
        if done:
            episodes += 1
            env.reset()
    return n, episodes


def _env_rate(env, decisions: int, repeats: int) -> float:
    _random_steps(env, min(decisions, 200))  # warm-up: numba compilation
    times = []
    for r in range(repeats):
        t0 = time.perf_counter()
        _random_steps(env, decisions, seed=r)
        times.append(time.perf_counter() - t0)
    return decisions / statistics.median(times)


def _row(what: str, value: str, config: str) -> None:
    print(f"{what:44s} {value:>14s}  {config}")


# ---------------------------------------------------------------------------------------------- DRAS
def bench_dras_env(args) -> None:
    from schedrl.agents.dras.env import DRASEnv

    print("\n## DRAS env: decisions/s, random valid actions (both levels; resets included)")
    _row("case", "decisions/s", "configuration")
    theta, theta_desc = _trace("theta-cqgym", THETA_NODES)
    sp2, sp2_desc = _trace("SDSC-SP2", 128)
    for label, wl, desc, window in (("Theta-sized state", theta, theta_desc, 50),
                                    ("128-node state", sp2, sp2_desc, 10)):
        env = DRASEnv({"window": window, "sequence_length": 512}, workload=wl)
        rate = _env_rate(env, args.decisions, args.repeats)
        shape = env.observation_space["state"].shape
        _row(label, f"{rate:,.0f}", f"{desc}, W={window}, state {list(shape)}, 512-job episodes, "
                                    f"{args.decisions:,} steps x {args.repeats}")


def _dras_obs(window: int, nodes: int, batch: int):
    import torch

    from schedrl.agents.dras.keys import OBS_ACTION_MASK, OBS_LEVEL, OBS_STATE

    g = torch.Generator().manual_seed(0)
    return {OBS_STATE: torch.rand(batch, 2 * window + nodes, 2, generator=g),
            OBS_ACTION_MASK: torch.ones(batch, window), OBS_LEVEL: torch.zeros(batch, 1)}


def _dras_module(kind: str, window: int, nodes: int):
    import gymnasium as gym

    from schedrl.agents.dras.keys import OBS_ACTION_MASK, OBS_LEVEL, OBS_STATE
    from schedrl.agents.dras.modules import module_spec

    spec = module_spec(kind, "theta")
    spec.observation_space = gym.spaces.Dict({
        OBS_STATE: gym.spaces.Box(0.0, np.inf, (2 * window + nodes, 2), np.float32),
        OBS_LEVEL: gym.spaces.Box(0.0, 1.0, (1,), np.float32),
        OBS_ACTION_MASK: gym.spaces.Box(0.0, 1.0, (window,), np.float32)})
    spec.action_space = gym.spaces.Discrete(window)
    return spec.build()


def bench_dras_networks(args) -> None:
    import torch
    from ray.rllib.algorithms.dqn.default_dqn_rl_module import QF_PREDS
    from ray.rllib.core.columns import Columns
    from torch.nn import functional as F

    window, nodes = 50, THETA_NODES
    default_threads = args.default_threads
    thread_counts = [1] if args.quick or default_threads == 1 else [1, default_threads]
    print(f"\n## DRAS networks, preset theta (W={window}, N={nodes:,}, FC 4000 -> 1000), torch CPU, ms per call")
    print(f"{'network':10s} {'params':>11s} {'batch':>5s} {'threads':>7s} {'forward':>9s} {'fwd+bwd':>9s}")
    for kind in ("pg", "dql"):
        torch.manual_seed(0)
        module = _dras_module(kind, window, nodes)
        params = sum(p.numel() for p in module.parameters() if p.requires_grad)
        for batch in (1,) if args.quick else (1, 32):
            obs = _dras_obs(window, nodes, batch)  # every slot valid
            actions = torch.randint(0, window, (batch,))
            weight = torch.randn(batch)  # REINFORCE's (return - baseline), or the TD target

            def outputs():
                if kind == "pg":
                    return module._forward({Columns.OBS: obs})[Columns.ACTION_DIST_INPUTS]
                return module.compute_q_values({Columns.OBS: obs})[QF_PREDS]

            def forward():
                with torch.no_grad():
                    outputs()

            def forward_backward():
                module.zero_grad(set_to_none=True)
                out = outputs()
                taken = out[torch.arange(batch), actions]
                if kind == "pg":
                    loss = -(F.log_softmax(out, dim=-1)[torch.arange(batch), actions] * weight).mean()
                else:
                    loss = ((taken - weight) ** 2).mean()
                loss.backward()

            for threads in thread_counts:
                torch.set_num_threads(threads)
                inner = 1 if args.quick else max(1, 8 // batch)
                fwd = _median(forward, args.repeats, inner)
                both = _median(forward_backward, args.repeats, inner)
                print(f"{'DRAS-' + kind.upper():10s} {params:11,d} {batch:5d} {threads:7d} {fwd * 1e3:9.2f} {both * 1e3:9.2f}")
    torch.set_num_threads(1)
    print("fwd+bwd: PG = masked logits, log-softmax x weight; DQL = per-job Q values of all 50 slots, "
          "squared TD error on the taken slot; gradients zeroed each call, no optimizer step")


# --------------------------------------------------------------------------------------------- MRSch
def _mrsch_env(wl):
    from schedrl.agents.mrsch.config import MRSchEnvConfig
    from schedrl.agents.mrsch.env import MRSchEnv
    from schedrl.agents.mrsch.observation import StateNorm

    config = MRSchEnvConfig(augment="S4", norm=StateNorm.from_trace(wl).to_dict())
    return MRSchEnv(config, workload=wl), config


def bench_mrsch_env(args, wl, desc) -> None:
    env, _ = _mrsch_env(wl)
    print("\n## MRSch env: decisions/s, random valid actions (resets included)")
    _row("case", "decisions/s", "configuration")
    rate = _env_rate(env, args.decisions, args.repeats)
    _row("S4, 256 nodes", f"{rate:,.0f}",
         f"{desc}, W=10, state {env.observation_space['state'].shape[0]:,}, resources "
         f"{', '.join(env.resources)}, 256-job episodes, {args.decisions:,} steps x {args.repeats}")


def _replay_rows(env, config, n: int) -> dict[str, np.ndarray]:
    """DFP replay rows (observations, actions, future-measurement targets) from random-action episodes."""
    from schedrl.agents.mrsch.keys import DFP_TARGET_MASK, DFP_TARGETS, OBS_MEASUREMENTS
    from schedrl.agents.mrsch.targets import future_targets
    from ray.rllib.core.columns import Columns

    env.action_space.seed(1)
    columns: dict[str, list] = {}
    obs, _ = env.reset(seed=1)
    episode: list[tuple[dict, int]] = []
    chunks = []
    while sum(len(c) for c in chunks) + len(episode) < n:
        a = int(env.action_space.sample())
        episode.append((obs, a))
        obs, _, done, _, _ = env.step(a)
        if done:
            chunks.append(episode)
            episode = []
            obs, _ = env.reset()
    chunks.append(episode)
    for chunk in filter(None, chunks):
        stacked = {k: np.stack([o[k] for o, _ in chunk]) for k in chunk[0][0]}
        targets, valid = future_targets(stacked[OBS_MEASUREMENTS], config.offsets)
        rows = {f"{Columns.OBS}/{k}": v for k, v in stacked.items()}
        rows.update({Columns.ACTIONS: np.array([a for _, a in chunk], np.int64), DFP_TARGETS: targets,
                     DFP_TARGET_MASK: valid})
        for k, v in rows.items():
            columns.setdefault(k, []).append(v)
    return {k: np.concatenate(v) for k, v in columns.items()}


def bench_dfp_learner(args, wl) -> None:
    import torch
    from ray.rllib.core import DEFAULT_MODULE_ID
    from ray.rllib.core.columns import Columns
    from ray.rllib.policy.sample_batch import MultiAgentBatch

    from schedrl.agents.mrsch.dfp import DFPTorchLearner, build_dfp_config, train_batch
    from schedrl.agents.mrsch.keys import DFP_PREDICTIONS, DFP_TARGET_MASK, DFP_TARGETS
    from schedrl.agents.mrsch.replay import ReplayBuffer
    from schedrl.agents.mrsch.settings import DFPSettings

    env, config = _mrsch_env(wl)
    minibatch = 64
    per_call = 4 if args.quick else 32  # DFPSettings.updates_per_iteration: minibatches per update call
    buffer = ReplayBuffer(20_000)
    buffer.add(_replay_rows(env, config, 600 if args.quick else 3000))
    rng = np.random.default_rng(0)
    settings = DFPSettings(minibatch_size=minibatch, updates_per_iteration=per_call)
    algo_config = build_dfp_config(settings, type(env), config.to_dict(), "small")
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        learner = algo_config.build_learner(env=env)
    assert isinstance(learner, DFPTorchLearner)
    torch.set_num_threads(1)
    module = learner.module[DEFAULT_MODULE_ID]
    params = sum(p.numel() for p in module.parameters())

    def rllib_update():
        rows = buffer.sample(minibatch * per_call, rng)
        batch = MultiAgentBatch({DEFAULT_MODULE_ID: train_batch(rows)}, env_steps=minibatch * per_call)
        learner.update(batch=batch, minibatch_size=minibatch, num_epochs=1)

    bare = type(module)(observation_space=module.observation_space, action_space=module.action_space,
                        model_config=module.model_config)
    optimizer = torch.optim.Adam(bare.parameters(), lr=settings.lr)

    def bare_update():
        rows = buffer.sample(minibatch, rng)
        obs = {k[len(Columns.OBS) + 1:]: torch.from_numpy(v) for k, v in rows.items() if k.startswith(Columns.OBS + "/")}
        predictions = bare._forward_train({Columns.OBS: obs})[DFP_PREDICTIONS]
        actions = torch.from_numpy(rows[Columns.ACTIONS])
        taken = predictions[torch.arange(minibatch), actions]
        valid = torch.from_numpy(rows[DFP_TARGET_MASK])
        loss = (((taken - torch.from_numpy(rows[DFP_TARGETS])) ** 2).mean(-1) * valid).sum() / valid.sum().clamp(min=1.0)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    rllib = _median(rllib_update, args.repeats) / per_call
    raw = _median(bare_update, args.repeats, 4 if args.quick else 32)
    print("\n## DFP learner: gradient steps (updates)/s, preset small, minibatch 64")
    _row("case", "updates/s", "configuration")
    desc = (f"DFP small ({params:,} params), state {module.observation_space['state'].shape[0]:,}, "
            f"{len(buffer):,} replay rows, 1 thread")
    _row("RLlib DFPTorchLearner.update", f"{1 / rllib:,.1f}", f"{desc}, {per_call} minibatches per call")
    _row("bare module + Adam (torch only)", f"{1 / raw:,.1f}", desc)


def bench_dfp_latency(args) -> None:
    import torch
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from schedrl.agents.mrsch.modules import DFPModule, dfp_module_spec
    from schedrl.agents.mrsch.policy import DFPPolicy
    from schedrl.workload.augment import augment_preset

    theta, desc = _trace("theta-cqgym", THETA_NODES)
    wl = augment_preset(theta, "S4", 0)[0]
    env, config = _mrsch_env(wl)
    # a decision with a full window: step randomly until 10 jobs wait
    env.action_space.seed(0)
    env.reset(seed=0)
    for _ in range(5000):
        if len(env.sim.window) >= config.window:
            break
        _, _, done, _, _ = env.step(env.action_space.sample())
        if done:
            env.reset()
    sim = env.sim
    spec = dfp_module_spec("paper", {"offsets": len(config.offsets), "offset_weights": config.offset_weights})
    torch.manual_seed(0)
    module = RLModuleSpec(module_class=DFPModule, observation_space=env.observation_space,
                          action_space=env.action_space, model_config=spec.model_config).build().eval()
    params = sum(p.numel() for p in module.parameters())
    policy = DFPPolicy(module, config.to_dict())
    torch.set_num_threads(1)
    inner = 5 if args.quick else 50
    pick = _median(lambda: policy.pick(sim), args.repeats, inner)
    obs, _ = policy.observe(sim)
    forward = _median(lambda: policy.scores(obs), args.repeats, inner)
    observe = _median(lambda: policy.observe(sim), args.repeats, inner)
    print("\n## DFP decision latency, preset paper (state 4000 -> 1000 -> 512), batch of one, 1 thread")
    _row("case", "ms/decision", "configuration")
    cfg = (f"{desc} + S4, state {env.observation_space['state'].shape[0]:,}, "
           f"{len(sim.window)} jobs in the window, {params:,} params")
    _row("pick (observation + goal + forward + argmax)", f"{pick * 1e3:.3f}", cfg)
    _row("  forward + goal-weighted scores alone", f"{forward * 1e3:.3f}", "")
    _row("  observation + goal vector alone", f"{observe * 1e3:.3f}", "")


def bench_ga(args, wl, desc) -> None:
    from schedrl.agents.mrsch.env import sim_config_for
    from schedrl.agents.mrsch.config import MRSchEnvConfig
    from schedrl.agents.mrsch.ga import GAPolicy
    from schedrl.sim import DECIDE_PICK, Simulator

    # the first 64 jobs of the augmented trace, all submitted at once on the empty machine
    jobs = wl[:64].with_columns(submit=np.zeros(64))
    sim = Simulator(jobs, sim_config_for(MRSchEnvConfig(window=10)))
    assert sim.advance() == DECIDE_PICK
    window = sim.window
    fit = int(sim.fits(window).sum())
    print("\n## GA baseline: one decision on a full window of 10 (every job fits on its own), 1 thread")
    _row("case", "ms/decision", "configuration")
    inner = 2 if args.quick else 20
    forced = GAPolicy(exhaustive_limit=0)
    if args.quick:
        forced.search.generations = 2
    gens = forced.search.generations
    for label, policy in (("GAPolicy.pick, exhaustive (<= 10 fit)", GAPolicy()),
                          (f"  genetic algorithm forced ({gens} gens x {forced.search.population})", forced)):
        def pick(policy=policy):
            policy._plan = []  # the policy caches the rest of its selection for the same instant
            return policy.pick(sim)

        t = _median(pick, args.repeats, 1 if "genetic" in label else inner)
        _row(label, f"{t * 1e3:.2f}", f"{desc} + S4, {len(window)} jobs in the window, {fit} fit now")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5, help="timed repeats per case (median reported)")
    parser.add_argument("--decisions", type=int, default=2000, help="env steps per timed env repeat")
    parser.add_argument("--quick", action="store_true", help="tiny budgets: check that every case runs")
    args = parser.parse_args()
    if args.quick:
        args.repeats, args.decisions = 1, 100
    _search_shared()
    import torch

    args.default_threads = torch.get_num_threads()
    torch.set_num_threads(1)
    from schedrl.workload.augment import augment_preset

    t0 = time.perf_counter()
    print(f"bench_agents: torch {torch.__version__}, {os.cpu_count()} CPUs, load average "
          f"{', '.join(f'{x:.2f}' for x in os.getloadavg())}, repeats {args.repeats}"
          f"{' (quick: numbers not for reporting)' if args.quick else ''}")
    bench_dras_env(args)
    bench_dras_networks(args)
    lublin, lublin_desc = _trace("lublin_256", 256)
    mrsch_wl = augment_preset(lublin, "S4", 0)[0]
    bench_mrsch_env(args, mrsch_wl, lublin_desc)
    bench_dfp_learner(args, mrsch_wl)
    bench_dfp_latency(args)
    bench_ga(args, mrsch_wl, lublin_desc)
    print(f"\n(total {time.perf_counter() - t0:.0f} s; load average after: "
          f"{', '.join(f'{x:.2f}' for x in os.getloadavg())})")


if __name__ == "__main__":
    main()
