"""Learned backfilling behind the `Agent` contract: PPO (RLlib's) on a kernel network that chooses the backfilled job;
the plumbing it shares with the inspector is `baserule.agent`'s.

No ray or torch at import: the RLlib pieces are imported inside `algorithm_config` and `module_spec`.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

from schedrl.agents.base import Baseline
from schedrl.agents.baserule.agent import BaseRuleAgent, BaseRuleSettings
from schedrl.agents.rlbackfill import ENV_ID
from schedrl.agents.rlbackfill.config import RLBackfillEnvConfig, base_label

OTHER_BASELINES = ("fcfs", "sjf", "f1")
"""Shown beside the base heuristic, each with the same backfilling (first fit)."""


@dataclass(frozen=True)
class RLBackfillSettings(BaseRuleSettings):
    """PPO settings (`BaseRuleSettings`) and the kernel network."""

    label = "rl-backfill"

    hidden: tuple[int, ...] = (32, 16, 8)
    """Widths of the kernel's hidden layers."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "hidden", tuple(int(h) for h in self.hidden))
        super().__post_init__()

    def own_problems(self) -> list[str]:
        if not self.hidden or min(self.hidden) < 1:
            return [f"hidden={list(self.hidden)} must be one or more widths >= 1"]
        return []


def _hidden(text: str | None) -> tuple[int, ...] | None:
    if text is None:
        return None
    try:
        return tuple(int(w) for w in text.split(","))
    except ValueError:
        raise ValueError(f"--hidden takes comma-separated widths such as 32,16,8, got {text!r}") from None


class RLBackfillAgent(BaseRuleAgent):
    """Learned backfilling (RLBackfilling, PMBS'23): choose which EASY candidate starts, over a base heuristic."""

    name = "rl-backfill"
    summary = "learned backfilling (RLBackfilling, PMBS'23): choose which candidate EASY backfills, over F1, PPO"
    env_id = ENV_ID
    env_config_class = RLBackfillEnvConfig
    settings_class = RLBackfillSettings
    models = ("kernel",)
    env_searchable = ("trace", "base", "backfill", "metric", "sequence_length", "skip", "slots")
    called = "rl-backfill"
    base_help = ("the heuristic that orders the queue (its blocked job is reserved): fcfs, sjf, f1, ... "
                 "(`schedrl compare --help`) or tuned:FILE (`schedrl tuned fit`); default f1")
    backfill_option = {"default": "easy", "metavar": "easy|rlscheduler",
                       "help": "the backfilling whose candidates the policy chooses among (default easy)"}
    other_baselines = OTHER_BASELINES
    policy_class = "schedrl.agents.rlbackfill.policy:RLBackfillPolicy"
    network_class = "schedrl.agents.rlbackfill.inference:RLBackfillNetwork"

    # ---------------------------------------------------------------- configuration
    def add_decision_arguments(self, p: argparse.ArgumentParser) -> None:
        p.add_argument("--slots", type=int, default=None, help="candidates seen at once (default 32)")
        p.add_argument("--skip", action="store_true",
                       help="the policy may also start none of the candidates until the next event (default: off, "
                            "some candidate always starts, as under EASY)")

    def add_network_arguments(self, p: argparse.ArgumentParser) -> None:
        p.add_argument("--hidden", default=None, metavar="W1,W2,...",
                       help="widths of the kernel's hidden layers (default 32,16,8)")

    def env_options(self, args: argparse.Namespace) -> dict[str, Any]:
        return {"skip": bool(args.skip), **({"slots": args.slots} if args.slots is not None else {})}

    def setting_options(self, args: argparse.Namespace, env: RLBackfillEnvConfig) -> dict[str, Any]:
        return {"hidden": _hidden(args.hidden)}

    # ---------------------------------------------------------------- what it is judged on
    def baseline(self, env_config: RLBackfillEnvConfig, name: str, label: str | None = None, make=None) -> Baseline:
        """Each heuristic with the env's backfilling taken first-fit (EASY's choice): `F1+EASY`."""
        return Baseline(name, sim=env_config.base_sim_config(),
                        label=(label or name.upper()) + "+" + env_config.backfill.upper(), make=make)

    def describe(self, env_config: RLBackfillEnvConfig) -> str:
        sim = env_config.base_sim_config()
        return (f"{sim.discipline}" + (f" (window {sim.window})" if sim.window else "") + f", {env_config.backfill} "
                f"backfilling chosen by the policy ({env_config.slots} slots"
                + (", may start none" if env_config.skip else "") + f"), {env_config.metric} relative to "
                f"{base_label(env_config.base)}+{env_config.backfill.upper()}")

    # ---------------------------------------------------------------- RLlib
    def rl_module_class(self):
        from schedrl.agents.rlbackfill.module import RLBackfillModule

        return RLBackfillModule

    def model_config(self, settings: RLBackfillSettings) -> dict[str, Any]:
        return {"hidden": list(settings.hidden)}


__all__ = ["RLBackfillAgent", "RLBackfillSettings"]
