"""`schedrl evaluate CHECKPOINT`: the trained policy as one more column of the `compare` table."""

from __future__ import annotations

import argparse
import sys

from schedrl.cli.options import (
    add_scenario_option, add_sim_options, add_trace_options, given, load_workload, parse_list, parse_starts,
    scenario_with_options,
)
from schedrl.sim.config import BACKFILLS, SimConfig


def add_parser(subparsers, name: str, help_text: str) -> argparse.ArgumentParser:
    p = subparsers.add_parser(name, help=help_text, description=help_text)
    p.add_argument("checkpoint", nargs="+",
                   help="checkpoint directory written by `schedrl train`; several (e.g. DRAS-PG, DRAS-DQL and "
                        "Decima-PG of one trace) make a methods table (see --metrics); on the discrete-time "
                        "cluster (RLSchert, DeepRM) one column each on the same sequences")
    add_scenario_option(p, "the checkpoint's run record, then the defaults. The checkpoint and the scenario's "
                           "baselines on its fixed evaluation sequences (--sequences, --jobs, --seed redraw them in "
                           "its evaluation zone), paired with the best baseline")
    add_trace_options(p, default_from="the checkpoint's training run")
    add_sim_options(p, backfill_many=True, backfill_default=None)
    p.add_argument("--policies", default=None, help="heuristics to compare against (default: the agent's baselines)")
    p.add_argument("--sequences", type=int, default=10, help="random sequences (default 10)")
    p.add_argument("--jobs", type=int, default=1024, help="jobs per sequence (default 1024)")
    p.add_argument("--seed", type=int, default=1, help="seed of the sequence starts (default 1)")
    p.add_argument("--policy-seed", type=int, default=0,
                   help="seed of randomised baselines such as Random (default 0, as in `train`'s final table)")
    p.add_argument("--starts", metavar="I,J,...",
                   help="fixed 0-based start indices (discrete-time agents: sequence seeds, e.g. the `starts` of a "
                        "run's evaluation.json)")
    p.add_argument("--metric", default=None, help="metric (default: the one the policy was trained on)")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true")
    fmt.add_argument("--csv", action="store_true")
    fmt.add_argument("--markdown", action="store_true")
    p.add_argument("--plot", metavar="PNG", help="bar chart of the means")
    table = p.add_argument_group("methods table (several checkpoints, or any of these options)")
    table.add_argument("--metrics", metavar="LIST",
                       help="columns of a methods x metrics table: wait, max_wait, p95_wait, bsld, slowdown, "
                            "turnaround, utilization, fairness, requeued, util:RESOURCE (default with several "
                            "checkpoints: wait,max_wait,slowdown,utilization)")
    table.add_argument("--shares", action="store_true",
                       help="add the shares of jobs and of resource-0 work started ready / reserved / backfilled "
                            "(DRAS Table IV)")
    table.add_argument("--kiviat", metavar="PNG", help="radar chart of the normalised metrics (DRAS Fig. 6)")
    table.add_argument("--bars", metavar="PNG", help="one bar panel per metric, one bar per method (MRSch Fig. 7)")
    p.add_argument("--online", action="store_true",
                   help="also report the policy learning online while it schedules the sequences in order (DRAS "
                        "§V-D/E; DRAS-PG, DRAS-DQL and Decima-PG): one more column per checkpoint, '<name> online'; the "
                        "frozen greedy policy's column stays (sampling seeded by --policy-seed)")
    p.add_argument("--traces", metavar="LIST",
                   help="cross-trace table (RLScheduler Table VII): the checkpoint and the heuristics on each of these "
                        "traces (the training trace on its held-out part), one row per trace")
    p.set_defaults(run=run)
    return p


