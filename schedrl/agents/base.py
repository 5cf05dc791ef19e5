"""The Agent contract: what the shared training driver, evaluation and CLI know of an agent.

An agent is one package under `schedrl/agents/<name>/` holding everything its paper defines (env
config and env, observation, RLlib modules and learners, data preparation, the policy used for
evaluation) and one `Agent` subclass that exposes it. The layers above (`schedrl.training`,
`schedrl.eval`, `schedrl.cli`) call only the methods below and never import an agent's modules.
Importing an agent class must not import ray or torch: those are imported inside the methods that
need them (`algorithm_config`, `load_policy`), so `schedrl train AGENT --help` stays fast.

How a run goes through the contract (`schedrl.training.driver`):

    agent = get_agent(name)
    env_config, settings = agent.configure(options)          # AgentOptions -> frozen dataclasses
    prepared = agent.prepare(env_config, settings, options, log)   # normalisation, filtering / curriculum
    algo = agent.algorithm_config(prepared.env_config, settings)   # any RLlib AlgorithmConfig
    ... Tune runs `algo`; every iteration the greedy policy is validated ...
    policy = agent.policy_from_module(module, record)        # pick(sim) [+ backfill(sim), kill(sim)]
    judge = agent.judge(env_config)                          # what it is judged on (schedrl.scenarios.judge)
    judge.score_policy(policy, judge.load(), ids, length), judge.score_baselines(...)

What every agent inherits is the members of `Agent` below. What only some agents can do is a capability, declared by
implementing its method and checked with `isinstance(agent, Capability)`: `WarmStart`, `OnlineLearning`,
`DTSimSweep`, `Exportable`.

Adding an agent: see docs/architecture.md (a checklist).
"""

from __future__ import annotations

import argparse
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Callable, ClassVar, Protocol, runtime_checkable

from schedrl.scenarios.judge import Baseline, GeneratedJudge, Judge, TraceJudge
from schedrl.scenarios.split import held_out_after


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


@runtime_checkable
class Inspecting(Protocol):
    """A policy that may reject its base rule's proposal (the inspector, a distilled tree): `Simulator.run` asks
    `defer(sim)` first at a pick point (True: nothing starts now), and `pick(sim)` is the proposal. The Slurm adapter
    ranks its queue by the same two questions (`schedrl.slurm.order.rank`: a rejected proposal is deferred)."""

    def defer(self, sim) -> bool: ...

    def pick(self, sim) -> int: ...


@runtime_checkable
class Explaining(Protocol):
    """A policy that says why it accepts or rejects a proposal, changing nothing (the Slurm adapter's audit log,
    `schedrl slurm explain`): `explain(sim, proposal)` -> {"decide": "accept"|"reject", "by": ..., "path": [lines]}."""

    def explain(self, sim, proposal: int) -> Mapping[str, Any]: ...


@dataclass(frozen=True)
class Prepared:
    """The result of `Agent.prepare`: an env config ready for every trial."""

    env_config: Any
    """The agent's env config with everything derived from the data filled in (normalisation
    constants, phase-1 starts, curriculum jobsets), and the trace recorded portably (a catalog name)."""
    trace_sha256: str | None = None
    """Checksum of the training trace (for the run record)."""


Log = Callable[[str], None]


