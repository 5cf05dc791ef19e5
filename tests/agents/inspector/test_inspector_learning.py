"""The inspector learns to reject where rejecting is better: PPO with a tiny budget on `block_then_burst`, where every
base heuristic starts a whole-machine 5,000-s job just before eight short jobs arrive. The untrained policy accepts
(it schedules as F1: the check below fails for it), the trained one must reject that one proposal and accept the
rest."""

from __future__ import annotations

from argparse import Namespace

from base_rule_cases import block_then_burst, write_swf
from schedrl.agents import get_agent
from schedrl.heuristics import get_heuristic
from schedrl.metrics import summarize
from schedrl.sim import Simulator

ITERATIONS = 40


def greedy_bsld(agent, module, env_config, jobs) -> tuple[float, list[bool]]:
    """Bounded slowdown of the greedy policy on `jobs`, and its decision at each inspection (True: reject)."""
    policy = agent.policy_from_module(module, env_config.to_dict())
    decisions = []
    defer = policy.defer

    def logged(sim):
        decisions.append(defer(sim))
        return decisions[-1]

    policy.defer = logged
    return summarize(Simulator(jobs, env_config.sim_config()).run(policy)).value("bsld"), decisions


def test_ppo_learns_to_reject_the_blocking_job(tmp_path, ray_session):
    agent = get_agent("inspector")
    jobs = block_then_burst()
    trace = write_swf(jobs, tmp_path / "case.swf")
    args = Namespace(trace=str(trace), cleaning="none", preset="standard", base="f1", metric="bsld", backfill="none",
                     window=0, sequence_length=len(jobs), train_fraction=1.0, validation_share=0.25,
                     num_env_runners=0, envs_per_runner=4, num_gpus_per_learner=0.0, seed=0, runner_resources=None,
                     batch_size=256, minibatch_size=64, epochs=6, lr=3e-3, entropy_coeff=0.0, hidden=None,
                     initial_reject=None,
                     # the blocking job is proposed alone on an idle machine: a rejection that pays only through jobs
                     # not yet submitted, which `pays` never offers
                     reject_where="any")
    env, settings = agent.configure(args)
    prepared = agent.prepare(env, settings, {}, log=lambda line: None).env_config
    sequence = prepared.workload()  # the trace read back: one window, start 0
    base = summarize(get_heuristic("f1").run(Simulator(sequence, prepared.sim_config()))).value("bsld")
    assert base > 40
    algo = agent.algorithm_config(prepared, settings).build_algo()
    try:
        untrained, decisions = greedy_bsld(agent, algo.get_module(), prepared, sequence)
        assert untrained == base and not any(decisions)  # the check below fails for a policy that never rejects
        for iteration in range(1, ITERATIONS + 1):  # noqa: B007  (reported after the loop)
            algo.train()
            value, decisions = greedy_bsld(agent, algo.get_module(), prepared, sequence)
            if value < 1.1:
                break
    finally:
        algo.stop()
    print(f"learned in {iteration} iterations: bsld {value:.3f}, base {base:.2f}")
    assert decisions[0] and not any(decisions[1:]), (iteration, decisions)
    assert value < 1.1 and value < base / 40, (iteration, value, base)