def run(args: argparse.Namespace) -> int:
    from schedrl.agents import get_agent
    from schedrl.agents.base import OnlineLearning
    from schedrl.agents.checkpoint import CheckpointError, load_policy
    from schedrl.cli.main import UsageError
    from schedrl.eval.compare import choose_starts, compare

    try:  # fails early with a clear message
        policies = [load_policy(c) for c in args.checkpoint]
    except CheckpointError as e:
        raise UsageError(str(e)) from None
    policy = policies[0]
    record = policy.record
    if args.scenario is not None:
        return on_scenario(args, policies)
    methods = len(policies) > 1 or args.metrics is not None or args.shares or args.kiviat is not None \
        or args.bars is not None
    if methods and args.policies is not None:
        raise UsageError("--policies applies to the single-metric table; a methods table uses the agent's baselines")
    if args.traces is not None:
        if methods or args.trace is not None or args.starts is not None:
            raise UsageError("--traces makes its own table: give one checkpoint, without --trace, --starts or the "
                             "methods-table options")
        return cross_trace(args, policy)
    if args.online:
        for c, p in zip(args.checkpoint, policies):
            if not isinstance(get_agent(p.record.agent), OnlineLearning):
                raise UsageError(f"--online: {c} is a {p.record.agent} checkpoint; online learning during evaluation "
                                 "is implemented for dras-pg, dras-dql and decima-pg")
    agent = get_agent(record.agent)
    trained = dict(record.env_config)
    env = agent.env_config_class.from_dict(trained)
    judge = agent.judge(env)
    metric = args.metric or judge.metric
    own_trace = args.trace is None or args.trace == trained.get("trace")
    if judge.generated:  # the discrete-time cluster: its own sequences, baselines and metric
        if args.metrics is not None or args.shares or args.kiviat is not None or args.bars is not None:
            raise UsageError(f"{agent.name} runs on the discrete-time cluster: --metrics, --shares, --kiviat and "
                             "--bars need event-simulator agents (several of its checkpoints make one table of "
                             f"{judge.metric})")
        return evaluate_generated(agent, judge, policies, args)
    for c, p in zip(args.checkpoint[1:], policies[1:]):
        if judge_of(p).generated:
            raise UsageError(f"{c} is a {p.record.agent} checkpoint (the discrete-time cluster): it cannot share a "
                             f"table with {agent.name} (the event simulator)")
    taken = apply_training_defaults(args, trained, record.sim_config)
    backfills = parse_list(args.backfill, BACKFILLS, "backfill strategy")
    workload = judge.load() if own_trace and args.cleaning == trained.get("cleaning", args.cleaning) \
        else load_workload(args)
    if methods:  # the columns are checked before any progress line
        from schedrl.eval.methods import SHARES, parse_columns

        try:
            args.columns = parse_columns(args.metrics, ("procs", "nodes") + tuple(getattr(workload, "capacity", {})))
        except ValueError as e:
            raise UsageError(str(e)) from None
        args.columns += list(SHARES) if args.shares else []
        if args.kiviat and len([c for c in args.columns if c not in SHARES]) < 3:
            raise UsageError(f"a Kiviat chart needs at least 3 metrics, got "
                             f"{len([c for c in args.columns if c not in SHARES])} ({args.metrics})")
    # sequences come from the part of the training trace the agent never trained on
    lo, hi = judge.split_range(len(workload)) if own_trace else (0, len(workload))
    baselines = judge.baselines
    own_semantics = args.policies is None and any(b.sim is not None or b.make is not None for b in baselines)
    try:
        given = parse_starts(args.starts)
        starts = choose_starts(workload, args.jobs, args.sequences, args.seed, given) if given else \
            [lo + s for s in choose_starts(workload[lo:hi], args.jobs, args.sequences, args.seed)]
        if taken:
            print(f"schedrl evaluate: as trained: {', '.join(taken)}", file=sys.stderr)
        if lo:
            print(f"schedrl evaluate: sequences from positions {lo}..{hi - 1} of the trace (held out from training)",
                  file=sys.stderr)
        if methods:
            config = evaluation_config(args, record.sim_config, backfills[0])
            print(methods_output(policies, workload, starts, args, config, own_trace, judge, env))
            return 0
        if own_semantics:  # each baseline under its paper's semantics (DRAS: BinPacking starts jobs only at once)
            config = evaluation_config(args, record.sim_config, backfills[0])
            print(baselines_table(judge, policy, workload, starts, args, metric, config, own_trace))
            return 0
        if args.online:
            raise UsageError("--online reports beside the agent's own baselines: drop --policies")
        heuristics = (parse_list(args.policies, what="policy") if args.policies
                      else list(dict.fromkeys(b.policy for b in baselines)))
        result = compare(workload, heuristics + [f"checkpoint:{args.checkpoint[0]}"], backfills, starts, args.jobs, metric,
                         evaluation_config(args, record.sim_config, backfills[0]), seed=args.policy_seed)
    except ValueError as e:
        raise UsageError(str(e)) from None
    return show(result, args)


