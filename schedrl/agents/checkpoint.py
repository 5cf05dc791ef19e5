"""The run record (`schedrl_run.json`) and loading any agent's checkpoint as a simulator policy.

Every training run (a `schedrl train` run or each trial of a sweep) writes a `RunRecord` beside its
checkpoints: which agent, its env config (with the normalisation constants learned from the data),
the `SimConfig` the env simulated, the network, the algorithm settings, the validation sequences,
the trace checksum and the versions. `load_policy(path)` finds the record above a checkpoint, asks
the record's agent to rebuild the module and returns its greedy `SchedulingPolicy`, so evaluation,
`select` and `checkpoint:PATH` policies work for every agent without knowing any of them.
"""

from __future__ import annotations

import json
import pickle
import platform
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Mapping

from schedrl.sim.config import SimConfig

RUN_FILE = "schedrl_run.json"
"""The run record's file name, in a run's `--out` directory and in every trial directory."""
RECORD_VERSION = 2
"""Version 1 (before agents): no `record_version`, `ppo` instead of `settings`, no `sim_config`."""
MODULE_SUBPATH = Path("learner_group") / "learner" / "rl_module" / "default_policy"
"""Where RLlib keeps the trained RLModule inside an Algorithm checkpoint."""


class CheckpointError(ValueError):
    """A checkpoint or run record that cannot be loaded; the message names the file."""


@dataclass(frozen=True)
class RunRecord:
    """Enough to load a checkpoint as a policy and to reproduce its run."""

    agent: str
    """Agent name (`schedrl.agents.AGENTS`)."""
    env_config: Mapping[str, Any]
    """The agent's env config as a dict (normalisation constants included)."""
    sim_config: SimConfig | None
    """The simulator semantics the env trained under (evaluation never re-translates presets); None for an
    agent on the discrete-time cluster."""
    model: str | None
    """Network name within the agent."""
    settings: Mapping[str, Any]
    """Algorithm settings (`Agent.settings_class` as a dict)."""
    validation: Mapping[str, Any] = field(default_factory=dict)
    """Validation starts and the baselines' values on them."""
    trace_sha256: str | None = None
    """Checksum of the training trace."""
    versions: Mapping[str, str] = field(default_factory=dict)
    """schedrl, ray, torch and python versions that trained it."""
    command: tuple[str, ...] = ()
    """The command line that started the run."""
    train_args: tuple[str, ...] | None = None
    """`schedrl train` arguments, so `--resume` rebuilds the run with its own options."""
    scenario: Mapping[str, Any] | None = None
    """The scenario the run trained on (`Scenario.record()`: name, definition hash, definition), or None."""

    def to_dict(self) -> dict:
        out = asdict(self)
        out["sim_config"] = self.sim_config.to_dict() if self.sim_config is not None else None
        out["record_version"] = RECORD_VERSION
        out["command"] = list(self.command)
        if self.scenario is None:
            out.pop("scenario")
        if self.train_args is None:
            out.pop("train_args")
        else:
            out["train_args"] = list(self.train_args)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str = "<record>") -> "RunRecord":
        version = data.get("record_version", 1)
        if version == 1 and data.get("agent", "rlscheduler") == "rlscheduler" and "env_config" in data:
            # written before agents existed: RLScheduler's PPO; the SimConfig follows from its env config
            from schedrl.agents import get_agent

            agent = get_agent("rlscheduler")
            env = agent.env_config_class.from_dict(data["env_config"])
            data = {**data, "agent": "rlscheduler", "settings": data.get("ppo", {}),
                    "sim_config": agent.judge(env).sim.to_dict()}
        elif version != RECORD_VERSION:
            raise CheckpointError(f"{source}: run record version {version} is not supported by this schedrl "
                                  f"(reads versions 1 and {RECORD_VERSION}); retrain, or load it with the schedrl "
                                  "version that wrote it")
        try:
            return cls(agent=data["agent"], env_config=dict(data["env_config"]),
                       sim_config=SimConfig.from_dict(data["sim_config"]) if data["sim_config"] is not None else None,
                       model=data.get("model"),
                       settings=dict(data.get("settings") or {}), validation=dict(data.get("validation") or {}),
                       trace_sha256=data.get("trace_sha256"), versions=dict(data.get("versions") or {}),
                       command=tuple(data.get("command") or ()),
                       train_args=tuple(data["train_args"]) if data.get("train_args") is not None else None,
                       scenario=dict(data["scenario"]) if data.get("scenario") is not None else None)
        except (KeyError, TypeError, ValueError) as e:
            raise CheckpointError(f"{source}: not a valid run record ({type(e).__name__}: {e})") from None

    @classmethod
    def read(cls, path: str | Path) -> "RunRecord":
        path = Path(path)
        try:
            data = json.loads(path.read_text())
        except FileNotFoundError:
            raise FileNotFoundError(f"{path} not found: was the run written by `schedrl train` or `schedrl tune`?") from None
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise CheckpointError(f"{path}: corrupt run record (not JSON: {e})") from None
        if not isinstance(data, dict):
            raise CheckpointError(f"{path}: corrupt run record (not a JSON object)")
        return cls.from_dict(data, str(path))

    def write(self, directory: str | Path) -> Path:
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / RUN_FILE
        path.write_text(json.dumps(self.to_dict(), indent=2, default=str))
        return path


