"""The Agent contract: what the shared training driver, evaluation and CLI know of an agent.

An agent is one package under `schedrl/agents/<name>/` holding everything its paper defines (env
config and env, observation, RLlib modules and learners, data preparation, the policy used for
evaluation) and one `Agent` subclass that exposes it. The layers above (`schedrl.training`,
`schedrl.eval`, `schedrl.cli`) call only the methods below and never import an agent's modules.
Importing an agent class must not import ray or torch: those are imported inside the methods that
need them (`algorithm_config`, `load_policy`), so `schedrl train AGENT --help` stays fast.

How a run goes through the contract (`schedrl.training.driver`):

    agent = get_agent(name)
    env_config, settings = agent.configure(args)             # CLI options -> frozen dataclasses
    prepared = agent.prepare(env_config, settings, options, log)   # normalisation, filtering / curriculum
    algo = agent.algorithm_config(prepared.env_config, settings)   # any RLlib AlgorithmConfig
    ... Tune runs `algo`; every iteration the greedy policy is validated ...
    policy = agent.policy_from_module(module, record)        # pick(sim) [+ backfill(sim), kill(sim)]
    compare(workload, agent.baselines(env_config) + [policy], agent.sim_config(env_config))

Adding an agent: see docs/architecture.md (a checklist).
"""

from __future__ import annotations

import argparse
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Protocol, runtime_checkable

from schedrl.scenarios.split import VALIDATION_SHARE, held_out_after, zone
from schedrl.sim.config import SimConfig


@runtime_checkable
class SchedulingPolicy(Protocol):
    """What the simulator runs (`Simulator.run`): every decision an agent may make.

    `pick(sim)` is required: the queued job to start (or hold, pick-and-wait) next. Optional:
    `backfill(sim)` chooses a candidate at a DECIDE_BACKFILL point (DRAS level 2; default: the
    first candidate in queue order), `kill(sim)` names a running job to kill and requeue before a
    pick (RLSchert; default: none). Heuristics, trained checkpoints and outside models
    (`schedrl.eval.policies.FunctionPolicy`) all have this shape.
    """

    def pick(self, sim) -> int: ...


@dataclass(frozen=True)
class Baseline:
    """A heuristic the agent's paper compares with, and how it is run."""

    policy: str
    """Heuristic name (`schedrl.heuristics.HEURISTICS`)."""
    sim: SimConfig | None = None
    """Simulator semantics for this baseline; None: the agent's own (`Agent.sim_config`)."""
    label: str | None = None
    """Column label (default: the policy name upper-cased, e.g. `FCFS+EASY`)."""
    make: Callable[[], Any] | None = None
    """For a baseline that is not a named heuristic (MRSch's GA): builds the policy object; `policy` is then
    only its short name."""

    @property
    def name(self) -> str:
        return self.label or self.policy.upper()


@dataclass(frozen=True)
class Prepared:
    """The result of `Agent.prepare`: an env config ready for every trial."""

    env_config: Any
    """The agent's env config with everything derived from the data filled in (normalisation
    constants, phase-1 starts, curriculum jobsets), and the trace recorded portably (a catalog name)."""
    trace_sha256: str | None = None
    """Checksum of the training trace (for the run record)."""


Log = Callable[[str], None]


