"""`Scenario`: what a policy is trained and judged on, as one object.

A scenario owns the workload (trace, cleaning, preset, augmentation), the simulator semantics (a
`SimConfig` for trace scenarios, the discrete-time cluster for generated ones), the held-out split, the
validation and evaluation sequences (count, length, seed: fixed by the definition), the objective metric, the
baseline heuristics with how each is run, and the reference heuristic (chosen on the validation sequences
and written into the definition, never picked on the evaluation sequences). It also says which agents it was
written for and the options each of them takes to train on it (`schedrl train AGENT --scenario NAME`).

Definitions are plain data (`to_dict` / `from_dict`, YAML files for a user's own, `schedrl scenarios show`);
`sha256` is the hash of the canonical definition that run records store.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Collection, Mapping

from schedrl.scenarios.split import Split
from schedrl.scenarios.workload import WorkloadSpec
from schedrl.sim.config import BACKFILLS, SimConfig


PLACEMENTS = ("random", "disjoint", "overlapping")
"""How a trace scenario's windows sit in their zone: `random` (seeded distinct starts; refused where they could not
all be disjoint), `disjoint` (side by side: seeded slots of a tiling of the zone, each window an independent sample) or
`overlapping` (said in the definition: windows that must share jobs, counted as the disjoint windows that fit)."""


@dataclass(frozen=True)
class SequenceSpec:
    """How many sequences of how many jobs, drawn with which seed (in a split's zone, or as generated seeds)."""

    count: int = 10
    jobs: int = 1024
    """Jobs per sequence (trace scenarios; a generated scenario's sequences are `cluster.simu_len` steps)."""
    seed: int = 0
    placement: str = "random"
    """`PLACEMENTS`: how the windows sit in their zone (trace scenarios)."""
    trace: str | None = None
    """A held-out source of their own (evaluation only): a catalog trace or SWF path, read with the scenario's
    cleaning, whose whole length is the zone (e.g. an independent draw of the training trace's workload model where
    the paper's trace is too short to hold the windows). None: the scenario's trace and split."""

    def check(self, where: str) -> None:
        for name in ("count", "jobs", "seed"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < (0 if name == "seed" else 1):
                raise ValueError(f"{where}.{name} must be an integer >= {0 if name == 'seed' else 1}, got {value!r}")
        if self.placement not in PLACEMENTS:
            raise ValueError(f"{where}.placement must be one of {', '.join(PLACEMENTS)}, got {self.placement!r}")
        if self.trace is not None and (not isinstance(self.trace, str) or not self.trace.strip()):
            raise ValueError(f"{where}.trace must be a catalog name or a path, got {self.trace!r}")

    def to_dict(self, generated: bool = False) -> dict[str, Any]:
        """The definition's form: count and seed (and jobs on a trace), then placement and trace where not default."""
        out: dict[str, Any] = {"count": self.count, "seed": self.seed}
        if not generated:
            out["jobs"] = self.jobs
            if self.placement != "random":
                out["placement"] = self.placement
            if self.trace is not None:
                out["trace"] = self.trace
        return out


@dataclass(frozen=True)
class BaselineSpec:
    """A heuristic of the scenario and how it runs: under the scenario's `SimConfig`, or with another backfilling
    (DRAS's BinPacking, Random and Optimization start jobs only at once, without EASY)."""

    policy: str
    """Heuristic name (`schedrl.heuristics.HEURISTICS`, or the discrete-time cluster's for generated scenarios)."""
    backfill: str | None = None
    """Backfilling for this baseline (`schedrl.sim.config.BACKFILLS`); None: the scenario's."""
    label: str | None = None
    """Column label (default: the policy upper-cased, with `+EASY` etc. when the scenario backfills)."""

    def name(self, sim: SimConfig | None) -> str:
        if self.label:
            return self.label
        backfill = self.backfill if self.backfill is not None else (sim.backfill if sim is not None else "none")
        return self.policy.upper() + ("" if backfill == "none" else "+" + backfill.upper())

    def sim_config(self, sim: SimConfig) -> SimConfig:
        from dataclasses import replace

        return sim if self.backfill is None else replace(sim, backfill=self.backfill)

    @classmethod
    def parse(cls, item: Any, where: str) -> "BaselineSpec":
        if isinstance(item, str):
            return cls(item)
        if isinstance(item, Mapping):
            unknown = sorted(set(item) - {"policy", "backfill", "label"})
            if unknown or "policy" not in item:
                raise ValueError(f"{where}: a baseline is a heuristic name or a mapping with `policy` (and optional "
                                 f"`backfill`, `label`); got {dict(item)!r}")
            return cls(**dict(item))
        raise ValueError(f"{where}: a baseline is a heuristic name or a mapping, got {item!r}")

    def to_dict(self) -> dict[str, Any] | str:
        if self.backfill is None and self.label is None:
            return self.policy
        return {k: v for k, v in (("policy", self.policy), ("backfill", self.backfill), ("label", self.label))
                if v is not None}


UNJUDGED_KEYS = ("description", "paper", "agents")
"""Keys of a definition that do not change how a policy is trained and judged: left out of its hash."""


def definition_sha256(definition: Mapping[str, Any]) -> str:
    """The hash of a scenario definition (a `Scenario.to_dict()`, e.g. one a run record stored): sorted JSON of every
    key but `UNJUDGED_KEYS`."""
    judged = {k: v for k, v in definition.items() if k not in UNJUDGED_KEYS}
    return hashlib.sha256(json.dumps(judged, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def recorded_sha256(recorded: Mapping[str, Any] | None) -> str | None:
    """The hash, by today's rule, of the scenario a run record stored (`Scenario.record()`): recomputed from the
    definition it kept (records written before the rule hashed the prose too), else the hash it holds."""
    if not recorded:
        return None
    if isinstance(recorded.get("definition"), Mapping):
        return definition_sha256(recorded["definition"])
    return recorded.get("sha256")


_TOP_KEYS = ("name", "description", "paper", "agents", "workload", "sim", "cluster", "split", "validation",
             "evaluation", "metric", "baselines", "reference", "options")


@dataclass(frozen=True)
class Scenario:
    """One named setup: the data, the semantics, the protocol, the objective and the baselines."""

    name: str
    description: str
    metric: str
    """Objective (`schedrl.metrics.METRICS` key; generated scenarios: the cluster's episode metric, `slowdown`)."""
    baselines: tuple[BaselineSpec, ...]
    reference: str
    """Label of the reference baseline: the best on the validation sequences (`scenarios check` re-derives it)."""
    workload: WorkloadSpec | None = None
    """Trace scenarios: the jobs. None for a generated scenario."""
    sim: SimConfig | None = None
    """Trace scenarios: the simulator semantics. None for a generated scenario."""
    cluster: Mapping[str, Any] | None = None
    """Generated scenarios: the discrete-time cluster (`schedrl.dtsim.DTSimConfig` fields) and `jobs`
    (`vasp`, the real VASP jobs, or `synthetic`). None for a trace scenario."""
    split: Split = field(default_factory=Split)
    validation: SequenceSpec = field(default_factory=lambda: SequenceSpec(count=5))
    evaluation: SequenceSpec = field(default_factory=SequenceSpec)
    agents: tuple[str, ...] = ()
    """Agents the scenario was written for (`schedrl train AGENT --scenario NAME` refuses others)."""
    options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """Per agent (or `*` for every agent): `schedrl train` option values (argparse names, e.g. `window: 10`) that
    set the agent up for this scenario; explicit command-line options override them."""
    paper: str = ""
    """Where the setup comes from (paper and section)."""

    generated: ClassVar[bool]
    """Sequences are generated on the discrete-time cluster (seeds), not windows of a trace: `GeneratedScenario`."""
    id_kind: ClassVar[str]
    """What a sequence id is: `starts` (positions in the trace) or `seeds` (generated sequences)."""
    baseline_rules: ClassVar[tuple[str, ...]] = ()
    """Rules a baseline may add to its heuristic (`sjf+kill` on the discrete-time cluster)."""

    def __new__(cls, *args: Any, **kwargs: Any) -> "Scenario":
        """`Scenario(...)` is a `TraceScenario` (a `workload`) or a `GeneratedScenario` (a `cluster`)."""
        if cls is Scenario:
            cluster = kwargs["cluster"] if "cluster" in kwargs else (args[7] if len(args) > 7 else None)
            cls = GeneratedScenario if cluster is not None else TraceScenario
        return super().__new__(cls)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name or any(c.isspace() for c in self.name):
            raise ValueError(f"scenario name must be a non-empty word, got {self.name!r}")
        where = f"scenario {self.name!r}"
        if (self.workload is None) == (self.cluster is None):
            raise ValueError(f"{where}: give either `workload` (a trace scenario) or `cluster` (a generated one)")
        if (self.cluster is not None) != self.generated:
            raise ValueError(f"{where}: a {type(self).__name__} takes " + ("a `cluster`" if self.generated else
                                                                          "a `workload`"))
        known = self._check_kind(where)
        if not self.baselines:
            raise ValueError(f"{where}: needs at least one baseline heuristic")
        for b in self.baselines:
            name, _, rule = b.policy.lower().partition("+")
            if name not in known or (rule and rule not in self.baseline_rules):
                raise ValueError(f"{where}: baseline {b.policy!r} is not a heuristic of this simulator; choose from "
                                 f"{', '.join(known)}")
        labels = self.labels()
        if len(set(labels)) != len(labels):
            raise ValueError(f"{where}: two baselines share a label ({', '.join(labels)}): give one a `label`")
        if self.reference not in labels:
            raise ValueError(f"{where}: reference {self.reference!r} is not one of its baselines "
                             f"({', '.join(labels)})")
        self.validation.check(f"{where}: validation")
        self.evaluation.check(f"{where}: evaluation")
        if self.validation.trace is not None:
            raise ValueError(f"{where}: validation.trace: only the evaluation sequences may come from a trace of "
                             f"their own (training validates on its own trace's validation zone)")
        self._check_parts(where)
        for agent, opts in self.options.items():
            if not isinstance(opts, Mapping):
                raise ValueError(f"{where}: options.{agent} must be a mapping of option -> value")

    def _check_kind(self, where: str) -> Collection[str]:
        """Check what this kind of scenario requires (ValueError); the heuristics its baselines may name."""
        raise NotImplementedError

    def _check_parts(self, where: str) -> None:
        """Check the split and sequences this kind of scenario may have (ValueError)."""

    # ------------------------------------------------------------------ what it is
    def trace_only(self, message: str) -> None:
        """ValueError(`message`) where this scenario's sequences are generated: a command or protocol that needs trace
        windows (`simulate`, `compare`, the inspector's probe) refuses it with its own words."""

    def data_summary(self) -> str:
        """The data in a few words (`schedrl scenarios list`): the trace (and augmentation), or the generated jobs."""
        raise NotImplementedError

    def training_summary(self) -> str:
        """What training on this scenario is judged on, in one phrase (`schedrl train --scenario`)."""
        raise NotImplementedError

    def describe(self) -> str:
        """The scenario in full, for people (`schedrl scenarios show NAME`)."""
        lines = [f"{self.name}: {self.description}"]
        if self.paper:
            lines.append(f"  from:        {self.paper}")
        lines.append(f"  agents:      {', '.join(self.agents) or 'any'}")
        lines += self._describe_data()
        lines.append(f"  metric:      {self.metric}")
        lines.append(f"  baselines:   {', '.join(self.labels())}")
        lines.append(f"  reference:   {self.reference} (the best baseline on the validation sequences)")
        for agent, opts in self.options.items():
            lines.append(f"  options {agent}: " + " ".join(f"--{k.replace('_', '-')} {v}" for k, v in opts.items()))
        lines.append(f"  sha256:      {self.sha256()}")
        return "\n".join(lines)

    def labels(self) -> list[str]:
        return [b.name(self.sim) for b in self.baselines]

    def baseline(self, label: str) -> BaselineSpec:
        for b in self.baselines:
            if b.name(self.sim) == label:
                return b
        raise KeyError(label)

    def _describe_data(self) -> list[str]:
        """`describe`'s lines on the data, the semantics, the split and the sequences."""
        raise NotImplementedError

    def options_for(self, agent: str) -> dict[str, Any]:
        """The `schedrl train` option values this scenario gives `agent` (the `*` entry, then the agent's own)."""
        return {**dict(self.options.get("*", {})), **dict(self.options.get(agent, {}))}

    def agent_options(self, agent: str) -> dict[str, Any]:
        """What training `agent` on this scenario sets, by option name (`schedrl train` dests, which are also the env
        config field names of a sweep file's `env:` section): the workload, semantics, metric and split where the agent
        has such options, the evaluation sequences, then the scenario's own options for the agent. Keys the agent
        does not have are ignored by the caller."""
        values = self._own_options()
        values.update(self.options_for(agent))
        return {k: v for k, v in values.items() if v is not None}

    def _own_options(self) -> dict[str, Any]:
        """`agent_options` before the scenario's options for the agent: what its definition sets."""
        raise NotImplementedError

    def check_simulator(self, name: str, judge) -> None:
        """ValueError when agent `name`, judged by `judge` (`schedrl.scenarios.judge.Judge`: `agent.judge(env)`), runs
        on the other simulator than this scenario's."""
        if self.generated != judge.generated:
            raise ValueError(f"scenario {self.name!r} is " + ("generated on the discrete-time cluster" if self.generated
                                                             else "a trace scenario") + f"; {name} runs on the "
                             + ("discrete-time cluster" if judge.generated else "event simulator"))

    def check_trains(self, name: str, judge) -> None:
        """ValueError when agent `name`, judged by `judge` (`agent.judge(env_config)`), does not train on what this
        scenario says: the other simulator, or its metric, discipline, window, allocation, event order, walltime
        kill or (a trace scenario) its split: the training part and the validation zone."""
        self.check_simulator(name, judge)
        self._check_semantics(name, judge)

    def _check_semantics(self, name: str, judge) -> None:
        """`check_trains` past the simulator: what else of the judge's must be the scenario's."""

    def check_cluster(self, judge, who: str) -> None:
        """ValueError where the policy `judge` scores (`agent.judge(env)` of its run) was trained on another cluster than
        this generated scenario's (the fields that decide a seeded sequence differ); trace scenarios have none."""

    def transfer_problem(self, name: str, judge, trained_sim: SimConfig | None = None,
                         augment: str | None = None) -> str | None:
        """Why a policy of agent `name`, trained under `judge` (`agent.judge(env)` of its run; `trained_sim`: its run's
        `SimConfig`, `augment`: its MRSch augmentation), cannot make this scenario's decisions, or None where it can:
        the other simulator or cluster; on the event simulator, another decision interface (a pick from the whole queue
        or from a window of another size) or other job resources (MRSch's burst buffer and power). Backfilling,
        allocation, walltime kills and the metric are the scenario's (`semantics_for`)."""
        try:
            self.check_simulator(name, judge)
            self.check_cluster(judge, name)
        except ValueError as e:
            return str(e)
        return self._decision_problem(judge, trained_sim, augment)

    def _decision_problem(self, judge, trained_sim: SimConfig | None, augment: str | None) -> str | None:
        """`transfer_problem` past the simulator and the cluster."""
        return None

    def semantics_for(self, judge, trained_sim: SimConfig | None = None):
        """What a trained policy runs under on this scenario, given its own run's `judge`: the scenario's `SimConfig`
        with the decisions it was trained to make (`trained_sim`'s `backfill_choice`, default the judge's: DRAS's
        choice of the backfilled job), or on the discrete-time cluster, the scenario's cluster as the policy's env
        saw it (DeepRM's pre-run estimates). None where the policy has no semantics of its own to keep."""
        raise NotImplementedError

    def applicable_overrides(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """Of the env values a sweep file gives beside `scenario:` (`overridden`'s keywords, plus `sequences` and
        `jobs` of its `evaluate:`), those that change this scenario: on a trace scenario the ones that differ from
        its own; on a generated one only the count of sequences (its cluster is fixed by the definition)."""
        raise NotImplementedError

    def final_evaluation(self, given: Collection[str]) -> dict[str, Any]:
        """How a training run's final table follows this scenario, as the `EvaluateSpec` fields to set, given which of
        `sequences`, `starts` and `traces` the run set itself: a trace scenario pins its fixed evaluation sequences
        (`from_scenario`, with their count and length) unless the run gives its own starts or traces, or the scenario's
        evaluation comes from a trace of its own (`evaluation.trace`: the run keeps its agent's held-out split); a generated
        one gives its count of seeds unless the run gives one."""
        raise NotImplementedError

    def check_agent(self, agent: str) -> None:
        if self.agents and agent not in self.agents:
            raise ValueError(f"scenario {self.name!r} is defined for {', '.join(self.agents)}, not {agent} "
                             f"(`schedrl scenarios list` shows each scenario's agents)")

    def overridden(self, **changes: Any) -> "Scenario":
        """The scenario with some of its parts replaced (explicit command-line options win over a scenario):
        workload fields (`trace`, `cleaning`, `augment`, `augment_seed`), `SimConfig` fields, `metric`, and the
        evaluation sequences' `sequences` (count), `jobs` and `seed`. The name stays; the hash changes."""
        from dataclasses import replace

        changes = {k: v for k, v in changes.items() if v is not None}
        if not changes:
            return self
        sim_fields = {f.name for f in fields(SimConfig)}
        workload_fields = {"trace", "cleaning", "augment", "augment_seed"}
        sequence_fields = {"sequences": "count", "jobs": "jobs", "seed": "seed"}
        unknown = sorted(set(changes) - sim_fields - workload_fields - set(sequence_fields) - {"metric"})
        if unknown:
            raise ValueError(f"cannot override {', '.join(unknown)} of a scenario")
        self._check_overrides(changes, sim_fields | workload_fields)
        if self.evaluation.trace is not None and changes.get("trace", self.workload.trace) != self.workload.trace:
            # the evaluation sequences are positions in the evaluation's own trace, not in the one named
            raise ValueError(f"trace {changes['trace']}: scenario {self.name!r} evaluates on a trace of its own "
                             f"({self.evaluation.trace}), so its table could not be on {changes['trace']}: drop the "
                             f"trace option, or the scenario to score {changes['trace']} itself")
        out: dict[str, Any] = {}
        if set(changes) & workload_fields:
            out["workload"] = replace(self.workload, **{k: changes[k] for k in workload_fields & set(changes)})
        if set(changes) & sim_fields:
            out["sim"] = replace(self.sim, **{k: changes[k] for k in sim_fields & set(changes)})
            out["reference"] = self.baseline(self.reference).name(out["sim"])  # its label may name the backfilling
        if set(changes) & set(sequence_fields):
            out["evaluation"] = replace(self.evaluation, **{sequence_fields[k]: changes[k]
                                                            for k in set(sequence_fields) & set(changes)})
        if "metric" in changes:
            out["metric"] = changes["metric"]
        return replace(self, **out)

    def _check_overrides(self, changes: Mapping[str, Any], trace_fields: set[str]) -> None:
        """ValueError where `overridden` is asked to change what this kind of scenario does not have."""

    # ------------------------------------------------------------------ its data and sequences (`scoring`)
    def load(self, note=None):
        """The cleaned workload (trace scenarios) or the job table (generated); `note` hears the cleaning report."""
        raise NotImplementedError

    def draw(self, data, part: str):
        """The fixed sequences of `part` (`scoring.DrawnSequences`) on `data` (from `load`)."""
        raise NotImplementedError

    def baseline_factory(self, baseline: BaselineSpec):
        """A fresh policy per sequence (index i) for a baseline, as every caller ran them."""
        raise NotImplementedError

    def comparison_semantics(self, policies: Collection[Any] = ()):
        """The one `SimConfig` every row of a table of `policies` on this scenario runs under
        (`schedrl.scenarios.semantics.comparison_semantics` of the scenario's); None on the discrete-time cluster,
        whose rows take `semantics_of`."""
        return None

    def semantics_of(self, baseline: BaselineSpec | None, shared=None):
        """What a baseline (None: a policy) runs under in a comparison whose semantics is `shared`
        (`comparison_semantics`; None: the scenario's own): a `SimConfig` or the cluster."""
        raise NotImplementedError

    def run_sequences(self, make, data, seqs, semantics) -> list:
        """Every aggregate per sequence of the policies `make(i)` on `seqs` (of `data`) under `semantics`."""
        raise NotImplementedError

    # ------------------------------------------------------------------ definition
    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "description": self.description}
        if self.paper:
            out["paper"] = self.paper
        if self.agents:
            out["agents"] = list(self.agents)
        out.update(self._definition())
        for part in ("validation", "evaluation"):
            seq = getattr(self, part)
            out[part] = seq.to_dict(self.generated)
        out["metric"] = self.metric
        out["baselines"] = [b.to_dict() for b in self.baselines]
        out["reference"] = self.reference
        if self.options:
            out["options"] = {k: dict(v) for k, v in self.options.items()}
        return out

    def _definition(self) -> dict[str, Any]:
        """The definition's keys of this kind: `workload`, `sim` and `split`, or `cluster`."""
        raise NotImplementedError

    def sha256(self) -> str:
        """Hash of what the scenario judges by: the canonical definition (`to_dict` as sorted JSON) without its prose
        and its list of agents (`UNJUDGED_KEYS`), so that a new agent entering a scenario, or a reworded
        description, leaves the hash that run records and zoo policies store unchanged."""
        return definition_sha256(self.to_dict())

    def record(self) -> dict[str, Any]:
        """What a run record keeps of its scenario: the name, the hash and the definition itself."""
        return {"name": self.name, "sha256": self.sha256(), "definition": self.to_dict()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str = "<scenario>") -> "Scenario":
        """A scenario from its definition; ValueError naming `source` and the key on any problem."""
        try:
            return cls._from_dict(data)
        except (TypeError, ValueError) as e:
            raise ValueError(f"{source}: {e}") from None

    @classmethod
    def _from_dict(cls, data: Mapping[str, Any]) -> "Scenario":
        if not isinstance(data, Mapping):
            raise ValueError(f"a scenario definition is a mapping, got {type(data).__name__}")
        unknown = sorted(set(data) - set(_TOP_KEYS))
        if unknown:
            raise ValueError(f"unknown key(s) {', '.join(unknown)}; known: {', '.join(_TOP_KEYS)}")
        for key in ("name", "metric", "baselines", "reference"):
            if key not in data:
                raise ValueError(f"`{key}` is required")
        workload = sim = None
        if data.get("workload") is not None:
            workload = WorkloadSpec.from_dict(data["workload"])
            sim_data = data.get("sim") or {}
            if not isinstance(sim_data, Mapping):
                raise ValueError(f"sim must be a mapping of SimConfig fields, got {sim_data!r}")
            unknown = sorted(set(sim_data) - {f.name for f in fields(SimConfig)})
            if unknown:
                raise ValueError(f"sim: unknown SimConfig field(s) {', '.join(map(str, unknown))}; known: "
                                 f"{', '.join(f.name for f in fields(SimConfig))}")
            try:
                sim = SimConfig.preset(workload.preset, **dict(sim_data))
            except (TypeError, ValueError) as e:
                raise ValueError(f"sim: {e}") from None
        baselines = data["baselines"]
        if not isinstance(baselines, (list, tuple)):
            raise ValueError(f"baselines must be a list, got {baselines!r}")
        kwargs: dict[str, Any] = dict(
            name=data["name"], description=str(data.get("description", "")), paper=str(data.get("paper", "")),
            metric=data["metric"], reference=data["reference"], workload=workload, sim=sim,
            cluster=dict(data["cluster"]) if data.get("cluster") is not None else None,
            baselines=tuple(BaselineSpec.parse(b, f"baselines[{i}]") for i, b in enumerate(baselines)),
            agents=tuple(_strings(data.get("agents", ()), "agents")),
            options={str(k): dict(v) if isinstance(v, Mapping) else v for k, v in (data.get("options") or {}).items()})
        if data.get("cluster") is not None and not isinstance(data["cluster"], Mapping):
            raise ValueError(f"cluster must be a mapping, got {data['cluster']!r}")
        if "split" in data:
            kwargs["split"] = _section(Split, data["split"], "split")
        for part, default_count in (("validation", 5), ("evaluation", 10)):
            if part in data:
                kwargs[part] = _section(SequenceSpec, {"count": default_count, **_mapping(data[part], part)}, part)
            elif part == "validation":
                kwargs[part] = SequenceSpec(count=5)
        return cls(**kwargs)



SPLIT_PROBE = 1_000_000
"""The trace length on which `Scenario.check_trains` compares a run's split with a scenario's (a split is a function
of the length: fractions that differ by a millionth or more differ there)."""


@dataclass(frozen=True)
class TraceScenario(Scenario):
    """A scenario on the event simulator: windows of a trace (`workload`) in the zones of its `split`, under `sim`."""

    generated: ClassVar[bool] = False
    id_kind: ClassVar[str] = "starts"

    def _check_kind(self, where: str) -> Collection[str]:
        from schedrl.heuristics import HEURISTICS
        from schedrl.metrics import check_metric

        if self.sim is None:
            raise ValueError(f"{where}: a trace scenario needs `sim` (its simulator semantics)")
        try:
            check_metric(self.metric, resources=True)
        except ValueError as e:
            raise ValueError(f"{where}: metric: {e}") from None
        for b in self.baselines:
            if b.backfill is not None and b.backfill not in BACKFILLS:
                raise ValueError(f"{where}: baseline {b.policy}: backfill {b.backfill!r} is not one of "
                                 f"{', '.join(BACKFILLS)}")
        return HEURISTICS

    def _check_parts(self, where: str) -> None:
        if self.split.validation_share >= 1 and self.split.train_fraction < 1 and self.evaluation.trace is None:
            raise ValueError(f"{where}: split.validation_share must leave jobs for evaluation (< 1), unless the "
                             f"evaluation has a trace of its own (evaluation.trace)")

    def data_summary(self) -> str:
        w = self.workload
        return w.trace + (f" +{w.augment}" if w.augment else "")

    def training_summary(self) -> str:
        if self.evaluation.trace is not None:
            return (f"{self.workload.trace}, {self.metric}, the final table on the agent's own held-out split (the "
                    f"scenario's {self.evaluation.count} evaluation sequences come from trace {self.evaluation.trace}: "
                    f"`schedrl evaluate RUN --scenario {self.name}`)")
        return (f"{self.workload.trace}, {self.metric}, the final table on its {self.evaluation.count} evaluation "
                f"sequences of {self.evaluation.jobs} jobs")

    def _describe_data(self) -> list[str]:
        w, sim = self.workload, self.sim
        lines = [f"  trace:       {w.trace} (cleaning {w.cleaning_preset}"
                 + (f", augmented {w.augment} seed {w.augment_seed}" if w.augment else "") + ")",
                 f"  simulator:   {sim.discipline}" + (f" (window {sim.window})" if sim.window else "")
                 + f", backfill {sim.backfill_text}, allocation {sim.allocation}, event order {sim.event_order}, "
                 + ("walltime kill" if sim.kill_at_limit else "no walltime kill"),
                 f"  split:       training on the first {self.split.train_fraction:.0%}; validation the first "
                 f"{self.split.validation_share:.0%} of the rest, evaluation the remainder"]
        for part in ("validation", "evaluation"):
            seq = getattr(self, part)
            where = f", from trace {seq.trace} (all of it)" if seq.trace else ""
            lines.append(f"  {part + ':':<12} {seq.count} {seq.placement} sequences of {seq.jobs} jobs "
                         f"(seed {seq.seed}{where})")
        return lines

    def _own_options(self) -> dict[str, Any]:
        w, sim = self.workload, self.sim
        values: dict[str, Any] = dict(
            trace=w.trace, preset=w.preset, augment=w.augment, augment_seed=w.augment_seed, metric=self.metric,
            backfill=sim.backfill, slurm=sim.slurm_site or None, window=sim.window or None,
            train_fraction=self.split.train_fraction,
            eval_sequences=self.evaluation.count, eval_jobs=self.evaluation.jobs,
            # all of the held-out part validates where the evaluation has a trace of its own: the agent's own final
            # table keeps its default share of it
            validation_share=self.split.validation_share if self.split.validation_share < 1 else None)
        if w.cleaning is not None:
            values["cleaning"] = w.cleaning
        return values

    def _check_semantics(self, name: str, judge) -> None:
        problems = []
        if judge.metric != self.metric:
            problems.append(f"metric {judge.metric} (the scenario's: {self.metric})")
        sim = judge.sim
        for key in ("discipline", "window", "allocation", "event_order", "kill_at_limit"):
            if getattr(sim, key) != getattr(self.sim, key):
                problems.append(f"{key} {getattr(sim, key)!r} (the scenario's: {getattr(self.sim, key)!r})")
        if sim.backfill == "slurm" and sim.slurm_site != self.sim.slurm_site:
            # a policy trained on a site's Slurm trains under its parameters, not Slurm's defaults
            problems.append(f"Slurm's {sim.slurm_site} (the scenario's: {self.sim.slurm_site})")
        if not problems:  # the split only where the semantics agree (it loads the data)
            problems = self._split_problems(judge)
        if problems:
            raise ValueError(f"{name} with these options does not train on scenario {self.name!r}: "
                             + "; ".join(problems))

    def _split_problems(self, judge) -> list[str]:
        """Where the run's split (its judge's) differs from this scenario's: its training part (jobs the scenario holds
        out for validation or evaluation must not be trained on), and its validation zone unless all of the held-out
        part validates here (`validation_share` 1: the evaluation has a trace of its own, and the run's own validation
        zone lies inside the scenario's). Both splits are functions of the trace's length, compared on `SPLIT_PROBE`
        jobs, so no trace is read (a sweep file with `scenario:` validates without its trace)."""
        n = SPLIT_PROBE
        run, own = judge.held_out_range(n), self.split.held_out(n)
        if run != own:
            return [f"train_fraction {run[0] / n if run[0] else 1:g} (the scenario's: {self.split.train_fraction:g})"]
        zone, own_zone = judge.split_range(n, validation=True), self.split.zone(n, validation=True)
        if self.split.validation_share < 1 and zone != own_zone:
            return [f"validation_share {(zone[1] - zone[0]) / (own[1] - own[0]):g} (the scenario's: "
                    f"{self.split.validation_share:g})"]
        return []

    def _decision_problem(self, judge, trained_sim: SimConfig | None, augment: str | None) -> str | None:
        trained = trained_sim or judge.sim

        def interface(sim: SimConfig) -> str:
            return f"a {sim.window}-job window" if sim.window else "the whole queue"

        if (trained.window or 0) != (self.sim.window or 0):
            return f"it picks from {interface(trained)}; this scenario from {interface(self.sim)}"
        mine, theirs = _resources(augment), _resources(self.workload.augment)
        if mine != theirs:
            def show(r):
                return ", ".join(r) or "no resource"
            return f"it was trained on jobs with {show(mine)} beyond processors; this scenario's have {show(theirs)}"
        return None

    def semantics_for(self, judge, trained_sim: SimConfig | None = None):
        from dataclasses import replace

        trained_sim = trained_sim if trained_sim is not None else judge.sim
        if trained_sim is None:
            return None
        return replace(self.sim, backfill_choice=trained_sim.backfill_choice)

    def applicable_overrides(self, given: Mapping[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in given.items()
                if getattr(self.workload, k, getattr(self.sim, k, getattr(self, k, None))) != v}

    def final_evaluation(self, given: Collection[str]) -> dict[str, Any]:
        if {"starts", "traces"} & set(given) or self.evaluation.trace is not None:
            return {}
        return {"from_scenario": True, "jobs": self.evaluation.jobs, "sequences": self.evaluation.count}

    def load(self, note=None):
        return self.workload.load(note)

    def draw(self, data, part: str):
        from schedrl.scenarios.drawing import trace_sequences

        return trace_sequences(self, data, part)

    def baseline_factory(self, baseline: BaselineSpec):
        """Seed 0 for seeded heuristics on the event simulator."""
        from schedrl.heuristics import get_heuristic

        return lambda i: get_heuristic(baseline.policy, 0)

    def comparison_semantics(self, policies: Collection[Any] = ()):
        from schedrl.scenarios.semantics import comparison_semantics

        return comparison_semantics(self.sim, policies)

    def semantics_of(self, baseline: BaselineSpec | None, shared=None):
        shared = shared or self.sim
        return baseline.sim_config(shared) if baseline is not None else shared

    def run_sequences(self, make, data, seqs, semantics) -> list:
        from schedrl.metrics import summarize
        from schedrl.scenarios.drawing import run_policy
        from schedrl.sim import Simulator
        from schedrl.workload.sampling import sequence

        return [summarize(run_policy(make(i), Simulator(sequence(data, s, seqs.length), semantics)))
                for i, s in enumerate(seqs.ids)]

    def _definition(self) -> dict[str, Any]:
        return {"workload": {k: v for k, v in self.workload.to_dict().items()
                             if v != getattr(WorkloadSpec, k, object())},
                "sim": {k: v for k, v in self.sim.to_dict().items() if v != getattr(SimConfig, k)},
                "split": {"train_fraction": self.split.train_fraction, "validation_share": self.split.validation_share}}


@dataclass(frozen=True)
class GeneratedScenario(Scenario):
    """A scenario on the discrete-time cluster (`cluster`): seeded generated sequences, no trace, no split."""

    generated: ClassVar[bool] = True
    id_kind: ClassVar[str] = "seeds"
    baseline_rules: ClassVar[tuple[str, ...]] = ("kill",)

    def _check_kind(self, where: str) -> Collection[str]:
        from schedrl.dtsim import DTSimConfig
        from schedrl.dtsim.heuristics import HEURISTICS as DT_HEURISTICS

        if self.metric != "slowdown":
            raise ValueError(f"{where}: a generated scenario's metric is the cluster's average `slowdown`")
        known = {f.name for f in fields(DTSimConfig)} | {"jobs"}
        unknown = sorted(set(self.cluster) - known)
        if unknown:
            raise ValueError(f"{where}: cluster: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        if self.cluster.get("jobs", "vasp") not in ("vasp", "synthetic"):
            raise ValueError(f"{where}: cluster.jobs must be `vasp` or `synthetic`, got {self.cluster['jobs']!r}")
        return DT_HEURISTICS

    def _check_parts(self, where: str) -> None:
        if self.evaluation.trace is not None:
            raise ValueError(f"{where}: evaluation.trace: a generated scenario's sequences are seeds, not a trace")

    def trace_only(self, message: str) -> None:
        raise ValueError(message)

    def data_summary(self) -> str:
        return f"{self.cluster.get('jobs', 'vasp')} jobs, job_rate {self.cluster.get('job_rate', 0.7)}"

    def training_summary(self) -> str:
        return "generated sequences on the discrete-time cluster"

    def _describe_data(self) -> list[str]:
        lines = ["  data:        generated sequences on the discrete-time cluster: "
                 + ", ".join(f"{k}={v}" for k, v in self.cluster.items())]
        for part in ("validation", "evaluation"):
            seq = getattr(self, part)
            lines.append(f"  {part + ':':<12} {seq.count} sequences (seed {seq.seed})")
        return lines

    def dtsim_config(self):
        """The discrete-time cluster."""
        from schedrl.dtsim import DTSimConfig

        return DTSimConfig(**{k: v for k, v in self.cluster.items() if k != "jobs"})

    def _own_options(self) -> dict[str, Any]:
        return {"eval_sequences": self.evaluation.count}

    def check_cluster(self, judge, who: str) -> None:
        fields = dict(judge.sequence_fields())
        if fields.get("jobs") == "" and self.cluster.get("jobs", "vasp") == "vasp":
            fields["jobs"] = "vasp"  # an env's default job file is the VASP jobs (the scenario fails where they are absent)
        differ = [f"{k} {fields[k]!r} vs {v!r}" for k, v in self.cluster.items() if k in fields and fields[k] != v]
        if differ:
            raise ValueError(f"{who} was trained on another cluster than scenario {self.name!r} ({', '.join(differ)})")

    def semantics_for(self, judge, trained_sim: SimConfig | None = None):
        from dataclasses import replace

        seen = getattr(judge, "cluster", None)
        if seen is None:
            return None
        return replace(self.dtsim_config(), estimates=seen.estimates, requeue_estimate=seen.requeue_estimate)

    def applicable_overrides(self, given: Mapping[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in given.items() if k == "sequences"}

    def final_evaluation(self, given: Collection[str]) -> dict[str, Any]:
        return {} if "sequences" in given else {"sequences": self.evaluation.count}

    def _check_overrides(self, changes: Mapping[str, Any], trace_fields: set[str]) -> None:
        if set(changes) & trace_fields:
            raise ValueError(f"scenario {self.name!r} is generated on the discrete-time cluster: it has no trace or "
                             f"event-simulator options to override ({', '.join(sorted(changes))})")

    def load(self, note=None):
        from schedrl.scenarios.drawing import job_table

        return job_table(self.cluster.get("jobs", "vasp"), self.cluster.get("synthetic_size", 1000))

    def draw(self, data, part: str):
        from schedrl.scenarios.drawing import generated_sequences

        return generated_sequences(self, part)

    def baseline_factory(self, baseline: BaselineSpec):
        """Seeded heuristics take the sequence index (RLSchert's tables); `+kill` adds the kill rule."""
        from schedrl.dtsim.heuristics import make_policy

        name, _, kill = baseline.policy.lower().partition("+")
        return lambda i: make_policy(name, seed=i, kill=bool(kill))

    def semantics_of(self, baseline: BaselineSpec | None, shared=None):
        return self.dtsim_config()

    def run_sequences(self, make, data, seqs, semantics) -> list:
        from schedrl.dtsim.episodes import run_episodes

        return run_episodes(make, data, semantics, seqs.ids)

    def _definition(self) -> dict[str, Any]:
        return {"cluster": dict(self.cluster)}

def _resources(augment: str | None) -> tuple[str, ...]:
    """The job resources beyond processors/nodes an MRSch augmentation adds (S1-S5: burst buffer; S6-S10: and power)."""
    if not augment:
        return ()
    return ("burst buffer",) if int(augment[1:]) <= 5 else ("burst buffer", "power")


def _mapping(value: Any, where: str) -> dict:
    if not isinstance(value, Mapping):
        raise ValueError(f"{where} must be a mapping, got {value!r}")
    return dict(value)


def _section(cls, value: Any, where: str):
    data = _mapping(value, where)
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    return cls(**data)


def _strings(value: Any, where: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{where} must be a list of names, got {value!r}")
    return list(value)
