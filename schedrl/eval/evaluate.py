"""Evaluating trained checkpoints: what `schedrl evaluate CHECKPOINT...` computes, callable from Python.

`evaluate(policies, request)` is the table of loaded checkpoints (`schedrl.agents.checkpoint.load_policy`) next to
their agent's baselines, on held-out sequences of the training trace (or of another one) or on generated seeds;
`on_scenario(policies, scenario)` the same on a scenario's fixed evaluation sequences; `cross_trace` (RLScheduler
Table VII) lives in `schedrl.eval.crosstrace`. Each returns a table object with `to_text`, `to_markdown` and a JSON
form (`render`): a `schedrl.eval.compare.Comparison`, a `schedrl.eval.evaluation.Evaluation` or a
`schedrl.eval.methods.MethodsTable`. Bad input is a ValueError with one line naming what and where.

Where the sequences are trace windows that must share jobs (a zone shorter than their total length), every
paired interval counts only the disjoint windows that fit (`Judge.independent`, `schedrl.eval.paired`).

The CLI (`schedrl.cli.evaluate`) only parses the options into a `Request`, calls these and prints.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from schedrl.eval.as_trained import Given, as_trained, evaluation_sim
from schedrl.eval.compare import Comparison
from schedrl.scenarios.semantics import comparison_semantics, trained_note
from schedrl.sim.config import BACKFILLS, SimConfig

Say = Callable[[str], None]


@dataclass(frozen=True)
class Request(Given):
    """What an evaluation was asked for (None: not given, taken from the run record or the defaults): the trace
    options of `Given` (its `backfill` one strategy, or several comma-separated: one table row each), then these."""

    discipline: str | None = None
    event_order: str | None = None
    allocation: str | None = None
    no_kill: bool = False
    window: int = 0
    policies: tuple[str, ...] | None = None
    """Heuristics to compare against (default: the agent's baselines)."""
    sequences: int = 10
    jobs: int = 1024
    seed: int = 1
    policy_seed: int = 0
    starts: tuple[int, ...] | None = None
    """Fixed start positions (generated sequences: seeds)."""
    metric: str | None = None
    metrics: str | None = None
    """Columns of a methods x metrics table (`schedrl.eval.methods.parse_columns`)."""
    shares: bool = False
    kiviat: str | None = None
    bars: str | None = None
    online: bool = False

    @property
    def methods_options(self) -> bool:
        return self.metrics is not None or self.shares or self.kiviat is not None or self.bars is not None


def judge_of(policy):
    """The judge of a loaded checkpoint's run (`Agent.judge` of its recorded env config)."""
    from schedrl.agents import get_agent

    agent = get_agent(policy.record.agent)
    return agent.judge(agent.env_config_class.from_dict(dict(policy.record.env_config)))


def _seeded(judge) -> bool:
    """Evaluate's one question about the simulator: its two tables differ in options and layout (trace windows: the
    as-trained trace options, a `compare` or methods table; generated seeds: one column per checkpoint)."""
    return judge.generated


def _quiet(line: str) -> None:
    pass


def _parse_list(text: str, allowed=None, what: str = "value") -> list[str]:
    """`a,b,c` -> [a, b, c], as the CLI's lists (an empty entry, or with `allowed` an unknown one, is a ValueError)."""
    items = [t.strip() for t in text.split(",")]
    if not any(items):
        raise ValueError(f"empty {what} list")
    if not all(items):
        raise ValueError(f"{what} list {text!r} has an empty entry: remove the stray comma")
    bad = [t for t in items if allowed is not None and t not in allowed]
    if bad:
        raise ValueError(f"unknown {what} {', '.join(bad)}; choose from {', '.join(allowed)}")
    return items


def evaluate(policies: Sequence, paths: Sequence[str], request: Request = Request(), *, say: Say = _quiet,
             note: Say = _quiet):
    """The table of `policies` (loaded checkpoints; `paths` name them in messages and columns) and the first one's
    agent's baselines. One policy: a single-metric table (each baseline under its own semantics where the agent has
    such baselines, else `schedrl.eval.compare.compare` with `request.policies`); several policies, or any methods
    option: the methods x metrics table (`schedrl.eval.methods`); generated sequences: one column per checkpoint.
    `say` gets progress lines ("as trained: ...", where the sequences come from), `note` the data's notes."""
    from schedrl.agents import get_agent
    from schedrl.agents.base import OnlineLearning

    policy = policies[0]
    record = policy.record
    methods = len(policies) > 1 or request.methods_options
    if methods and request.policies is not None:
        raise ValueError("--policies applies to the single-metric table; a methods table uses the agent's baselines")
    if request.online:
        for c, p in zip(paths, policies):
            if not isinstance(get_agent(p.record.agent), OnlineLearning):
                raise ValueError(f"--online: {c} is a {p.record.agent} checkpoint; online learning during evaluation "
                                 "is implemented for dras-pg, dras-dql and decima-pg")
    agent = get_agent(record.agent)
    trained = dict(record.env_config)
    env = agent.env_config_class.from_dict(trained)
    judge = agent.judge(env)
    if request.methods_options:
        judge.trace_only(f"{agent.name} runs on the discrete-time cluster: --metrics, --shares, --kiviat and --bars "
                         f"need event-simulator agents (several of its checkpoints make one table of {judge.metric})")
    if _seeded(judge):
        return evaluate_generated(policies, paths, request)
    for c, p in zip(paths[1:], policies[1:]):
        judge.check_shares_table(judge_of(p), f"{c} is a {p.record.agent} checkpoint", agent.name)
    metric = request.metric or judge.metric
    own_trace = request.trace is None or request.trace == trained.get("trace")
    filled, taken = as_trained(request, trained, record.sim_config)
    backfills = _parse_list(filled.backfill, BACKFILLS, "backfill strategy")
    if own_trace and filled.cleaning == trained.get("cleaning", filled.cleaning):
        workload = judge.load()
    else:
        from schedrl.scenarios.workload import WorkloadSpec

        workload = WorkloadSpec(filled.trace, filled.cleaning, request.preset or "standard", filled.augment,
                                filled.augment_seed).load(note=note)
    columns = None
    if methods:  # the columns are checked before any progress line
        from schedrl.eval.methods import SHARES, parse_columns

        columns = parse_columns(request.metrics, ("procs", "nodes") + tuple(getattr(workload, "capacity", {})))
        columns += list(SHARES) if request.shares else []
        if request.kiviat and len([c for c in columns if c not in SHARES]) < 3:
            raise ValueError(f"a Kiviat chart needs at least 3 metrics, got "
                             f"{len([c for c in columns if c not in SHARES])} ({request.metrics})")
    # sequences come from the part of the training trace the agent never trained on
    lo, hi = judge.split_range(len(workload)) if own_trace else (0, len(workload))
    baselines = judge.baselines
    from schedrl.eval.compare import choose_starts, compare

    starts = choose_starts(workload, request.jobs, request.sequences, request.seed, list(request.starts)) \
        if request.starts else \
        [lo + s for s in choose_starts(workload[lo:hi], request.jobs, request.sequences, request.seed)]
    if taken:
        say(f"as trained: {', '.join(taken)}")
    if lo:
        say(f"sequences from positions {lo}..{hi - 1} of the trace (held out from training)")
    # the comparison's one semantics: the first run's record under the options given now, every row under it
    config = comparison_semantics(
        evaluation_sim(record.sim_config, backfills[0], preset=request.preset, discipline=request.discipline,
                       event_order=request.event_order, allocation=request.allocation, no_kill=request.no_kill,
                       window=request.window), policies)
    if request.online:  # online learning runs in the agent's own env, which knows only its training semantics
        for c, p in zip(paths, policies):
            differ = judge_of(p).sim.differences(config)
            if differ:
                raise ValueError(f"--online: {c} learns online in its own env, under its training semantics, and this "
                                 f"table runs under others ({', '.join(differ)}): drop --online or the options that "
                                 "change them")
    note_text = judge.evaluation_note(workload, starts, request.jobs) if own_trace else "another trace"
    if methods:
        return methods_output(policies, paths, workload, starts, request, columns, config, own_trace, note_text, say)
    if request.policies is None and judge.runs_baselines:  # baselines with a backfilling or a make of their own
        return baselines_table(judge, policy, paths[0], workload, starts, request, metric, config, note_text, say)
    if request.online:
        raise ValueError("--online reports beside the agent's own baselines: drop --policies")
    heuristics = list(request.policies) if request.policies else list(dict.fromkeys(b.policy for b in baselines))
    result = compare(workload, heuristics + [f"checkpoint:{paths[0]}"], backfills, starts, request.jobs, metric, config,
                     seed=request.policy_seed)
    for line in result.notes:
        say(line)
    return result.counting(judge.independent(workload, starts, request.jobs))


def methods_output(policies, paths, workload, starts, request: Request, columns, config: SimConfig, own_trace: bool,
                   note: str, say: Say = _quiet):
    """The methods x metrics table (`schedrl.eval.methods`) of every checkpoint and the first one's baselines; its
    Kiviat and bar charts where asked."""
    from schedrl.agents import get_agent
    from schedrl.eval.methods import bars, kiviat, methods_table

    if own_trace:  # every checkpoint's evaluation must be held out from its own training
        env = judge_env(policies[0])
        for c, p in zip(paths, policies):
            other_env = judge_env(p)
            if getattr(other_env, "trace", None) != getattr(env, "trace", None):
                raise ValueError(f"{c} was trained on {getattr(other_env, 'trace', '?')!r}, the first checkpoint on "
                                 f"{getattr(env, 'trace', '?')!r}: pass --trace to evaluate every one on one trace")
            end = judge_of(p).held_out_range(len(workload))[0]
            if end == 0 or min(starts) < end:
                raise ValueError(f"{c} trained on jobs 0..{(end or len(workload)) - 1} of {workload.name!r}, which "
                                 f"overlap the evaluation sequences (first start {min(starts)}): train it with a "
                                 "held-out part (--train-fraction) or evaluate on another --trace")
    table = methods_table(policies, workload, starts, request.jobs, columns, note, sim_config=config,
                          seed=request.policy_seed)
    for label, p in zip(table.trained, policies):
        line = trained_note(label, p, config)
        if line:
            say(line)
    if request.online:
        for c, label, p in zip(paths, list(table.trained), policies):
            other = get_agent(p.record.agent)
            table.methods[f"{label} online"] = other.online_metrics(
                p, c, judge_env(p), workload, starts, request.jobs, seed=request.policy_seed,
                progress=lambda text, label=label: say(f"{label} {text}"))
            table.trained.append(f"{label} online")
            table.semantics[f"{label} online"] = table.semantics[label]
    if request.kiviat:
        kiviat(table, request.kiviat)
    if request.bars:
        bars(table, request.bars)
    return table


def judge_env(policy):
    """A loaded checkpoint's recorded env config, as its agent's env config class."""
    from schedrl.agents import get_agent

    return get_agent(policy.record.agent).env_config_class.from_dict(dict(policy.record.env_config))


def baselines_table(judge, policy, path: str, workload, starts, request: Request, metric: str, config: SimConfig,
                    note: str, say: Say = _quiet):
    """The agent's baselines (each under its own simulator semantics) and the policy on the same sequences."""
    from schedrl.agents import get_agent
    from schedrl.eval.evaluation import Evaluation
    from schedrl.scenarios.semantics import row_semantics

    values = judge.score_baselines(workload, starts, request.jobs, sim_config=config, seed=request.policy_seed)
    values["RL"] = judge.score_policy(policy, workload, starts, request.jobs, sim_config=config)
    semantics = {b.name: row_semantics(config, b.sim.backfill if b.sim is not None else None) for b in judge.baselines}
    semantics["RL"] = config
    line = trained_note("RL", policy, config)
    if line:
        say(line)
    if request.online:
        online = get_agent(policy.record.agent).online_metrics(policy, path, judge_env(policy), workload, starts,
                                                               request.jobs, seed=request.policy_seed,
                                                               progress=lambda text: say(f"RL {text}"))
        values["RL online"] = [m.value(metric) for m in online]
        semantics["RL online"] = config
    return Evaluation(workload.name, metric, [int(s) for s in starts], request.jobs, values, note,
                      independent=judge.independent(workload, starts, request.jobs), semantics=semantics)


def evaluate_generated(policies, paths, request: Request = Request()):
    """Agents whose sequences are generated (RLSchert/DeepRM's Bernoulli arrivals): seeded sequences, the first
    checkpoint's baselines and metric, then one column per checkpoint (e.g. RLSchert next to DeepRM), each run
    under its own env configuration on the same sequences."""
    from schedrl.agents import get_agent
    from schedrl.eval.evaluation import Evaluation

    judge = judge_of(policies[0])
    agent = get_agent(policies[0].record.agent)
    if request.trace is not None or request.policies is not None:
        raise ValueError(f"{agent.name} runs on the discrete-time cluster: --trace and --policies do not apply (its "
                         "sequences are seeded: --sequences and --seed, or --starts with sequence seeds such as "
                         "the `starts` of a run's evaluation.json)")
    given = [option for option, value in (("--preset", request.preset), ("--backfill", request.backfill),
                                          ("--discipline", request.discipline), ("--event-order", request.event_order),
                                          ("--allocation", request.allocation), ("--no-kill", request.no_kill),
                                          ("--window", request.window)) if value]
    if given:
        raise ValueError(f"{given[0]} does not apply to {paths[0]}: {agent.name} runs on the discrete-time cluster, "
                         "whose semantics its run fixes (the event simulator's options do not reach it)")
    length = judge.sequence_length
    columns = []
    for path, policy in zip(paths, policies):
        theirs = judge_of(policy)
        judge.check_shares_table(theirs, f"{path} is a {policy.record.agent} checkpoint", agent.name)
        mine, fields = judge.sequence_fields(), theirs.sequence_fields()
        differ = [f"{k} {fields.get(k)!r} vs {v!r}" for k, v in mine.items() if fields.get(k) != v]
        if differ:
            raise ValueError(f"{path} was trained on other sequences than {paths[0]} ({', '.join(differ)}): "
                             "evaluate them separately")
        columns.append((policy.record.agent, theirs, policy))
    workload = judge.load()
    given = list(request.starts) if request.starts else None
    ids = given or judge.evaluation_ids(workload, request.sequences, request.seed, length)
    values = judge.score_baselines(workload, ids, length)
    names = [name.upper() for name, _, _ in columns]
    labels = ["RL"] if len(columns) == 1 else [n if names[:i].count(n) == 0 else f"{n}#{names[:i].count(n) + 1}"
                                                for i, n in enumerate(names)]
    for label, (_, theirs, policy) in zip(labels, columns):
        values[label] = theirs.score_policy(policy, workload, ids, length)
    note = "given seeds" if given else "held-out seeds"
    return Evaluation(agent.name, judge.metric, ids, length, values, note, tuple(labels),
                      independent=judge.independent(workload, ids, length))


def on_scenario(policies, paths, scenario, *, say: Say = _quiet, note: Say = _quiet):
    """The checkpoint(s) and `scenario`'s baselines on its evaluation sequences (`Scenario.overridden` redraws them).

    A trained policy keeps the decisions it was trained to make (DRAS's own choice of backfilled job) and runs under
    the scenario's semantics otherwise; the baselines run as the scenario defines them. `say` also notes a checkpoint
    trained on another scenario (or another definition of this one)."""
    from schedrl.scenarios import scoring
    from schedrl.scenarios.protocol import RunProtocol
    from schedrl.scenarios.scenario import recorded_sha256

    judges = [judge_of(p) for p in policies]
    for p, judge in zip(policies, judges):
        scenario.check_simulator(p.record.agent, judge)
    scenario.check_cluster(judges[0], paths[0])
    if _seeded(judges[0]):
        seqs = scoring.sequences(scenario, None, "evaluation")
        return evaluate_generated(policies, paths, Request(starts=tuple(seqs.ids), sequences=len(seqs.ids)))
    labels = ["RL"] if len(policies) == 1 else [f"{p.record.agent}#{i + 1}" for i, p in enumerate(policies)]
    shared = scenario.comparison_semantics(policies)  # every row's, on a trace scenario (scoring.score resolves it)
    sims = None if shared is not None else \
        {label: RunProtocol(judge, scenario).policy_semantics(p) for label, p, judge in zip(labels, policies, judges)}
    workload = scoring.load(scenario, note=note)
    scores = scoring.score(scenario, dict(zip(labels, policies)), data=workload, policy_sims=sims)
    say(scoring.describe(scenario, scores.sequences, len(workload)))
    for label, p in zip(labels, policies):
        line = trained_note(label, p, scores.semantics[label]) if shared is not None else None
        if line:
            say(line)
    for p in policies:
        trained = p.record.scenario or {}
        if recorded_sha256(trained) != scenario.sha256():
            where = (f"scenario {trained['name']} (definition {recorded_sha256(trained)[:12]})" if trained
                     else f"trace {dict(p.record.env_config).get('trace')}")
            say(f"note: this {p.record.agent} checkpoint trained on {where}")
    from schedrl.eval.policies import trained_labels

    table = Comparison.from_scores(scores, trained=labels).counting(scores.sequences.independent)
    return table.judged(scenario.reference, trained_labels(paths, labels))  # the reference its validation chose


def render(table, fmt: str = "text", plot: str | None = None) -> str:
    """A table of `evaluate`/`on_scenario` as `text`, `markdown`, `json` or `csv` (a `Comparison`; the others print
    text for csv); `plot`: also the bar chart of a `Comparison`'s means, written there."""
    import json

    from schedrl.eval.methods import MethodsTable

    if isinstance(table, Comparison):
        if plot:
            from schedrl.eval.plots import comparison_bars

            comparison_bars(table, plot)
        return {"json": table.to_json, "csv": table.to_csv, "markdown": table.to_markdown}.get(fmt, table.to_text)()
    if isinstance(table, MethodsTable):
        return table.to_json() if fmt == "json" else table.to_markdown() if fmt == "markdown" else table.to_text()
    if fmt == "json":
        return json.dumps(table.to_dict(), indent=2)
    return table.to_markdown() if fmt == "markdown" else table.to_text()


__all__ = ["Request", "evaluate", "evaluate_generated", "judge_of", "on_scenario", "render"]
