"""The inspector behind the `Agent` contract: PPO (RLlib's) on an accept/reject MLP over a base heuristic; the
plumbing it shares with learned backfilling is `baserule.agent`'s, the teacher and the starvation guard its own.

No ray or torch at import: the RLlib pieces are imported inside `algorithm_config`.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

from schedrl.agents.baserule.agent import BaseRuleAgent, BaseRuleSettings
from schedrl.agents.inspector import ENV_ID
from schedrl.agents.inspector.config import InspectorEnvConfig
from schedrl.agents.inspector.mask import WHERE
from schedrl.duration import parse_duration_or_off
from schedrl.heuristics.hindsight import MAX_DEPTH
from schedrl.numbers import Integer
from schedrl.sim.config import BACKFILLS

TEACHER_KEY = "teacher"
"""`learner_config_dict` key of the teacher's settings (`InspectorSettings.teacher_spec`)."""
STARVATION_WAIT = "24h"
"""`schedrl train inspector`'s starvation guard (`--starvation-wait`): DRAS's 24 h. Without it a policy trained on
bounded slowdown learned to hold back long jobs (Lublin-1, seed 1: bsld 23.5 vs F1's 219, at twice F1's longest wait
and 44% utilisation against 76%; docs/agents/inspector.md)."""

REJECT_WHERE = "any"
"""`schedrl train inspector`'s `--reject-where` default: `any`, as before it existed. `pays` (issue 55's lever) removes
the large light-load harm but keeps a quarter or less of the teacher's gain on loaded windows, and its seed-2 student
gained -3.3% on `default`'s evaluation windows where `any`'s gained -16.6% (docs/experiments/inspector-trusted.md):
the evidence did not make it the default."""


def starvation_wait(value: str | float) -> float:
    """`--starvation-wait`'s value in seconds: a duration (`24h`, `90m`), or `0` / `off` for no guard."""
    return parse_duration_or_off(value, "--starvation-wait")


def scenarios_option(value: str | None) -> tuple[str, ...] | None:
    """`--teacher-scenarios NAME,NAME`: the names, each once (ValueError naming the option)."""
    if value is None:
        return None
    names = tuple(n.strip() for n in value.split(","))
    if not all(names):
        raise ValueError(f"--teacher-scenarios must be comma-separated scenario names, got {value!r}")
    if len(set(names)) < len(names):
        raise ValueError(f"--teacher-scenarios names a scenario twice: {value!r}")
    from schedrl.scenarios.registry import portable_name

    return tuple(portable_name(n) for n in names)  # a file read in a trial's own directory


def threshold_option(value: str | None) -> float | str | None:
    """`--teacher-threshold`: `auto` or a number >= 0 (ValueError naming the option)."""
    if value is None or value == "auto":
        return value
    try:
        number = float(value)
    except ValueError:
        raise ValueError(f"--teacher-threshold must be a finite number >= 0 or auto, got {value!r}") from None
    if not 0 <= number < float("inf"):
        raise ValueError(f"--teacher-threshold must be a finite number >= 0 or auto, got {value!r}")
    return number