def versions() -> dict[str, str]:
    """The versions a record stores (ray and torch only if already imported, so this stays cheap)."""
    from schedrl import __version__

    out = {"schedrl": __version__, "python": platform.python_version()}
    for name in ("ray", "torch"):
        module = sys.modules.get(name)
        if module is not None:
            out[name] = getattr(module, "__version__", "?")
    return out


def find_module_dir(path: Path) -> Path:
    """The RLModule directory inside an RLlib checkpoint (or the path itself if it is one)."""
    if (path / MODULE_SUBPATH).is_dir():
        return path / MODULE_SUBPATH
    if (path / "class_and_ctor_args.pkl").exists():
        return path
    raise FileNotFoundError(f"{path} is not an RLlib checkpoint (no {MODULE_SUBPATH})")


def find_run_file(path: Path) -> Path:
    """`schedrl_run.json` of the run a checkpoint belongs to (searched upwards from it)."""
    for directory in [path, *path.parents]:
        if (directory / RUN_FILE).exists():
            return directory / RUN_FILE
    raise FileNotFoundError(f"no {RUN_FILE} above {path}: was it written by `schedrl train` or `schedrl tune`?")


def load_record(path: str | Path) -> RunRecord:
    """The run record of the run checkpoint `path` belongs to."""
    path = Path(path).expanduser().resolve()
    if not path.exists():
        raise FileNotFoundError(f"checkpoint {path} does not exist")
    return RunRecord.read(find_run_file(path))


ZOO_PREFIX = "zoo:"
"""`zoo:NAME`: a policy of schedrl's zoo (`schedrl zoo list`), wherever a checkpoint is accepted."""
CHECK_SEQUENCES, CHECK_JOBS = 2, 1024
"""An export is checked on the run's validation sequences and on this many more from the validation zone, of this
many jobs (event simulator; the discrete-time cluster: its episode length)."""


