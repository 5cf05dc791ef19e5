"""How much better than F1 can a job-priority rule be on a trace? Random rules around F1, and a lookahead bound.

RLScheduler's kernel network scores every visible job alone from its own features and runs the best-scored
one: it is a priority rule, like F1 (docs/experiments/rlscheduler.md, "What limits the gain over F1"). This script asks
how much room that class leaves above F1 on a trace, without any training:

1. **Random rules around F1.** key = F1's key + a random weighted sum of nine job features (log requested
   time, log processors, their product as F1 uses it, log submit time, log and relative wait, processors'
   share of the machine, fits-now and fits-now x log requested time). For each size ε of the perturbation
   (its spread across jobs as a share of F1's key's spread) it draws `--samples` rules, scores each on
   `--sequences` training sequences as the mean per-sequence ratio to F1's avg bsld (the same sequences for
   every rule, so the sequence's difficulty cancels), then rescores the best rule of each ε on as many fresh
   training sequences and on the disjoint windows of the held-out evaluation zone.
2. **Lookahead** (`--lookahead K`): at every decision try F1's K best-ranked jobs, finish the sequence
   with F1 after each, keep the best. Seeing the future arrivals and true run times, it never does worse
   than F1 on a sequence: a bound on what better decisions are worth, not what an online policy can learn.
   The same planner knowing only the jobs submitted so far and their requested times is an online rule.
   `--clone-episodes N` clones the hindsight planner's decisions into a kernel network (behaviour cloning, as
   the warm start does) and scores the clone on the held-out windows.

    python examples/research/f1_neighbourhood.py --trace default
    python examples/research/f1_neighbourhood.py --trace lublin_256 --preset rlscheduler --cleaning rlscheduler

Times in seconds; the trace's split is `schedrl train`'s (70% training, then 7.5% validation, 22.5%
evaluation); `--workers` processes score rules in parallel.
"""

from __future__ import annotations

import argparse
import time
from multiprocessing import Pool

import numpy as np

FEATURES = ("log10 r", "log10 n", "n/N", "log10 r * n/N", "log10 s", "log10(1+w)", "w/max(r,10)", "fits",
            "fits * log10 r")
"""The perturbation's job features: r requested time, n processors, N the machine, s submit time since the
sequence began, w wait so far, fits: the job fits in the free processors now."""

_CONTEXT: dict = {}


def _setup(trace: str, preset: str, cleaning: str) -> None:
    from schedrl.agents.rlscheduler.config import RLSchedulerEnvConfig
    from schedrl.agents.rlscheduler.env import load_env_workload, sim_config_for

    config = RLSchedulerEnvConfig.from_dict({"trace": trace, "preset": preset, "cleaning": cleaning,
                                             "metric": "bsld", "backfill": "none"})
    _CONTEXT.update(workload=load_env_workload(config), sim_config=sim_config_for(config))


def _static_features(st, machine: float) -> np.ndarray:
    """Per job: the features that do not change while it waits (columns 0-4 of FEATURES)."""
    n = st.req[:, 0]
    l10r = np.log10(np.maximum(st.est, 1.0))
    return np.stack([l10r, np.log10(n), n / machine, l10r * n / machine, np.log10(np.maximum(st.submit, 1.0))], 1)


def f1_key(sim) -> np.ndarray:
    """F1's key of every job of `sim` (the heuristic's own `priority_key`; it does not change while a job waits)."""
    from schedrl.heuristics import keys

    procs = np.asarray(sim.workload.procs_req, dtype=np.float64)
    return np.array([keys.priority_key(keys.F1, sim.state_ref, j, 0.0, procs) for j in range(len(procs))])