TEACHER_OPTIONS: dict[str, dict[str, Any]] = {
    "depth": {"type": Integer(1, MAX_DEPTH, "each decision costs depth + 1 whole-sequence rollouts"),
              "help": f"rejections in a row the hindsight teacher tries at a decision, 1..{MAX_DEPTH} (default 1)"},
    "rounds": {"type": int, "help": "DAgger rounds after the teacher's own (default 4)"},
    "windows": {"type": int, "help": "training windows labelled per round (default 16)"},
    "epochs": {"type": int, "help": "passes over the labelled decisions at each fit (default 30)"},
    "time": {"metavar": "DURATION", "help": "start no further DAgger round after this long (e.g. 8m; default: all "
                                            "rounds)"},
    "weights": {"choices": ("balanced", "gap", "plain"),
                "help": "how the labels weigh: balanced (value gaps, the two labels equal in all; default), gap "
                        "(value gaps alone), plain (1 each)"},
    "floor": {"type": float, "help": "added to each label's weight under balanced and gap (default 0.001)"},
    "threshold": {"metavar": "T|auto",
                  "help": "subtract T from the fitted reject logit; auto: the T (0..4) that keeps the longest wait "
                          "within 1.25x and utilisation within 1 point of the base on training windows (default 0)"},
    "threshold-windows": {"type": int, "help": "training windows of 1,024 jobs --teacher-threshold auto scores each "
                                               "threshold on (default 4)"},
    "scenarios": {"metavar": "NAME,NAME",
                  "help": "also label windows of these trace scenarios' training zones, each under its own semantics "
                          "(learn the rule, not the trace); the same metric and decision as the run"},
    "wait-penalty": {"type": float, "help": "add this times the mean wait past --starvation-wait (in units of it) to "
                                            "the teacher's objective (default 0)"},
    "fit-decisions": {"type": int, "help": "fit each round on at most this many of the gathered decisions, a uniform "
                                           "draw (0: all of them; default 16384)"},
}
"""`--teacher-NAME` options of `schedrl train inspector` (`add_argument` keywords; each defaults to None: the
setting's default), each an option of `--teacher` (`InspectorSettings.teacher_NAME`)."""
OTHER_BASELINES = ("fcfs", "sjf", "wfp3", "unicep", "f1")
"""Shown beside the base heuristic: RLScheduler Table V's heuristics (SchedInspector's bases)."""


@dataclass(frozen=True)
class InspectorSettings(BaseRuleSettings):
    """PPO settings of the inspector (`BaseRuleSettings`, with the inspector's defaults), its network and its
    teacher."""

    label = "inspector"

    train_batch_size_per_learner: int = 4096
    """Env steps (inspections) per iteration: about 14 sequences of 256 jobs."""
    minibatch_size: int = 512
    """SGD minibatch."""
    entropy_coeff: float = 0.001
    """Entropy bonus."""
    hidden: int = 64
    """Units per hidden layer of the policy and value MLPs (two layers each)."""
    initial_reject: float = 0.05
    """Probability with which the untrained policy rejects (`module.InspectorModule`)."""
    teacher: str | None = None
    """`hindsight`: DAgger of the hindsight teacher before PPO (`teacher.py`); None: PPO from the biased start."""
    teacher_depth: int = 1
    """Rejections in a row the teacher tries at a decision (`schedrl hindsight --depth`)."""
    teacher_rounds: int = 4
    """DAgger rounds after the teacher's own round."""
    teacher_windows: int = 16
    """Training windows labelled per round."""
    teacher_epochs: int = 30
    """Passes over everything gathered at each fit."""
    teacher_time: float | None = None
    """Seconds after which no further round starts (None: all rounds)."""
    teacher_weights: str = "balanced"
    """How labels weigh in the fit (`teacher.WEIGHTINGS`): balanced, gap or plain."""
    teacher_floor: float = 1e-3
    """Added to every label's weight (relative value gap) under balanced and gap."""
    teacher_threshold: float | str = 0.0
    """Subtracted from the fitted reject logit (a greedy student rejects only where reject's logit exceeds accept's by
    this); `auto`: chosen on training windows so the student keeps the no-starvation constraint (`teacher.py`)."""
    teacher_threshold_windows: int = 4
    """Training windows of 1,024 jobs `auto` scores each threshold on."""
    teacher_scenarios: tuple[str, ...] = ()
    """Lever 2: trace scenarios whose training zones the teacher also draws windows from (`teacher.sources`)."""
    teacher_wait_penalty: float = 0.0
    """Lever 4: the teacher's objective adds this times the mean wait past the starvation guard's bound (in units of
    it); 0: the metric alone."""
    teacher_fit_decisions: int = 16384
    """At most this many gathered decisions in a round's fit (a uniform draw: `teacher.fit_sample`), so a round's fit
    costs the same however many rounds ran; 0: all (runs before issue 55)."""
    ppo: bool = True
    """PPO after the warm start; False (`--no-ppo`): the warm-started network is the policy: one iteration at
    learning rate 0 validates and checkpoints it unchanged."""
    anchor: float = 0.0
    """PPO after imitation (issue 55): add this times KL(student || policy) on each batch's observations to PPO's loss,
    the student frozen as the warm start left it (`anchored.AnchoredPPOLearner`); 0: plain PPO."""

    @property
    def only_iterations(self) -> int | None:
        """The iterations the run must stop after (`--no-ppo`: 1), or None (the stop criteria decide)."""
        return None if self.ppo else 1

    def teacher_spec(self) -> dict[str, Any] | None:
        """What the warm start (`teacher.warm_start`) needs; None without a teacher."""
        if self.teacher is None:
            return None
        return {"teacher": self.teacher, "depth": self.teacher_depth, "rounds": self.teacher_rounds,
                "windows": self.teacher_windows, "epochs": self.teacher_epochs, "seconds": self.teacher_time,
                "wait_penalty": self.teacher_wait_penalty, "weights": self.teacher_weights,
                "floor": self.teacher_floor, "threshold": self.teacher_threshold,
                "threshold_windows": self.teacher_threshold_windows, "seed": self.seed or 0,
                "scenarios": list(self.teacher_scenarios), "fit_decisions": self.teacher_fit_decisions}

    def own_problems(self) -> list[str]:
        problems = []
        if self.teacher is not None:
            for name in ("teacher_depth", "teacher_windows", "teacher_epochs", "teacher_threshold_windows"):
                if getattr(self, name) < 1:
                    problems.append(f"{name}={getattr(self, name)} must be >= 1")
            from schedrl.agents.inspector.teacher import WEIGHTINGS

            if self.teacher_threshold != "auto" and not (isinstance(self.teacher_threshold, (int, float))
                                                         and self.teacher_threshold >= 0):
                problems.append(f"teacher_threshold={self.teacher_threshold!r} must be a number >= 0 or auto")
            if self.teacher_weights not in WEIGHTINGS:
                problems.append(f"teacher_weights={self.teacher_weights!r} must be one of {', '.join(WEIGHTINGS)}")
            if self.teacher_rounds < 0 or self.teacher_wait_penalty < 0 or self.teacher_floor < 0 or (
                    self.teacher_time is not None and not self.teacher_time > 0):
                problems.append("teacher_rounds, teacher_wait_penalty and teacher_floor must be >= 0, teacher_time > 0")
            if self.teacher_fit_decisions < 0:
                problems.append(f"teacher_fit_decisions={self.teacher_fit_decisions} must be >= 0 (0: all)")
        elif not self.ppo:
            problems.append("ppo=False needs a teacher: without one the network would be the untrained one")
        if not self.anchor >= 0:
            problems.append(f"anchor={self.anchor} must be >= 0")
        elif self.anchor > 0 and (self.teacher is None or not self.ppo):
            problems.append("anchor > 0 keeps PPO near the teacher's student: it needs a teacher and PPO")
        if self.hidden < 1:
            problems.append(f"hidden={self.hidden} must be >= 1")
        if not 0.0 < self.initial_reject < 1.0:
            problems.append(f"initial_reject={self.initial_reject} must be in (0, 1)")
        return problems