class Agent(ABC):
    """One RL scheduler (a paper), as the shared layers see it. Subclasses set the class attributes."""

    name: ClassVar[str]
    """CLI name: `schedrl train <name>`; recorded in every run record."""
    summary: ClassVar[str]
    """One line for `schedrl train --help`."""
    env_id: ClassVar[str]
    """The gymnasium id of its env (registered by `schedrl.envs`)."""
    env_config_class: ClassVar[type]
    """Frozen dataclass of the env settings, with `from_dict` (rejecting unknown keys) and `to_dict`."""
    settings_class: ClassVar[type]
    """Frozen dataclass of the algorithm settings (PPO's, DQN's, a custom algorithm's)."""
    models: ClassVar[tuple[str, ...]] = ()
    """Names of its networks (`--model`); the first is the default."""
    settings_section: ClassVar[str] = "settings"
    """Name of the settings section in sweep files (`ppo` for PPO agents)."""
    env_searchable: ClassVar[tuple[str, ...]] = ("trace",)
    """Env fields a sweep may search (each distinct value is prepared before the sweep starts)."""
    event_simulator: ClassVar[bool] = True
    """Its env runs on `schedrl.sim` (traces, `SimConfig`); False for the discrete-time cluster (`schedrl.dtsim`),
    whose agents override `evaluation_ids`/`score_policy`/`score_baselines` and have no `SimConfig`."""

    # ---------------------------------------------------------------- configuration
    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Add the agent's own `schedrl train` options (the shared ones: trace, stop, seed, out...)."""

    @abstractmethod
    def configure(self, args: argparse.Namespace) -> tuple[Any, Any]:
        """(env config, settings) from parsed `schedrl train` options: the shared ones (trace, cleaning,
        seed, num_env_runners, envs_per_runner, num_gpus_per_learner, runner_resources) and the agent's
        own. Raises ValueError on a bad value or combination (printed as one `error:` line)."""

    def preparation_options(self, args: argparse.Namespace) -> dict[str, Any]:
        """Options of `prepare` taken from the agent's own CLI options (merged over the sweep file's
        `training:` section: filtering, filter_phase1_iterations, validation_sequences, checkpoint_every)."""
        return {}

    def settings_from_dict(self, data: Mapping[str, Any]):
        """Settings back from a run record or a sweep file section."""
        return self.settings_class(**dict(data))

    # ---------------------------------------------------------------- data
    @abstractmethod
    def load_workload(self, env_config):
        """The cleaned workload the env config trains on (or is evaluated on)."""

    @abstractmethod
    def sim_config(self, env_config) -> SimConfig:
        """Simulator semantics of the env (discipline, window, backfilling, preset)."""

    @abstractmethod
    def metric(self, env_config) -> str:
        """The objective (`schedrl.metrics.METRICS` key) validation and evaluation report."""

    held_out_after = staticmethod(held_out_after)
    """`held_out_range` of an agent that trains on jobs [0, end) (`schedrl.scenarios.split.held_out_after`)."""

    def held_out_range(self, env_config, n_jobs: int) -> tuple[int, int]:
        """The part [lo, hi) of the cleaned trace that validation and evaluation sequences come from.
        Default: all of it (RLScheduler trains and evaluates on random windows of the whole trace);
        agents that train on a prefix (DRAS, MRSch: the first 70%) return the rest."""
        return 0, n_jobs

    def sequence_length(self, env_config) -> int:
        """Jobs per training episode."""
        return int(getattr(env_config, "sequence_length"))

    def validation_length(self, env_config, workload, evaluation_jobs: int) -> int:
        """Jobs per validation sequence when `training.validation_jobs` is not set (default: the training
        episode's length). `evaluation_jobs`: the length of the run's final evaluation sequences."""
        return self.sequence_length(env_config)

    @abstractmethod
    def baselines(self, env_config) -> tuple[Baseline, ...]:
        """The heuristics the paper compares with (validation and the final table)."""

    @abstractmethod
    def prepare(self, env_config, settings, options: Mapping[str, Any], log: Log) -> Prepared:
        """Derive everything the env needs from the data before training (normalisation constants,
        trajectory filtering, a curriculum of jobsets). `options`: the shared preparation options
        (`filtering`, `filter_phase1_iterations`). Runs once per distinct env config of a sweep, in the
        driver, never on env runners. (Validation sequences are chosen by the driver from `baselines`.)"""

    def env_for_trace(self, env_config, trace: str, cleaning: str | None = None):
        """The env config moved to another trace for evaluation, keeping what was learned (normalisation)."""
        from dataclasses import replace

        changes: dict[str, Any] = {"trace": trace}
        if cleaning is not None:
            changes["cleaning"] = cleaning
        return replace(env_config, **changes)

    # ---------------------------------------------------------------- RLlib
    @abstractmethod
    def algorithm_config(self, env_config, settings, model: str | None = None):
        """The RLlib `AlgorithmConfig` (new API stack) training this agent: PPO with a custom learner,
        DQN, or a custom `Algorithm` with its own `training_step`. Env runners, seeds and fault
        tolerance come from `settings`. The driver adds its callbacks and Tune's stop/checkpoints."""

    def module_spec(self, model: str):
        """The `RLModuleSpec` of network `model` (sweeps that search `model` place it into the config)."""
        raise ValueError(f"agent {self.name!r} has no choice of network")

    def trial_env_value(self, field: str, prepared: Mapping[str, Any], trial_config: Mapping[str, Any]):
        """The value of env field `field` for one trial of a sweep: the prepared one, unless it depends
        on the trial's searched settings (e.g. episodes per filtering phase on its batch size)."""
        return prepared[field]

    def searchable(self) -> Mapping[str, tuple[str, ...]]:
        """Settings fields a sweep may search -> their key path in `AlgorithmConfig.to_dict()`."""
        return {}

    def episodes_drawn(self, algorithm_config, iteration: int) -> int:
        """Episodes each env instance has drawn after `iteration` training iterations: a resumed run or a
        restarted env runner tells its envs (`continue_training`) so they pick up their episode source
        (filtering phase, curriculum phase) there instead of replaying it."""
        c = algorithm_config
        length = int(c.env_config.get("sequence_length", 256))
        per_iter = max(1, int(c.train_batch_size_per_learner) // max(1, length))
        n_envs = max(1, int(c.num_env_runners)) * int(c.num_envs_per_env_runner)
        return -(-iteration * per_iter // n_envs)

    def warm_start(self, algorithm) -> dict[str, Any] | None:
        """Called once a training `Algorithm` is built, before it samples: an agent may initialise its
        module here (RLScheduler clones a heuristic, `--warm-start`). Returns a report for the progress
        output (`training.callbacks.describe_warm_start`), or None when it did nothing (the default)."""
        return None

    # ---------------------------------------------------------------- evaluation
    VALIDATION_SHARE: ClassVar[float] = VALIDATION_SHARE
    """Share of the held-out part (its first jobs) that validation sequences come from; evaluation takes the rest
    (an env config with a `validation_share` field sets its own)."""

    def split_range(self, env_config, n_jobs: int, validation: bool = False) -> tuple[int, int]:
        """Where validation (`validation=True`) or evaluation sequences start from: the held-out part split in
        two disjoint zones, validation first (`VALIDATION_SHARE` or the env's `validation_share`), so the checkpoint chosen on validation is
        judged on jobs neither training nor selection saw. With no held-out part (`held_out_range` is the
        whole trace: RLScheduler's paper protocol) both use the whole trace."""
        return zone(self.held_out_range(env_config, n_jobs), validation,
                    getattr(env_config, "validation_share", self.VALIDATION_SHARE))

    def evaluation_ids(self, env_config, workload, count: int, seed: int, length: int,
                       validation: bool = False) -> list[int]:
        """`count` seeded held-out sequences, by id: start positions in the evaluation (or, with `validation`,
        the validation) zone of `split_range` (an agent whose sequences are generated, like RLSchert's
        Bernoulli arrivals, returns their seeds)."""
        import numpy as np

        lo, hi = self.split_range(env_config, len(workload), validation)
        if count and hi - lo < length:
            zone = "validation" if validation else "evaluation"
            raise ValueError(f"trace {workload.name!r}: the {hi - lo} held-out {zone} jobs (positions {lo}..{hi - 1}) "
                             f"are fewer than the sequence length {length}")
        rng = np.random.default_rng(seed)
        return [lo + int(s) for s in rng.integers(0, hi - lo - length + 1, count)] if count else []

    def sequence_fields(self, env_config) -> dict[str, Any]:
        """Agents whose sequences are generated: the env fields that decide a seeded sequence's jobs and arrivals
        (checkpoints share one evaluation table only where these agree). Event-simulator agents have none: their
        sequences are positions in a trace."""
        raise NotImplementedError(f"{self.name} runs on the event simulator: its sequences are trace positions")

    def policy_metrics(self, policy, env_config, workload, ids, length: int) -> list:
        """Every aggregate (`schedrl.metrics.Metrics`) of `policy` on each sequence `ids` (event-simulator agents;
        an agent on another simulator raises)."""
        from schedrl.metrics import summarize
        from schedrl.scenarios.scoring import run_policy
        from schedrl.sim import Simulator
        from schedrl.workload.sampling import sequence

        config = self.sim_config(env_config)
        return [summarize(run_policy(policy, Simulator(sequence(workload, s, length), config))) for s in ids]

    def online_metrics(self, policy, checkpoint, env_config, workload, ids, length: int, seed: int = 0,
                       progress=None) -> list:
        """Every aggregate of `policy` learning online while it schedules the sequences `ids` in order (DRAS
        §V-D/E; `schedrl evaluate --online`); agents without an online mode raise ValueError."""
        raise ValueError(f"{self.name} has no online-learning mode (`evaluate --online` is the DRAS "
                         "agents')")

    def baseline_metrics(self, env_config, workload, ids, length: int, sim_config: SimConfig | None = None,
                         seed: int = 0) -> dict[str, list]:
        """Each baseline's `Metrics` on the sequences `ids`, keyed by its label; a baseline without semantics of its
        own runs under `sim_config` (default: the agent's)."""
        from schedrl.scenarios.scoring import baseline_metrics
        from schedrl.workload.sampling import sequence

        config = sim_config or self.sim_config(env_config)
        return {b.name: [baseline_metrics(b, sequence(workload, s, length), config, seed) for s in ids]
                for b in self.baselines(env_config)}

    def score_policy(self, policy, env_config, workload, ids, length: int) -> list[float]:
        """The objective's value on each sequence `ids` under `policy` (default: the event simulator)."""
        metric = self.metric(env_config)
        return [m.value(metric) for m in self.policy_metrics(policy, env_config, workload, ids, length)]

    def score_baselines(self, env_config, workload, ids, length: int, sim_config: SimConfig | None = None,
                        seed: int = 0) -> dict[str, list[float]]:
        """Each baseline's values on the sequences `ids`, keyed by its label; a baseline without semantics of
        its own runs under `sim_config` (default: the agent's)."""
        metric = self.metric(env_config)
        return {label: [m.value(metric) for m in ms]
                for label, ms in self.baseline_metrics(env_config, workload, ids, length, sim_config, seed).items()}

    def dtsim_method(self, path, label: str | None, loaded):
        """The loaded checkpoint `loaded` (`schedrl.agents.checkpoint.load_policy`) as a method of the discrete-time
        sweep (`schedrl.dtsim.sweep.Method`: `label`, `policy_at(config, table)`); only the discrete-time agents
        have one."""
        raise ValueError(f"{path} is a {self.name} checkpoint; the sweep runs checkpoints of the discrete-time "
                         "agents (rlschert, deeprm)")

    @abstractmethod
    def policy_from_module(self, module, env_config: Mapping[str, Any]) -> SchedulingPolicy:
        """A greedy `SchedulingPolicy` from a trained RLModule and the run's env config dict."""

    def load_module(self, module_dir, record) -> Any:
        """The trained RLModule of a checkpoint (default: RLlib's own `RLModule.from_checkpoint`)."""
        from ray.rllib.core.rl_module.rl_module import RLModule

        return RLModule.from_checkpoint(str(module_dir))

    def inference_module(self, record, source) -> Any:
        """A ray-free torch network of the policy (its module imports torch and numpy only) with the parameter names of
        the trained RLModule's policy part, which `policy_from_module` takes as it takes the RLModule (exported
        policies, `schedrl.zoo`). `source`: the trained RLModule, whose architecture it copies (not its weights), or
        the `architecture` dict such a network carries (`.architecture`, JSON). Agents without one raise ValueError."""
        raise ValueError(f"{self.name} has no ray-free network: its checkpoints cannot be exported")