def cross_trace(args: argparse.Namespace, policy) -> int:
    """RLScheduler Table VII (`schedrl.eval.crosstrace`): the table, as text, Markdown or JSON."""
    import json

    from schedrl.cli.main import UsageError
    from schedrl.eval import crosstrace

    options = dict(cleaning=args.cleaning, preset=args.preset, backfill=args.backfill, metric=args.metric,
                   jobs=args.jobs, sequences=args.sequences, seed=args.seed, policy_seed=args.policy_seed,
                   augment=getattr(args, "augment", None), augment_seed=getattr(args, "augment_seed", 0),
                   sim_options=dict(discipline=args.discipline, event_order=args.event_order,
                                    allocation=args.allocation, no_kill=args.no_kill, window=args.window))
    try:
        rows = crosstrace.cross_trace(policy, parse_list(args.traces, what="trace"), **options,
                                      done=lambda line: print(f"schedrl evaluate: {line}", file=sys.stderr))
    except ValueError as e:
        raise UsageError(str(e)) from None
    print(json.dumps(rows, indent=2) if args.json else crosstrace.table(rows, markdown=args.markdown))
    return 0


def judge_of(policy):
    """The judge of a loaded checkpoint's run (`Agent.judge` of its recorded env config)."""
    from schedrl.agents import get_agent

    agent = get_agent(policy.record.agent)
    return agent.judge(agent.env_config_class.from_dict(dict(policy.record.env_config)))


def methods_output(policies, workload, starts, args, config, own_trace, judge, env) -> str:
    """The methods x metrics table (`schedrl.eval.methods`) of every checkpoint and the first one's baselines."""
    from schedrl.agents import get_agent
    from schedrl.eval.methods import bars, kiviat, methods_table

    columns = args.columns
    if own_trace:  # every checkpoint's evaluation must be held out from its own training
        for c, p in zip(args.checkpoint, policies):
            other = get_agent(p.record.agent)
            other_env = other.env_config_class.from_dict(dict(p.record.env_config))
            if getattr(other_env, "trace", None) != getattr(env, "trace", None):
                raise ValueError(f"{c} was trained on {getattr(other_env, 'trace', '?')!r}, the first checkpoint on "
                                 f"{getattr(env, 'trace', '?')!r}: pass --trace to evaluate every one on one trace")
            end = other.judge(other_env).held_out_range(len(workload))[0]
            if end == 0 or min(starts) < end:
                raise ValueError(f"{c} trained on jobs 0..{(end or len(workload)) - 1} of {workload.name!r}, which "
                                 f"overlap the evaluation sequences (first start {min(starts)}): train it with a "
                                 "held-out part (--train-fraction) or evaluate on another --trace")
    note = judge.evaluation_note(workload, starts, args.jobs) if own_trace else "another trace"
    table = methods_table(policies, workload, starts, args.jobs, columns, note, sim_config=config, seed=args.policy_seed)
    if args.online:
        for c, label, p in zip(args.checkpoint, list(table.trained), policies):
            other = get_agent(p.record.agent)
            other_env = other.env_config_class.from_dict(dict(p.record.env_config))
            table.methods[f"{label} online"] = other.online_metrics(
                p, c, other_env, workload, starts, args.jobs, seed=args.policy_seed, progress=_online_progress(label))
            table.trained.append(f"{label} online")
    if args.kiviat:
        kiviat(table, args.kiviat)
    if args.bars:
        bars(table, args.bars)
    return table.to_json() if args.json else table.to_markdown() if args.markdown else table.to_text()


def _online_progress(label: str):
    def say(text: str) -> None:
        print(f"schedrl evaluate: {label} {text}", file=sys.stderr, flush=True)
    return say