class InspectorAgent(BaseRuleAgent):
    """SchedInspector (Zhang, Dai, Xie, HPDC'22): accept or reject the base heuristic's proposal."""

    name = "inspector"
    summary = "SchedInspector (HPDC'22): accept or reject a base heuristic's proposed job (F1 by default), PPO"
    env_id = ENV_ID
    env_config_class = InspectorEnvConfig
    settings_class = InspectorSettings
    models = ("mlp",)
    env_searchable = ("trace", "base", "backfill", "metric", "sequence_length", "starvation_wait",
                      "queue_starvation_wait", "reject_where")
    called = "the inspector"
    base_help = ("the heuristic whose proposals are inspected: fcfs, sjf, wfp3, unicep, f1, ... "
                 "(`schedrl compare --help`) or tuned:FILE (`schedrl tuned fit`); default f1")
    backfill_option = {"choices": BACKFILLS, "default": "none",
                       "help": "backfilling while an accepted job waits to fit; a rejection starts nothing, "
                               "backfilled or not, until the next event (default none)"}
    step_noun = "inspections"
    other_baselines = OTHER_BASELINES
    policy_class = "schedrl.agents.inspector.policy:InspectorPolicy"
    network_class = "schedrl.agents.inspector.inference:InspectorNetwork"

    # ---------------------------------------------------------------- configuration
    def add_decision_arguments(self, p: argparse.ArgumentParser) -> None:
        p.add_argument("--starvation-wait", default=STARVATION_WAIT, metavar="DURATION",
                       help="starvation guard: a proposal that has waited this long is always accepted (e.g. 12h, "
                            "90m; 0: off; default 24h, as DRAS's guard)")
        p.add_argument("--queue-guard", default="0", metavar="DURATION",
                       help="queue guard: no rejection while any waiting job has waited this long (e.g. 12h; default "
                            "0: off)")
        p.add_argument("--reject-where", choices=WHERE, default=REJECT_WHERE,
                       help="where the network may reject: any (wherever the guard allows; default), pays (only where "
                            "another waiting job competes with the proposal for the machine, so a lightly loaded "
                            "machine runs the base rule unchanged) or cheap (pays, and the next event is expected "
                            "within a tenth of the proposal's requested time)")
        p.add_argument("--history-features", action="store_true",
                       help="also observe the recent arrivals (time since the last, counts in the last 10 min and "
                            "hour, the last 32's requests): 27 features instead of 21")

    def add_network_arguments(self, p: argparse.ArgumentParser) -> None:
        p.add_argument("--hidden", type=int, default=None, help="units per hidden layer (default 64)")
        p.add_argument("--initial-reject", type=float, default=None,
                       help="rejection probability of the untrained policy (default 0.05)")
        p.add_argument("--teacher", default=None, metavar="hindsight",
                       help="imitate a teacher before PPO: hindsight (DAgger of the perfect-knowledge inspector on "
                            "training windows; its time counts in --time-budget)")
        for name, option in TEACHER_OPTIONS.items():
            p.add_argument(f"--teacher-{name}", default=None, **option)
        p.add_argument("--no-ppo", action="store_true",
                       help="no PPO after the teacher: its student is the policy (one iteration validates and "
                            "checkpoints it unchanged); needs --teacher")
        p.add_argument("--anchor", type=float, default=None, metavar="COEF",
                       help="PPO after the teacher, kept near its student: add COEF x KL(student || policy) to PPO's "
                            "loss (default 0: plain PPO); needs --teacher")

    def env_options(self, args: argparse.Namespace) -> dict[str, Any]:
        return {"history_features": bool(getattr(args, "history_features", False)),
                "starvation_wait": starvation_wait(getattr(args, "starvation_wait", STARVATION_WAIT)),
                "queue_starvation_wait": parse_duration_or_off(getattr(args, "queue_guard", "0") or "0",
                                                               "--queue-guard"),
                "reject_where": getattr(args, "reject_where", REJECT_WHERE) or REJECT_WHERE}

    def setting_options(self, args: argparse.Namespace, env: InspectorEnvConfig) -> dict[str, Any]:
        """`--hidden`, `--initial-reject` and the teacher's options (refused without `--teacher`; the teacher and
        `--teacher-scenarios` checked against the run's env)."""
        overrides = {"hidden": args.hidden, "initial_reject": args.initial_reject,
                     "anchor": getattr(args, "anchor", None)}
        teacher = getattr(args, "teacher", None)
        if getattr(args, "no_ppo", False):
            if teacher is None:
                raise ValueError("--no-ppo needs --teacher: without one the policy would be the untrained network")
            if getattr(args, "anchor", None):
                raise ValueError("--anchor keeps PPO near the teacher's student: it cannot go with --no-ppo")
            # the one iteration samples a batch only to reach its validation and checkpoint: the smallest will do
            smallest = {"train_batch_size_per_learner": ("batch_size", 256), "minibatch_size": ("minibatch_size", 256),
                        "num_epochs": ("epochs", 1)}
            overrides.update(ppo=False, **{name: value for name, (option, value) in smallest.items()
                                           if getattr(args, option, None) is None})
        elif getattr(args, "anchor", None) and teacher is None:
            raise ValueError("--anchor keeps PPO near the teacher's student: it needs --teacher")
        keys = [f"teacher_{name}".replace("-", "_") for name in TEACHER_OPTIONS]
        given = {key: getattr(args, key, None) for key in keys}
        named = [key for key, value in given.items() if value is not None]
        if teacher is None and named:
            raise ValueError(f"--{named[0].replace('_', '-')} is an option of --teacher")
        teacher_options = {**given, "teacher_threshold": threshold_option(given["teacher_threshold"]),
                           "teacher_scenarios": scenarios_option(given["teacher_scenarios"])}
        depth = given["teacher_depth"]
        from schedrl.agents.inspector.teacher import check_teacher

        check_teacher(teacher, env.base, env.sim_config(), 1 if depth is None else depth)
        if teacher_options["teacher_scenarios"]:
            from schedrl.agents.inspector.teacher import check_scenarios

            for scenario in check_scenarios(teacher_options["teacher_scenarios"], env.sim_config(), env.metric,
                                            env.sequence_length):
                if scenario.workload.trace == env.trace:
                    raise ValueError(f"--teacher-scenarios: {scenario.name} is on {env.trace}, the run's own trace "
                                     "(its windows are labelled already)")
        if given["teacher_time"] is not None:
            from schedrl.duration import parse_duration

            teacher_options["teacher_time"] = parse_duration(given["teacher_time"], "--teacher-time")
        overrides.update(teacher_options, teacher=teacher)
        return overrides

    # ---------------------------------------------------------------- what it is judged on
    def describe(self, env_config: InspectorEnvConfig) -> str:
        return (f"{env_config.sim_config().discipline}, backfill {env_config.backfill}, {env_config.metric} relative "
                "to the base on each sequence")

    # ---------------------------------------------------------------- RLlib
    def learner_options(self, settings: InspectorSettings) -> dict[str, Any]:
        from schedrl.agents.inspector.anchored import ANCHOR_KEY

        return {"learner_config_dict": {TEACHER_KEY: settings.teacher_spec(), ANCHOR_KEY: settings.anchor}}

    def algorithm_config(self, env_config: InspectorEnvConfig, settings: InspectorSettings, model: str | None = None):
        """`BaseRuleAgent`'s PPO; `--no-ppo`: at learning rate 0 (the one iteration leaves the weights as the warm start
        left them); `--anchor`: the learner that adds the KL to the frozen student."""
        config = super().algorithm_config(env_config, settings, model)
        if not settings.ppo:
            config = config.training(lr=0.0)
        if settings.anchor > 0:
            from schedrl.agents.inspector.anchored import AnchoredPPOLearner

            config = config.training(learner_class=AnchoredPPOLearner)
        return config

    def rl_module_class(self):
        from schedrl.agents.inspector.module import InspectorModule

        return InspectorModule

    def model_config(self, settings: InspectorSettings) -> dict[str, Any]:
        return {"hidden": settings.hidden, "initial_reject": settings.initial_reject}

    def warm_start(self, algorithm):
        """DAgger of the hindsight teacher (`teacher.py`) when the settings ask for it (the `WarmStart` capability)."""
        spec = (algorithm.config.learner_config_dict or {}).get(TEACHER_KEY)
        if not spec:
            return None
        from schedrl.agents.inspector.anchored import ANCHOR_KEY, freeze_anchor
        from schedrl.agents.inspector.teacher import warm_start

        report = warm_start(algorithm, {**spec, "seed": algorithm.config.seed or 0})
        if float((algorithm.config.learner_config_dict or {}).get(ANCHOR_KEY) or 0.0) > 0:
            freeze_anchor(algorithm)
        return report

    # ---------------------------------------------------------------- a rule an admin can read (`Distillable`)
    def distill(self, policy, *, depth, rounds, windows, jobs, seed, log, teacher_depth=0, guard=None, allowed=None,
                base=None, refit_windows=0):
        """The policy's accept/reject (or its hindsight teacher's, `teacher_depth` > 0) as a decision tree
        (`distill.py`: DAgger on its training zone); `base`: another rule's proposals judged."""
        from schedrl.agents.inspector.distill import distill

        return distill(policy, depth, rounds, windows, jobs, seed, log=log, teacher_depth=teacher_depth, guard=guard,
                       allowed=allowed, base=base, refit_windows=refit_windows)

    def export_distilled(self, distilled, policy, out_dir, name, command, source):
        from schedrl.agents.inspector.distill import export_tree

        judge = self.judge(self.env_config_class.from_dict(dict(policy.record.env_config)))
        return export_tree(distilled, policy, out_dir, name, command, source, judge)

    def distilled_text(self, exported):
        from schedrl.agents.inspector.distill import tree_card

        return tree_card(exported)


__all__ = ["InspectorAgent", "InspectorSettings"]