class AgentOptions:
    """The options an agent is configured with (`Agent.configure`), built once and never changed.

    Each value is the one the command line gave, else the scenario's (`Scenario.agent_options`, `schedrl train
    --scenario`), else the parser's default: `schedrl.training.single.agent_options` builds it from `schedrl train`'s
    parsed options, `AgentOptions.of(namespace)` from any parsed namespace as it is. Read as attributes, named as the
    options' argparse dests (`options.trace`, `options.batch_size`; `getattr(options, "kill", True)` for an option
    another parser may lack; a missing one raises AttributeError). The shared ones: trace, cleaning, seed,
    num_env_runners, envs_per_runner, num_gpus_per_learner, runner_resources (`{name: amount}` from
    `--runner-resource`, or None), the stop, validation and evaluation options; then the agent's own
    (`Agent.add_arguments`).

    `given(dest)`: whether the command line gave option `dest`; `chosen(dest)`: whether the command line or the
    scenario set it (an agent's defaults for this machine replace neither: only a parser's default); `replace(**changes)`:
    a copy with some values changed (what the agent then reads); `note(line)`: a line about a setting the agent chose
    that the user should hear (machine-sized defaults, a warm start to come), which `schedrl train` prints once every
    option is valid (`notes`; copies made by `replace` share them)."""

    __slots__ = ("_values", "_explicit", "_scenario", "_notes")

    def __init__(self, values: Mapping[str, Any], explicit: Iterable[str] = (), notes: list[str] | None = None,
                 scenario: Iterable[str] = ()):
        object.__setattr__(self, "_values", dict(values))
        object.__setattr__(self, "_explicit", frozenset(explicit))
        object.__setattr__(self, "_scenario", frozenset(scenario))
        object.__setattr__(self, "_notes", [] if notes is None else notes)

    @classmethod
    def of(cls, args: argparse.Namespace, under: Mapping[str, Any] | None = None) -> AgentOptions:
        """The options of a parsed namespace (the dests its command line gave: `args.explicit`, as `schedrl.cli.main`
        sets it), with `under`'s values (a scenario's `agent_options`) in place of the defaults of the options the
        namespace has and its command line did not give (those count as `chosen`)."""
        values = {k: v for k, v in vars(args).items() if k not in ("explicit", "run")}
        explicit = frozenset(getattr(args, "explicit", ()))
        scenario = {dest for dest in (under or {}) if dest in values and dest not in explicit}
        values.update({dest: under[dest] for dest in scenario})
        return cls(values, explicit, scenario=scenario)

    def __getattr__(self, name: str) -> Any:
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(f"no option {name!r}") from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"AgentOptions are read-only (use replace({name}=...))")

    def __contains__(self, name: str) -> bool:
        return name in self._values

    def __repr__(self) -> str:
        return (f"AgentOptions({self._values!r}, explicit={sorted(self._explicit)!r}, "
                f"scenario={sorted(self._scenario)!r})")

    def given(self, dest: str) -> bool:
        """Whether the command line gave option `dest` (abbreviated, `--opt=value` or `--no-opt` included)."""
        return dest in self._explicit

    def chosen(self, dest: str) -> bool:
        """Whether option `dest`'s value is the command line's or the scenario's, not a parser default: a scenario owns
        what a policy is trained and judged on, so an agent's machine-sized defaults replace only parser defaults."""
        return dest in self._explicit or dest in self._scenario

    def replace(self, **changes: Any) -> AgentOptions:
        """A copy with `changes` (option dest -> value), sharing the notes."""
        return AgentOptions({**self._values, **changes}, self._explicit, self._notes, self._scenario)

    def to_dict(self) -> dict[str, Any]:
        """Every option by dest."""
        return dict(self._values)

    def note(self, line: str) -> None:
        """Say `line` to the user once every option is valid (`schedrl train` prints `notes`)."""
        self._notes.append(line)

    @property
    def notes(self) -> tuple[str, ...]:
        """What `note` was told, in order."""
        return tuple(self._notes)



class Agent(ABC):
    """One RL scheduler (a paper), as the shared layers see it. Subclasses set the class attributes.

    The contract is what an agent owns: its env and settings (and their CLI options), preparing the data, its RLlib
    `AlgorithmConfig`, loading a trained module into a policy, and `judge`: the held-out protocol its env config
    implies (data, semantics, objective, baselines, split, scoring; `schedrl.scenarios.judge`). Optional
    capabilities are the `Protocol` classes below this one."""

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

    # ---------------------------------------------------------------- configuration
    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Add the agent's own `schedrl train` options (the shared ones: trace, stop, seed, out...)."""

    @abstractmethod
    def configure(self, options: AgentOptions) -> tuple[Any, Any]:
        """(env config, settings) from the options of a `schedrl train` run (`AgentOptions`: the shared ones, trace,
        cleaning, seed, num_env_runners, envs_per_runner, num_gpus_per_learner, runner_resources, and the agent's
        own). Raises ValueError on a bad value or combination (printed as one `error:` line). Never changes
        `options`; what the user should hear about the settings it chose goes to `options.note`."""

    def preparation_options(self, options: AgentOptions) -> dict[str, Any]:
        """`TrainingOptions` fields the agent's own options decide (filtering, filter_phase1_iterations; a training
        option it sizes for the machine, as RLScheduler's validate_every), laid over `schedrl train`'s shared ones
        (validation_sequences, validate_every, checkpoint_every...)."""
        return {}

    def settings_from_dict(self, data: Mapping[str, Any]):
        """Settings back from a run record or a sweep file section."""
        return self.settings_class(**dict(data))

    # ---------------------------------------------------------------- what it is judged on
    @abstractmethod
    def judge(self, env_config) -> Judge:
        """The held-out protocol of `env_config`: a `TraceJudge` (the event simulator on a trace: its loader,
        `SimConfig`, metric, baselines, training length and held-out part) or a `GeneratedJudge` (the discrete-time
        cluster on seeded sequences). Validation, the final table, `evaluate` and `select` score through it."""

    @abstractmethod
    def prepare(self, env_config, settings, options: Mapping[str, Any], log: Log) -> Prepared:
        """Derive everything the env needs from the data before training (normalisation constants,
        trajectory filtering, a curriculum of jobsets). `options`: the shared preparation options
        (`filtering`, `filter_phase1_iterations`). Runs once per distinct env config of a sweep, in the
        driver, never on env runners. (Validation sequences are chosen by the driver from the judge.)"""

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

    # ---------------------------------------------------------------- trained policies
    @abstractmethod
    def policy_from_module(self, module, env_config: Mapping[str, Any]) -> SchedulingPolicy:
        """A greedy `SchedulingPolicy` from a trained RLModule and the run's env config dict."""

    def load_module(self, module_dir, record) -> Any:
        """The trained RLModule of a checkpoint (default: RLlib's own `RLModule.from_checkpoint`)."""
        from ray.rllib.core.rl_module.rl_module import RLModule

        return RLModule.from_checkpoint(str(module_dir))