def lookahead_pick(sim, f1, key: np.ndarray, candidates: np.ndarray, k: int, online: bool) -> int:
    """The job among `candidates` (F1's `k` best-ranked of them tried) after which F1 finishes `sim` best.

    `online`: the trials know only the jobs submitted so far, and their requested times, not their run times
    (an online planner); otherwise they simulate the rest of the sequence as it will happen (a bound)."""
    from schedrl.metrics import BSLD_TAU, summarize
    from schedrl.sim.state import SimArrays

    here, now = sim.state, sim.now
    known = np.flatnonzero(here.submit <= now)
    best = None
    for j in candidates[np.argsort(key[candidates], kind="stable")[:k]]:
        trial = SimArrays(*(a.copy() for a in here))
        if online:
            trial.submit[trial.submit > now] = 1e12  # unknown jobs arrive after every known one ends
            trial.run[:] = np.minimum(trial.est, trial.limit)
        sim.state = trial
        sim.pick(int(j))
        schedule = f1.run(sim)
        if online:  # avg bsld of the known jobs, with the durations the planner assumed
            run = trial.run[known]
            value = float(np.maximum((schedule.start[known] - trial.submit[known] + run)
                                     / np.maximum(run, BSLD_TAU), 1.0).mean())
        else:
            value = summarize(schedule).value("bsld")
        if best is None or value < best[1] - 1e-9:
            best = (int(j), value)
    sim.state = here
    return best[0]


def run_rule(task: tuple[np.ndarray, int, int]) -> float:
    """Avg bsld of the rule F1 + weights . features on jobs start..start+length-1 (pick-and-wait, no backfilling)."""
    from schedrl.metrics import summarize
    from schedrl.sim import FINISHED, Simulator
    from schedrl.workload.sampling import sequence

    weights, start, length = task
    sim = Simulator(sequence(_CONTEXT["workload"], start, length), _CONTEXT["sim_config"])
    st = sim.state
    machine = float(st.cap[0])
    static = f1_key(sim) + _static_features(st, machine) @ weights[:5]
    l10r = np.log10(np.maximum(st.est, 1.0))
    while sim.advance() != FINISHED:
        q = sim.queue
        if len(q) > 1:
            wait = sim.now - st.submit[q]
            fits = (st.req[q, 0] <= st.free[0]).astype(np.float64)
            key = (static[q] + weights[5] * np.log10(1.0 + wait) + weights[6] * wait / np.maximum(st.est[q], 10.0)
                   + fits * (weights[7] + weights[8] * l10r[q]))
            sim.pick(int(q[np.argmin(key)]))
        else:
            sim.pick(int(q[0]))
    return summarize(sim.schedule()).value("bsld")


def run_lookahead(task: tuple[int, bool, int, int]) -> float:
    """Avg bsld of the one-step lookahead over F1's `k` best-ranked jobs, F1 finishing every trial
    (`lookahead_pick`; `online` as there)."""
    from schedrl.heuristics import get_heuristic
    from schedrl.metrics import summarize
    from schedrl.sim import FINISHED, Simulator
    from schedrl.workload.sampling import sequence

    k, online, start, length = task
    f1 = get_heuristic("f1")
    sim = Simulator(sequence(_CONTEXT["workload"], start, length), _CONTEXT["sim_config"])
    key = f1_key(sim)
    while sim.advance() != FINISHED:
        q = sim.queue.copy()
        sim.pick(int(q[0]) if len(q) == 1 else lookahead_pick(sim, f1, key, q, k, online))
    return summarize(sim.schedule()).value("bsld")


def feature_scales(starts, length) -> tuple[np.ndarray, float]:
    """Each feature's spread (std over the jobs of `starts`' sequences, waits from F1's schedules) and F1's key's."""
    from schedrl.heuristics import get_heuristic
    from schedrl.sim import Simulator
    from schedrl.workload.sampling import sequence

    rows, keys = [], []
    for start in starts:
        sim = Simulator(sequence(_CONTEXT["workload"], start, length), _CONTEXT["sim_config"])
        schedule = get_heuristic("f1").run(sim)
        st = sim.state
        wait = schedule.start - st.submit
        rows.append(np.column_stack([_static_features(st, float(st.cap[0])), np.log10(1.0 + wait),
                                     wait / np.maximum(st.est, 10.0), np.full(len(wait), 0.5),
                                     0.5 * np.log10(np.maximum(st.est, 1.0))]))
        keys.append(f1_key(sim))
    spread = np.concatenate(rows).std(0)
    spread[7] = 0.5  # fits is 0/1 at a decision: spread of a fair coin
    return np.maximum(spread, 1e-9), float(np.concatenate(keys).std())