def load_policy(path: str | Path, name: str | None = None):
    """A checkpoint of any agent as its greedy `SchedulingPolicy` (with `.record` and `.name` set).

    Checkpoints are pickles (RLlib's format): load only checkpoints from a source you trust. `zoo:NAME` or the
    directory of an exported policy loads that instead (`load_exported`: tensors only, without ray).
    """
    from schedrl.agents import get_agent
    from schedrl.zoo.store import is_exported

    if str(path).startswith(ZOO_PREFIX) or is_exported(path):
        return load_exported(path, name)
    path = Path(path).expanduser().resolve()
    record = load_record(path)
    try:
        agent = get_agent(record.agent)
    except ValueError as e:
        raise CheckpointError(f"{find_run_file(path)}: {e}") from None
    module_dir = find_module_dir(path)
    try:
        module = agent.load_module(module_dir, record)
    except (pickle.UnpicklingError, EOFError, ModuleNotFoundError, AttributeError, ValueError, RuntimeError) as e:
        raise CheckpointError(f"{module_dir}: cannot load the trained module ({type(e).__name__}: {e}); checkpoints "
                              "are pickles: a truncated or corrupt file, or one from another schedrl/ray version, "
                              "fails here (and load checkpoints only from a source you trust)") from None
    if type(module).__name__ == "RLModule" or not callable(getattr(module, "eval", None)):
        # RLlib falls back to a bare RLModule (with only a log line) when it cannot unpickle the class
        raise CheckpointError(f"{module_dir / 'class_and_ctor_args.pkl'}: corrupt or unreadable (the module class "
                              "could not be restored); checkpoints are pickles: re-copy it from a source you trust")
    if callable(getattr(module, "state_dict", None)):
        from schedrl.zoo.store import ZooError, check_finite

        try:
            check_finite(module.state_dict(), module_dir)
        except ZooError as e:
            raise CheckpointError(str(e)) from None
    module.eval()
    policy = agent.policy_from_module(module, record.env_config)
    policy.record = record
    policy.name = name or f"RL({path.name})"
    return policy


def load_exported(spec: str | Path, name: str | None = None):
    """An exported policy (`zoo:NAME` or its directory) as its agent's greedy policy on the agent's ray-free network:
    the weights checked against their sha256 and read as tensors only; the policy warns on stderr where it is used
    outside the machine or normalisation of its training (`schedrl.zoo.card.guard`)."""
    from schedrl.agents import get_agent
    from schedrl.zoo import card, manifest, store

    try:
        exported = manifest.find(str(spec)[len(ZOO_PREFIX):]) if str(spec).startswith(ZOO_PREFIX) else store.read(spec)
        weights = exported.weights()
    except store.ZooError as e:
        raise CheckpointError(str(e)) from None
    record = RunRecord.from_dict(exported.record, str(exported.policy_file))
    try:
        agent = get_agent(record.agent)
        net = _exportable(agent).inference_module(record, exported.architecture)
        net.load_state_dict(weights, strict=True)
    except (ValueError, KeyError, RuntimeError) as e:
        raise CheckpointError(f"{exported.policy_file}: cannot rebuild its network ({type(e).__name__}: "
                              f"{str(e).splitlines()[0]})") from None
    net.eval()
    policy = agent.policy_from_module(net, record.env_config)
    policy.record = record
    policy.name = name or f"RL({exported.name})"
    card.guard(policy, exported.card)
    return policy


def _exportable(agent):
    from schedrl.agents.base import Exportable, capable

    return capable(agent, Exportable, f"{agent.name} has no ray-free network: its checkpoints cannot be exported")


def policy_from_tensors(agent, record: RunRecord, architecture, tensors: Mapping[str, Any]):
    """The agent's ray-free policy with these tensors loaded (fp16 ones as fp32): what an export decides."""
    net = agent.inference_module(record, architecture)
    net.load_state_dict({k: v.float() if v.is_floating_point() else v for k, v in tensors.items()}, strict=True)
    return agent.policy_from_module(net.eval(), record.env_config)


def check_episodes(judge, workload, validation: Mapping[str, Any],
                   jobs: int = CHECK_JOBS) -> list[tuple[list[int], int]]:
    """Where an export is checked, as (sequence ids, length) groups: the run's validation sequences (if it had any),
    and `CHECK_SEQUENCES` of `jobs` jobs from the validation zone (from anywhere in the trace where that zone is
    shorter: this checks arithmetic, not skill), as a short validation sequence may hold no choice at all."""
    groups = [(list(validation["starts"]), int(validation["length"]))] if validation.get("starts") else []
    return groups + [judge.check_sequences(workload, CHECK_SEQUENCES, jobs)]