def baselines_table(judge, policy, workload, starts, args, metric, config, own_trace: bool) -> str:
    """The agent's baselines (each under its own simulator semantics) and the policy on the same sequences."""
    from schedrl.agents import get_agent
    from schedrl.training.report import Evaluation

    values = judge.score_baselines(workload, starts, args.jobs, sim_config=config, seed=args.policy_seed)
    values["RL"] = judge.score_policy(policy, workload, starts, args.jobs)
    if args.online:
        agent = get_agent(policy.record.agent)
        env = agent.env_config_class.from_dict(dict(policy.record.env_config))
        online = agent.online_metrics(policy, args.checkpoint[0], env, workload, starts, args.jobs,
                                      seed=args.policy_seed, progress=_online_progress("RL"))
        values["RL online"] = [m.value(metric) for m in online]
    note = judge.evaluation_note(workload, starts, args.jobs) if own_trace else "another trace"
    return _formatted(Evaluation(workload.name, metric, [int(s) for s in starts], args.jobs, values, note), args)


def show(result, args: argparse.Namespace) -> int:
    """A `Comparison` as the options ask: the bar chart, then JSON, CSV, Markdown or text."""
    if args.plot:
        from schedrl.eval.plots import comparison_bars

        comparison_bars(result, args.plot)
    print(result.to_json() if args.json else result.to_csv() if args.csv else
          result.to_markdown() if args.markdown else result.to_text())
    return 0


def on_scenario(args: argparse.Namespace, policies) -> int:
    """`evaluate CKPT --scenario S`: the checkpoint(s) and the scenario's baselines on its evaluation sequences.

    A trained policy keeps the decisions it was trained to make (DRAS's own choice of backfilled job) and runs under
    the scenario's semantics otherwise; the baselines run as the scenario defines them."""
    from schedrl.agents import get_agent
    from schedrl.cli.main import UsageError
    from schedrl.eval.compare import Comparison
    from schedrl.eval.leaderboard import own_semantics
    from schedrl.scenarios import scoring
    from schedrl.scenarios.scenario import recorded_sha256

    if args.traces is not None or args.online or args.metrics is not None or args.shares or args.kiviat or args.bars:
        raise UsageError("--scenario makes the scenario's table: drop --traces, --online and the methods-table options")
    if given(args, "starts") or given(args, "policies"):
        raise UsageError("--scenario fixes the sequences and the baselines: drop --starts and --policies "
                         "(--sequences, --jobs and --seed redraw the sequences)")
    scenario = scenario_with_options(args, {"sequences": "sequences", "jobs": "jobs", "seed": "seed"})
    judges = [judge_of(p) for p in policies]
    try:
        for p, judge in zip(policies, judges):
            scenario.check_simulator(p.record.agent, judge)
    except ValueError as e:
        raise UsageError(str(e)) from None
    if scenario.generated:
        agent = get_agent(policies[0].record.agent)
        fields = judges[0].sequence_fields()
        differ = [f"{k} {fields[k]!r} vs {v!r}" for k, v in scenario.cluster.items() if k in fields and fields[k] != v]
        if differ:
            raise UsageError(f"{args.checkpoint[0]} was trained on another cluster than scenario {scenario.name!r} "
                             f"({', '.join(differ)})")
        seqs = scoring.sequences(scenario, None, "evaluation")
        args.starts, args.sequences = ",".join(map(str, seqs.ids)), len(seqs.ids)
        args.explicit = args.explicit | {"starts"}
        return evaluate_generated(agent, judges[0], policies, args)
    labels = ["RL"] if len(policies) == 1 else [f"{p.record.agent}#{i + 1}" for i, p in enumerate(policies)]
    sims = {label: own_semantics(scenario, p) for label, p in zip(labels, policies)}
    try:
        workload = scoring.load(scenario, note=lambda line: print(f"schedrl: {line}", file=sys.stderr))
        scores = scoring.score(scenario, dict(zip(labels, policies)), data=workload, policy_sims=sims)
    except ValueError as e:
        raise UsageError(str(e)) from None
    print(f"schedrl evaluate: {scoring.describe(scenario, scores.sequences, len(workload))}", file=sys.stderr)
    for p in policies:
        trained = p.record.scenario or {}
        if recorded_sha256(trained) != scenario.sha256():
            where = (f"scenario {trained['name']} (definition {recorded_sha256(trained)[:12]})" if trained
                     else f"trace {dict(p.record.env_config).get('trace')}")
            print(f"schedrl evaluate: note: this {p.record.agent} checkpoint trained on {where}", file=sys.stderr)
    result = Comparison.from_scores(scores, trained=labels)
    return show(result, args)


