"""RLSchert and its DeepRM baseline behind the `Agent` contract.

No ray/torch at import. These agents run on `schedrl.dtsim` (the discrete-time cluster), not on the
event simulator: their judge (`judge`) is a `GeneratedJudge`, scoring seeded generated sequences (Bernoulli
arrivals of VASP jobs) against RLSchert Table 7's heuristics, without and (RLSchert) with the kill rule.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from schedrl.agents.base import Agent, AgentOptions, Baseline, GeneratedJudge, Prepared
from schedrl.agents.rlschert import ENV_ID
from schedrl.agents.rlschert.config import ESTIMATES, REWARDS, SEQUENCE_FIELDS, TEACHERS, RLSchertEnvConfig
from schedrl.agents.rlschert.evaluation import BASELINES
from schedrl.agents.rlschert.keys import METRIC
from schedrl.agents.rlschert.settings import (
    DISCOUNTS, IMITATION_START, IMITATION_STEPS, KILL_HEADS, MODELS, NO_IMITATION, WARM_START_KEY, DeepRMSettings, RLSchertSettings,
)
from schedrl.agents.runners import runner_options

CONFIG_PATHS: dict[str, tuple[str, ...]] = {
    "lr": ("lr",), "entropy_coeff": ("entropy_coeff",), "clip_param": ("clip_param",), "gamma": ("gamma",),
    "vf_loss_coeff": ("vf_loss_coeff",), "minibatch_size": ("minibatch_size",),
    "train_batch_size_per_learner": ("_train_batch_size_per_learner",), "seed": ("seed",),
}
"""settings field -> key path in `AlgorithmConfig.to_dict()` (sweeps)."""


class RLSchertAgent(Agent):
    """RLSchert: PPO + imitation (kill rule and SAF as teachers) over the recorded re-estimates, with kill actions."""

    name = "rlschert"
    summary = "RLSchert (Wang et al. 2021): PPO + imitation on the discrete-time cluster with re-estimates and kills"
    env_id = ENV_ID
    env_config_class = RLSchertEnvConfig
    settings_class = RLSchertSettings
    models = MODELS
    settings_section = "ppo"
    env_searchable = ("job_rate", "res_slot", "reward", "kill", "estimates", "simu_len", "jobs", "predictable",
                      "work_conserving", "teacher")
    env_overrides: Mapping[str, Any] = {}
    """Env fields this agent fixes whatever the options say."""

    # ---------------------------------------------------------------- configuration
    def add_arguments(self, p: argparse.ArgumentParser) -> None:
        if "kill" not in self.env_overrides:
            p.add_argument("--kill", action=argparse.BooleanOptionalAction, default=True,
                           help="kill actions (Discrete(14)); --no-kill: RLSchert without kill (Discrete(6))")
        p.add_argument("--job-rate", type=float, default=0.7, help="arrival probability per step, in (0, 1] (default 0.7)")
        p.add_argument("--res-slot", type=int, default=20, help="resource units of the pool (default 20)")
        p.add_argument("--simu-len", type=int, default=200, help="arrival steps per episode (default 200)")
        p.add_argument("--reward", choices=REWARDS, default="slowdown", help="Eq. 9 slowdown or Eq. 10 completion")
        if "estimates" not in self.env_overrides:
            p.add_argument("--estimates", choices=ESTIMATES, default="recorded",
                           help="recorded re-estimates (default) or the pre-run prediction only")
            p.add_argument("--predictable", type=float, default=1.0,
                           help="fraction of jobs whose re-estimates are followed, in [0, 1] (default 1.0; "
                                "RLSchert Table 9); the others keep their pre-run prediction")
        p.add_argument("--work-conserving", action="store_true",
                       help="ours: no void action while a visible job can start now (the heuristics' rule; "
                            "stops greedy void loops; default off, the paper's action space)")
        p.add_argument("--jobs", default="", help="VASP job CSV (default: ../shared/data or $SCHEDRL_DATA_PATH; "
                                                  "'synthetic' for the generated table)")
        p.add_argument("--model", choices=MODELS, default="mlp", help="network (default mlp 64-64)")
        if "kill" not in self.env_overrides:
            p.add_argument("--kill-head", choices=KILL_HEADS, default="flat",
                           help="how the network scores kills: flat (default, the paper's: the output layer's 8 kill "
                                "logits) or slots (ours: one small MLP shared by the 8 running slots scores each "
                                "slot's kill from its features; docs/experiments/rlschert.md)")
        p.add_argument("--lr", type=float, default=None, help="learning rate (default 1e-4, as in the paper)")
        p.add_argument("--batch-size", type=int, default=None, help="env steps per iteration (default 4096)")
        p.add_argument("--gamma", type=float, default=None,
                       help="discount per decision (default 0.99, as in the paper; 1.0 removes the gain of putting off "
                            "the next time step with kills and allocations, docs/experiments/rlschert.md)")
        p.add_argument("--discount", choices=DISCOUNTS, default=None,
                       help="apply gamma per decision (default; RLlib's GAE) or per time step (ours: kills and "
                            "allocations within a step are not discounted, agents/rlschert/advantages.py)")
        if self.settings_class is RLSchertSettings:
            p.add_argument("--teacher", choices=TEACHERS, default="saf",
                           help="allocation teacher of the imitation term and the warm start: saf (default, RLSchert's) "
                                "or saf-hold (ours: SAF that holds a job predicted longer than 60 steps unless it "
                                "leaves 3 units free; 2-7%% below SAF on held-out sequences, docs/experiments/rlschert.md)")
            p.add_argument("--imitation-steps", type=int, default=None,
                           help="env steps over which alpha_t anneals from 0.5 to 0 (default 200000; 0: no imitation)")
            p.add_argument("--imitation-floor", type=float, default=None, metavar="ALPHA",
                           help="ours: alpha_t anneals from 0.5 to ALPHA instead of 0 and stays there, so the teacher "
                                "keeps a hold on the policy for the whole run (default 0: the paper's schedule)")
        default = self.settings_class.warm_start
        p.add_argument("--warm-start", action=argparse.BooleanOptionalAction, default=None,
                       help="clone the env's teacher (kill rule, else SAF) by DAgger before PPO (ours; default "
                            f"{'on' if default else 'off'} for {self.name}; --no-warm-start: random initial weights)")
        p.add_argument("--warm-start-rounds", type=int, default=None,
                       help=f"DAgger rounds after the teacher's own sequences (default {self.settings_class.warm_start_rounds})")
        if "kill" not in self.env_overrides:
            p.add_argument("--warm-start-kill-weight", type=float, default=None, metavar="W",
                           help="weight of the teacher's kill decisions in the warm start's fit (default 1; kills are "
                                "~2.5%% of its decisions, docs/experiments/rlschert.md)")

    def env_config(self, **fields: Any) -> RLSchertEnvConfig:
        """An env config with this agent's fixed fields applied."""
        return RLSchertEnvConfig(**{**fields, **self.env_overrides})

    def configure(self, options: AgentOptions) -> tuple[RLSchertEnvConfig, RLSchertSettings]:
        env = self.env_config(job_rate=options.job_rate, res_slot=options.res_slot, simu_len=options.simu_len,
                              reward=options.reward, jobs=options.jobs,
                              kill=bool(getattr(options, "kill", True)),
                              estimates=getattr(options, "estimates", "recorded"),
                              predictable=getattr(options, "predictable", 1.0),
                              work_conserving=bool(getattr(options, "work_conserving", False)),
                              teacher=getattr(options, "teacher", "saf"))
        runners = runner_options(options, seed=0, num_env_runners=0, env_runner_resources=None)
        fields: dict[str, Any] = dict(runners, model=options.model, kill_head=getattr(options, "kill_head", "flat"),
                                      num_envs_per_env_runner=runners.get("num_envs_per_env_runner") or 4,
                                      num_gpus_per_learner=runners.get("num_gpus_per_learner") or 0.0)
        if options.lr is not None:
            fields["lr"] = options.lr
        if options.batch_size is not None:
            fields["train_batch_size_per_learner"] = options.batch_size
        if getattr(options, "gamma", None) is not None:
            fields["gamma"] = options.gamma
        if getattr(options, "discount", None) is not None:
            fields["discount"] = options.discount
        steps, floor = getattr(options, "imitation_steps", None), getattr(options, "imitation_floor", None)
        if steps is not None and steps < 0:
            raise ValueError(f"--imitation-steps must be >= 0; got {steps}")
        if floor is not None and not 0.0 <= floor <= IMITATION_START:
            raise ValueError(f"--imitation-floor must be in [0, {IMITATION_START}] (alpha_t starts there); got {floor}")
        if steps == 0:
            if floor:
                raise ValueError("--imitation-steps 0 turns imitation off; it cannot have --imitation-floor")
            fields["imitation_schedule"] = NO_IMITATION
        elif steps is not None or floor is not None:
            fields["imitation_schedule"] = ((0, IMITATION_START), (steps or IMITATION_STEPS, floor or 0.0))
        if getattr(options, "warm_start", None) is not None:
            fields["warm_start"] = bool(options.warm_start)
        if getattr(options, "warm_start_rounds", None) is not None:
            fields["warm_start_rounds"] = options.warm_start_rounds
        if getattr(options, "warm_start_kill_weight", None) is not None:
            fields["warm_start_kill_weight"] = options.warm_start_kill_weight
        if fields["kill_head"] != "flat" and not env.kill:
            raise ValueError(f"--kill-head {fields['kill_head']} scores kill actions; --no-kill has none")
        settings = self.settings_class(**fields)
        spec = settings.warm_start_spec()
        if spec:  # it runs inside the trial, silent until its one-line report: say what is coming (`train` prints it)
            options.note(
                f"warm start: DAgger of {'the ' * env.kill}{env.teacher_label} ({spec['episodes']} teacher "
                f"sequences, then {spec['rounds']} rounds of {spec['round_episodes']}) before the first iteration, "
                "a few minutes with no progress lines (about 4 on 2 cores at the defaults); its report comes with "
                "iteration 1 (--no-warm-start for none)")
        return env, settings

    def settings_from_dict(self, data: Mapping[str, Any]) -> RLSchertSettings:
        return self.settings_class.from_dict(data)

    def warm_start(self, algorithm):
        """The DAgger warm start (`warm_start.py`) when the settings ask for it, with the trial's seed and gamma."""
        spec = algorithm.config.learner_config_dict.get(WARM_START_KEY)
        if not spec:
            return None
        from schedrl.agents.rlschert.warm_start import warm_start

        return warm_start(algorithm, {**spec, "seed": algorithm.config.seed or 0, "gamma": algorithm.config.gamma})

    # ---------------------------------------------------------------- what it is judged on
    def judge(self, env_config: RLSchertEnvConfig | Mapping[str, Any]) -> GeneratedJudge:
        """Seeded generated sequences on the env's cluster (held-out seeds), average slowdown, Table 7's heuristics
        (names of `schedrl.dtsim.heuristics.HEURISTICS`), with the kill rule too where the env kills. The expected
        jobs per sequence: simu_len x job_rate."""
        env = env_config if isinstance(env_config, RLSchertEnvConfig) else RLSchertEnvConfig.from_dict(env_config)
        plain = tuple(Baseline(name, None, name.upper()) for name in BASELINES)
        kills = tuple(Baseline(name, None, name.upper() + "+KILL") for name in BASELINES) if env.kill else ()
        return GeneratedJudge(load=env.job_table, metric=METRIC, baselines=plain + kills,
                              sequence_length=max(1, round(env.simu_len * env.job_rate)), cluster=env.dtsim_config(),
                              kill=env.kill, fields={name: getattr(env, name) for name in SEQUENCE_FIELDS})

    def prepare(self, env_config: RLSchertEnvConfig, settings, options: Mapping[str, Any], log=print) -> Prepared:
        """Check the job table against the pool; record the job file's checksum."""
        import hashlib

        env = replace(env_config, **self.env_overrides)
        if env != env_config:
            log(f"{self.name}: env fixed to {dict(self.env_overrides)}")
        env = env.portable()  # a relative --jobs FILE made absolute: the trials run in their trial directories
        table = env.job_table()
        path = env.jobs_path()
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if path is not None else None
        log(f"{self.name}: {len(table)} jobs from {table.source}; res_slot {env.res_slot}, job_rate {env.job_rate}, "
            f"simu_len {env.simu_len}, kill {env.kill}, estimates {env.estimates}, reward {env.reward}")
        return Prepared(env, digest)

    # ---------------------------------------------------------------- RLlib
    def algorithm_config(self, env_config: RLSchertEnvConfig, settings: RLSchertSettings, model: str | None = None):
        from schedrl.agents.rlschert.learner import build_ppo_config

        settings = replace(settings, model=model) if model else settings
        env = replace(env_config, **self.env_overrides)
        return build_ppo_config(settings, self.env_id, env.to_dict())

    def module_spec(self, model: str):
        from schedrl.agents.rlschert.modules import module_spec

        return module_spec(model)

    def searchable(self) -> Mapping[str, tuple[str, ...]]:
        return CONFIG_PATHS

    def episodes_drawn(self, algorithm_config, iteration: int) -> int:
        """Sequences are drawn from each env's seeded RNG (no phases or curriculum): nothing to pick up."""
        return 0

    # ---------------------------------------------------------------- evaluation (discrete-time cluster)
    def dtsim_method(self, path, label: str | None, loaded):
        from schedrl.agents.rlschert.sweep import CheckpointMethod

        return CheckpointMethod(path, label, loaded=loaded)

    def policy_from_module(self, module, env_config: Mapping[str, Any]):
        """A greedy dtsim policy (`act(sim)`) from a trained module and the run's env config dict."""
        from schedrl.agents.rlschert.policy import RLSchertPolicy

        return RLSchertPolicy(module, env_config, name=self.name.upper())

    def inference_module(self, record, source):
        from schedrl.agents.rlschert.inference import inference_network

        return inference_network(source)


class DeepRMAgent(RLSchertAgent):
    """DeepRM (Mao et al. 2016) as RLSchert's baseline: the same env with pre-run predictions only and no kills,
    the same PPO and budget, no imitation term."""

    name = "deeprm"
    summary = "DeepRM (RLSchert's baseline): PPO on the discrete-time cluster, pre-run predictions, no kills"
    env_searchable = ("job_rate", "res_slot", "reward", "simu_len", "jobs", "work_conserving")
    env_overrides = {"kill": False, "estimates": "prerun"}
    settings_class = DeepRMSettings