def export_policy(checkpoint: str | Path, out_dir: str | Path, name: str | None = None, precision: str = "auto",
                  check_jobs: int = CHECK_JOBS, log=None):
    """Export a checkpoint of any agent (`schedrl export`): its ray-free network's weights, architecture, run record
    and card in `out_dir` (`schedrl.zoo.store`). The export must make the checkpoint's decisions on whole episodes
    (`check_episodes`, `check_jobs` jobs long) or it fails; `precision` `auto` stores half precision only where that
    changes no decision on them either, else float32; a policy trained on a scenario stays float32 under `auto`, as the
    leaderboard shows it on every scenario it can run, where half precision was never checked (the inspector's fp16
    export gave 392.81 on SDSC-SP2 where its checkpoint gives 397.30). Returns the `schedrl.zoo.store.Exported`."""
    import numpy as np

    from schedrl.agents import get_agent
    from schedrl.metrics import lower_is_better
    from schedrl.zoo import card, decisions, store

    if precision not in ("auto", *store.PRECISIONS):
        raise ValueError(f"precision must be auto, {' or '.join(store.PRECISIONS)}; got {precision!r}")
    log = log or (lambda text: None)
    path = Path(checkpoint).expanduser().resolve()
    original = load_policy(path)
    record = original.record
    agent = get_agent(record.agent)
    trained = original.module  # every agent's greedy policy keeps the module it runs
    net = _exportable(agent).inference_module(record, trained)
    state = trained.state_dict()
    missing = [k for k in net.state_dict() if k not in state]
    if missing:
        raise CheckpointError(f"{path}: the trained module has no {', '.join(missing[:3])}: its ray-free network does "
                              f"not match ({type(trained).__name__})")
    weights = {k: state[k].detach().cpu().clone() for k in net.state_dict()}
    half = {k: v.half() if v.is_floating_point() else v for k, v in weights.items()}

    def exported(tensors):
        return policy_from_tensors(agent, record, net.architecture, tensors)

    judge = agent.judge(agent.env_config_class.from_dict(dict(record.env_config)))
    workload = judge.load()
    validation = dict(record.validation)
    episodes = check_episodes(judge, workload, validation, check_jobs)
    where = " and ".join(f"{len(ids)} sequences of {n} jobs" for ids, n in episodes)

    def run(policy):
        return [judge.score_policy(policy, workload, ids, n) for ids, n in episodes]

    checkpoint_log, _ = decisions.logged(original, run)
    full_log, scores = decisions.logged(exported(weights), run)
    first = decisions.first_difference(checkpoint_log, full_log)
    if first is not None:
        raise CheckpointError(f"{path}: the exported network decides differently from the checkpoint (decision {first} "
                              f"of {len(full_log.calls)} on {where}); not exported")
    counted = judge.decisions_note(len(full_log.calls), full_log.choices)
    log(f"export: {counted} on {where} identical to the checkpoint's")
    chosen, why = precision, f"{precision}, as asked"
    if precision != "fp32":
        changed = decisions.first_difference(full_log, decisions.logged(exported(half), run)[0])
        shown_beyond = precision == "auto" and bool(record.scenario)
        chosen = precision if precision != "auto" else "fp16" if changed is None and not shown_beyond else "fp32"
        why = (f"fp16 makes the same {counted} as fp32 on {where}" if changed is None else
               f"fp16 changes decision {changed} of {counted} on {where}") + \
            ("" if precision == "auto" else f"; {precision} as asked") + \
            ("; kept in fp32: a policy of a scenario is shown on every scenario it can run (the leaderboard's "
             "transfer rows), beyond the episodes this check covers" if shown_beyond and changed is None else "")
        log(f"export: {why}: stored in {chosen}")
    metric = judge.metric
    validated = scores[0] if validation.get("starts") else []  # the policy's own score on its run's validation
    fields = card.make(record.to_dict(), machine=full_log.machine or {}, budget=card.budget_of(path),
                       precision={"stored": chosen, "why": why},
                       validation={"metric": metric, "score": float(np.mean(validated)) if validated else None,
                                   "per_sequence": validated, "sequences": len(validated),
                                   "length": validation.get("length"), "lower_is_better": lower_is_better(metric),
                                   "heuristics": validation.get("heuristics") or {}})
    return store.write(out_dir, name or Path(out_dir).name, record.to_dict(), net.architecture,
                       half if chosen == "fp16" else weights, fields, chosen)