def evaluate_generated(agent, judge, policies, args) -> int:
    """Agents whose sequences are generated (RLSchert/DeepRM's Bernoulli arrivals): seeded sequences, the first
    checkpoint's baselines and metric, then one column per checkpoint (e.g. RLSchert next to DeepRM), each run
    under its own env configuration on the same sequences."""
    from schedrl.cli.main import UsageError
    from schedrl.training.report import Evaluation

    if args.trace is not None or args.policies is not None:
        raise UsageError(f"{agent.name} runs on the discrete-time cluster: --trace and --policies do not apply (its "
                         "sequences are seeded: --sequences and --seed, or --starts with sequence seeds such as "
                         "the `starts` of a run's evaluation.json)")
    length = judge.sequence_length
    columns = []
    for path, policy in zip(args.checkpoint, policies):
        theirs = judge_of(policy)
        if not theirs.generated:
            raise UsageError(f"{path} is a {policy.record.agent} checkpoint (the event simulator): it cannot share a "
                             f"table with {agent.name} (the discrete-time cluster)")
        mine, fields = judge.sequence_fields(), theirs.sequence_fields()
        differ = [f"{k} {fields.get(k)!r} vs {v!r}" for k, v in mine.items() if fields.get(k) != v]
        if differ:
            raise UsageError(f"{path} was trained on other sequences than {args.checkpoint[0]} ({', '.join(differ)}): "
                             "evaluate them separately")
        columns.append((policy.record.agent, theirs, policy))
    workload = judge.load()
    given = parse_starts(args.starts)
    ids = given or judge.evaluation_ids(workload, args.sequences, args.seed, length)
    values = judge.score_baselines(workload, ids, length)
    names = [name.upper() for name, _, _ in columns]
    labels = ["RL"] if len(columns) == 1 else [n if names[:i].count(n) == 0 else f"{n}#{names[:i].count(n) + 1}"
                                                for i, n in enumerate(names)]
    for label, (_, theirs, policy) in zip(labels, columns):
        values[label] = theirs.score_policy(policy, workload, ids, length)
    note = "given seeds" if given else "held-out seeds"
    print(_formatted(Evaluation(agent.name, judge.metric, ids, length, values, note, tuple(labels)), args))
    return 0


def _formatted(evaluation, args) -> str:
    import json

    if args.json:
        return json.dumps(evaluation.to_dict(), indent=2)
    return evaluation.to_markdown() if args.markdown else evaluation.to_text()


def evaluation_config(args: argparse.Namespace, trained: SimConfig, backfill: str) -> SimConfig:
    """The run record's SimConfig with the options given now laid over it (`schedrl.eval.as_trained.evaluation_sim`)."""
    from schedrl.eval.as_trained import evaluation_sim

    return evaluation_sim(trained, backfill, preset=args.preset, discipline=args.discipline,
                          event_order=args.event_order, allocation=args.allocation, no_kill=args.no_kill,
                          window=args.window)


def apply_training_defaults(args: argparse.Namespace, trained: dict, sim: SimConfig) -> list[str]:
    """Fill the trace, cleaning, backfill and augmentation options left out from the run record
    (`schedrl.eval.as_trained.as_trained`); returns what was taken."""
    from schedrl.eval.as_trained import Given, as_trained

    given = Given(args.trace, args.cleaning, args.preset, args.backfill, getattr(args, "augment", None),
                  getattr(args, "augment_seed", 0))
    filled, taken = as_trained(given, trained, sim)
    args.trace, args.cleaning, args.backfill = filled.trace, filled.cleaning, filled.backfill
    args.augment, args.augment_seed = filled.augment, filled.augment_seed
    return taken