# -------------------------------------------------------------------- optional capabilities
@runtime_checkable
class WarmStart(Protocol):
    """An agent that initialises its module once the training `Algorithm` is built, before it samples (RLScheduler
    clones a heuristic, RLSchert runs DAgger of its env's teacher)."""

    def warm_start(self, algorithm) -> dict[str, Any] | None:
        """Returns a report for the progress output (`training.callbacks.describe_warm_start`), or None when the
        settings asked for none."""


@runtime_checkable
class OnlineLearning(Protocol):
    """An agent whose policy keeps learning while it schedules (DRAS §V-D/E; `schedrl evaluate --online`)."""

    def online_metrics(self, policy, checkpoint, env_config, workload, ids, length: int, seed: int = 0,
                       progress=None) -> list:
        """Every aggregate of `policy` learning online while it schedules the sequences `ids` in order."""


@runtime_checkable
class DTSimSweep(Protocol):
    """An agent whose checkpoints are methods of the discrete-time sweep (`schedrl dtsim sweep --checkpoint`)."""

    def dtsim_method(self, path, label: str | None, loaded):
        """The loaded checkpoint (`schedrl.agents.checkpoint.load_policy`) as a `schedrl.dtsim.sweep.Method`."""


@runtime_checkable
class Exportable(Protocol):
    """An agent with a ray-free network of its policy (exported policies, `schedrl.zoo`)."""

    def inference_module(self, record, source) -> Any:
        """A torch network (torch and numpy only) with the parameter names of the trained RLModule's policy part,
        which `policy_from_module` takes as it takes the RLModule. `source`: the trained RLModule, whose
        architecture it copies (not its weights), or the `architecture` dict such a network carries."""


@runtime_checkable
class Distillable(Protocol):
    """An agent whose trained policy can be turned into a model an admin can read (`schedrl distill`: the inspector's
    accept/reject as a decision tree, the RLScheduler kernel's job scores as a regression tree over one job's features;
    an agent may take keywords beyond these, e.g. the kernel's `target`, which `schedrl distill` passes only where
    the agent's `distill` names them)."""

    def distill(self, policy, *, depth: int, rounds: int, windows: int, jobs: int | None, seed: int,
                log: Callable[[str], None], teacher_depth: int = 0, guard: Mapping[str, Any] | None = None,
                allowed: Iterable[str] | None = None, base: str | None = None, refit_windows: int = 0) -> Any:
        """The readable model of `policy`'s decisions, fitted on its training zone (`.text()` prints it, `.depth`);
        ValueError (one line) for a policy of this agent it cannot distil. `teacher_depth` > 0: the agent's hindsight
        teacher of that depth labels the decisions instead of the policy; `guard`: env config values (where a decision
        may change) that replace the policy's; `allowed`: the only inputs the readable model may use; `base`: the rule
        whose proposals are judged instead of the policy's; `refit_windows` > 0: thresholds chosen by rollouts on that
        many training windows (both an inspector's)."""

    def export_distilled(self, distilled, policy, out_dir, name: str, command: list[str], source: str) -> Any:
        """Write it as an exported policy of this agent (`schedrl.zoo.store.Exported`), runnable as `zoo:NAME`."""

    def distilled_text(self, exported) -> str | None:
        """What `schedrl zoo show` prints of an exported distilled policy; None for a trained network."""


def capable(agent: Agent, capability: type, message: str):
    """`agent` when it declares `capability` (implements its method), else ValueError(message): one line for the user."""
    if not isinstance(agent, capability):
        raise ValueError(message)
    return agent


def env_for_trace(env_config, trace: str, cleaning: str | None = None):
    """The env config moved to another trace for evaluation, keeping what was learned (normalisation)."""
    changes: dict[str, Any] = {"trace": trace}
    if cleaning is not None:
        changes["cleaning"] = cleaning
    return replace(env_config, **changes)


__all__ = ["Agent", "AgentOptions", "Baseline", "DTSimSweep", "Explaining", "Exportable", "GeneratedJudge",
           "Inspecting", "Judge", "Log", "OnlineLearning", "Prepared", "SchedulingPolicy", "TraceJudge", "WarmStart",
           "capable", "env_for_trace", "held_out_after"]