def clone_planner(trace: str, preset: str, cleaning: str, k: int, episodes: int, held_out, jobs: int,
                  seed: int) -> tuple[float, float, np.ndarray]:
    """Clone the hindsight lookahead's decisions on `episodes` training sequences of the env into a kernel
    network (key features f1,sjf,wfp3,unicep, so F1 itself is exactly learnable); returns the share of the
    planner's decisions that are F1's, the clone's greedy agreement with the planner, and its held-out avg bsld
    per window."""
    import torch

    from schedrl.agents.rlscheduler.env import RLSchedulerEnv
    from schedrl.agents.rlscheduler.keys import OBS_ACTION_MASK, OBS_JOBS
    from schedrl.agents.rlscheduler.modules import module_spec
    from schedrl.agents.rlscheduler.observation import JobFeatures
    from schedrl.agents.rlscheduler.policy import CheckpointPolicy
    from schedrl.agents.rlscheduler.warm_start import Demonstrations, clone, teacher_slot
    from schedrl.eval.policies import run_policy
    from schedrl.heuristics import get_heuristic
    from schedrl.metrics import summarize
    from schedrl.sim import Simulator
    from schedrl.workload.sampling import sequence

    config = {"trace": trace, "preset": preset, "cleaning": cleaning, "metric": "bsld", "backfill": "none",
              "train_fraction": 0.7, "key_features": ("f1", "sjf", "wfp3", "unicep"),
              "norm": JobFeatures.from_trace(_CONTEXT["workload"]).to_dict()}
    env = RLSchedulerEnv(config=dict(config))
    f1 = get_heuristic("f1")
    obs_jobs, masks, slots, same = [], [], [], 0
    for episode in range(episodes):
        obs, _ = env.reset(seed=seed + episode)
        key = f1_key(env.sim)
        while True:
            visible = env._visible
            slot = int(np.flatnonzero(visible == lookahead_pick(env.sim, f1, key, visible, k, False))[0])
            same += slot == teacher_slot(f1, env)
            obs_jobs.append(obs[OBS_JOBS])
            masks.append(obs[OBS_ACTION_MASK])
            slots.append(slot)
            obs, _, terminated, truncated, _ = env.step(slot)
            if terminated or truncated:
                break
    n = len(slots)
    demos = Demonstrations("lookahead", np.stack(obs_jobs), np.stack(masks), np.asarray(slots, np.int64),
                           np.zeros(n, np.float32), np.zeros(episodes), {})
    spec = module_spec("kernel")
    spec.observation_space, spec.action_space = env.observation_space, env.action_space
    torch.manual_seed(seed)
    module = spec.build()
    stats = clone(module, demos, epochs=8, seed=seed)
    policy = CheckpointPolicy(module, dict(config))
    values = np.array([summarize(run_policy(policy, Simulator(sequence(_CONTEXT["workload"], int(s), jobs),
                                                              _CONTEXT["sim_config"]))).value("bsld") for s in held_out])
    return same / n, float(stats["agreement"]), values


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trace", default="default")
    parser.add_argument("--preset", default="standard")
    parser.add_argument("--cleaning", default="default")
    parser.add_argument("--samples", type=int, default=64, help="random rules per perturbation size (default 64)")
    parser.add_argument("--sequences", type=int, default=24, help="training sequences each rule is scored on (24)")
    parser.add_argument("--jobs", type=int, default=1024, help="jobs per sequence (1024)")
    parser.add_argument("--scales", default="0.01,0.03,0.1,0.3", help="perturbation sizes ε (default 0.01,0.03,0.1,0.3)")
    parser.add_argument("--lookahead", type=int, default=4, help="jobs tried per decision by the bound (0: skip it)")
    parser.add_argument("--clone-episodes", type=int, default=0,
                        help="clone the hindsight lookahead's decisions on this many 256-job training sequences into a "
                             "kernel network and score it on the held-out windows (default 0: skip)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()

    from schedrl.heuristics import get_heuristic
    from schedrl.metrics import summarize
    from schedrl.sim import Simulator
    from schedrl.workload.sampling import sequence

    _setup(args.trace, args.preset, args.cleaning)
    n = len(_CONTEXT["workload"])
    train_end = int(0.7 * n)
    evaluation_from = train_end + int(0.25 * (n - train_end))
    rng = np.random.default_rng(args.seed)
    train = rng.integers(0, train_end - args.jobs + 1, args.sequences)
    fresh = rng.integers(0, train_end - args.jobs + 1, args.sequences)
    held_out = list(range(evaluation_from, n - args.jobs + 1, args.jobs))
    if not held_out:
        raise SystemExit(f"error: the evaluation zone of {args.trace} (jobs {evaluation_from}..{n - 1}) is shorter "
                         f"than one {args.jobs}-job window: use a smaller --jobs")
    f1 = get_heuristic("f1")

    def f1_values(starts):
        return np.array([summarize(f1.run(Simulator(sequence(_CONTEXT["workload"], int(s), args.jobs),
                                                    _CONTEXT["sim_config"]))).value("bsld") for s in starts])

    base = {"train": f1_values(train), "fresh": f1_values(fresh), "held_out": f1_values(held_out)}
    spread, key_spread = feature_scales(train[:4], args.jobs)
    print(f"{args.trace}: {n} jobs; training sequences from jobs 0..{train_end - 1}, held-out windows "
          f"{evaluation_from}..{n - 1} ({len(held_out)} disjoint x {args.jobs} jobs); F1 avg bsld: training "
          f"{base['train'].mean():.2f}, fresh training {base['fresh'].mean():.2f}, held out {base['held_out'].mean():.2f}",
          flush=True)
    t0 = time.perf_counter()
    with Pool(args.workers, initializer=_setup, initargs=(args.trace, args.preset, args.cleaning)) as pool:
        zero = np.zeros(len(FEATURES))
        check = np.array(pool.map(run_rule, [(zero, int(s), args.jobs) for s in train[:2]]))
        if not np.allclose(check, base["train"][:2]):
            raise SystemExit(f"error: the zero perturbation does not reproduce F1 ({check} vs {base['train'][:2]})")
        print("\n| ε | rules | better than F1 on the training sequences | best rule: training | fresh training | "
              "held out |\n|---|--:|--:|--:|--:|--:|")
        for eps in (float(x) for x in args.scales.split(",")):
            rules = [eps * key_spread / spread * rng.standard_normal(len(FEATURES)) / np.sqrt(len(FEATURES))
                     for _ in range(args.samples)]
            values = np.array(pool.map(run_rule, [(w, int(s), args.jobs) for w in rules for s in train]))
            ratios = (values.reshape(args.samples, -1) / base["train"]).mean(1)
            best = rules[int(np.argmin(ratios))]
            again = {name: (np.array(pool.map(run_rule, [(best, int(s), args.jobs) for s in starts]))
                            / base[name]).mean() for name, starts in (("fresh", fresh), ("held_out", held_out))}
            print(f"| {eps:g} | {args.samples} | {np.mean(ratios < 1.0):.0%} (median ratio {np.median(ratios):.3f}) | "
                  f"{ratios.min():.3f} | {again['fresh']:.3f} | {again['held_out']:.3f} |", flush=True)
        for online, label in ((False, "sees the future arrivals and run times: a bound"),
                              (True, "knows only the jobs submitted so far and their requested times")):
            if args.lookahead <= 0:
                break
            bound = {name: np.array(pool.map(run_lookahead, [(args.lookahead, online, int(s), args.jobs) for s in starts]))
                     / base[name] for name, starts in (("train", train), ("held_out", held_out))}
            print(f"\nlookahead over F1's {args.lookahead} best-ranked jobs ({label}): mean ratio to F1 "
                  f"{bound['train'].mean():.3f} on the training sequences, {bound['held_out'].mean():.3f} on the "
                  f"held-out windows (per window {np.round(bound['held_out'], 3).tolist()})", flush=True)
    if args.clone_episodes > 0:
        agree_f1, agreement, values = clone_planner(args.trace, args.preset, args.cleaning, max(args.lookahead, 1),
                                                    args.clone_episodes, held_out, args.jobs, args.seed)
        ratio = values / base["held_out"]
        print(f"\nclone of the hindsight lookahead ({args.clone_episodes} training sequences; {agree_f1:.1%} of its "
              f"decisions are F1's): greedy agreement with it {agreement:.1%}; held out: mean ratio to F1 "
              f"{ratio.mean():.3f} (per window {np.round(ratio, 3).tolist()})")
    print(f"\n({time.perf_counter() - t0:.0f} s; ratios are means of per-sequence avg bsld / F1's on the same sequence)")


if __name__ == "__main__":
    main()
