"""What a tuned priority rule (`schedrl.heuristics.tuned`) is fitted and judged on: a trace's split as a `schedrl
train rlscheduler` run of the same options sees it, or a scenario (its semantics, metric, training zone and fixed
validation sequences).

`schedrl tuned fit` calls `fit_rule`, `schedrl tuned evaluate` (`eval/tuned.py`) `rule_judge`; the search itself
(CMA-ES over the rule's weights) is `heuristics/tuned.py:fit`, which gets everything resolved here.
"""

from __future__ import annotations

from typing import Callable, Mapping

from schedrl.scenarios.judge import TraceJudge
from schedrl.scenarios.split import VALIDATION_SHARE, Split, validation_seed
from schedrl.sim.config import BACKFILLS, SimConfig

TRAINING_EPISODE = 256
"""Jobs per training episode of the RLScheduler run whose split the rule sees: the floor of its validation length
(`TraceJudge.validation_length`)."""
VALIDATION_JOBS = 1024
"""The evaluation length the validation sequences are sized by (RLScheduler's `--eval-jobs` default)."""


def trace_judge(trace: str, cleaning: str = "default", metric: str = "bsld", backfill: str = "none",
                train_fraction: float = 0.7, validation_share: float = VALIDATION_SHARE,
                slurm: Mapping[str, int] | None = None) -> TraceJudge:
    """The judge a `schedrl train rlscheduler` run with these options has (`RLSchedulerAgent.judge`; pinned by
    tests/heuristics/test_tuned_rule.py): the trace cleaned by `cleaning`, pick-and-wait under the standard preset
    with `backfill` (under `slurm`, the site's `SimConfig` fields `slurm` gives over Slurm's defaults), the held-out
    part after the first `train_fraction`, validation its first `validation_share` with sequences as long as a
    1,024-job evaluation's where they fit. ValueError on a bad value."""
    from schedrl.metrics import METRICS
    from schedrl.workload.catalog import load_trace
    from schedrl.workload.cleaning import CleaningRules

    if metric not in METRICS:
        raise ValueError(f"metric must be one of {', '.join(METRICS)}; got {metric!r}")
    if backfill not in BACKFILLS:
        raise ValueError(f"backfill must be one of {', '.join(BACKFILLS)}; got {backfill!r}")
    if slurm and backfill != "slurm":
        raise ValueError(f"Slurm's parameters ({', '.join(slurm)}) apply only to backfill slurm, not {backfill!r}")
    rules = CleaningRules.preset(cleaning)  # raises ValueError naming the valid presets
    if not 0.0 < train_fraction <= 1.0:
        raise ValueError(f"train_fraction must be in (0, 1]; got {train_fraction}")
    if not 0.0 < validation_share < 1.0:
        raise ValueError(f"validation_share must be in (0, 1) (the held-out part is split between validation "
                         f"and evaluation); got {validation_share}")
    split = Split(train_fraction, validation_share)
    return TraceJudge(load=lambda: load_trace(trace, rules), metric=metric, baselines=(),
                      sequence_length=TRAINING_EPISODE,
                      sim_config=SimConfig.preset("standard", discipline="pick-and-wait", backfill=backfill,
                                                  **dict(slurm or {})),
                      held_out=split.held_out, validation_share=validation_share, long_validation=True)


def fit_on_trace(trace: str, cleaning: str, backfill: str, train_fraction: float, validation_share: float,
                 validation_sequences: int, settings, log: Callable[[str], None] = print,
                 slurm: Mapping[str, int] | None = None):
    """A rule fitted on the first `train_fraction` of `trace` and kept on seeded validation sequences (seed
    `validation_seed(settings.seed)`) of its validation zone; its file records the split. ValueError where the
    trace has no held-out part (`train_fraction` 1) or on a bad value."""
    from schedrl.heuristics.tuned import fit

    judge = trace_judge(trace, cleaning, settings.metric, backfill, train_fraction, validation_share, slurm)
    if train_fraction >= 1.0:
        raise ValueError("--train-fraction 1 leaves no held-out part: the rule is chosen on validation jobs it was "
                         "not fitted on, so give a fraction below 1 (default 0.7)")
    workload = judge.load()
    n = len(workload)
    split = Split(train_fraction, validation_share)
    length = judge.validation_length(workload, VALIDATION_JOBS)
    starts = judge.evaluation_ids(workload, validation_sequences, validation_seed(settings.seed), length,
                                  validation=True)
    about = {"name": workload.name, "sha256": workload.sha256, "cleaning": cleaning, "jobs": n}
    return fit(workload, judge.sim, settings, split.training_range(n)[1], starts, length, about,
               {"split": split.record(n)}, log=log)


def fit_on_scenario(scenario, settings, log: Callable[[str], None] = print,
                    note: Callable[[str], None] | None = None):
    """A rule fitted on a trace scenario's training zone, kept on its fixed validation sequences, under its semantics
    (`settings.metric` should be the scenario's); its file records the split and the scenario. ValueError on a
    generated scenario or one that trains on its whole trace."""
    from schedrl.heuristics.tuned import fit
    from schedrl.scenarios import scoring

    scenario.trace_only(f"scenario {scenario.name!r} runs on the discrete-time cluster: a tuned rule ranks the jobs "
                        "of a trace (fit it on a trace scenario)")
    workload = scoring.load(scenario, note=note)
    n = len(workload)
    train_end = scenario.split.training_range(n)[1]
    if train_end >= n:
        raise ValueError(f"scenario {scenario.name!r} trains on the whole trace (train_fraction 1): a rule kept on "
                         "validation jobs it was fitted on would be judged on them; fit it on a scenario with a "
                         "held-out part")
    validation = scoring.sequences(scenario, workload, "validation")
    about = {"name": workload.name, "sha256": workload.sha256, "cleaning": scenario.workload.cleaning_preset, "jobs": n}
    return fit(workload, scenario.sim, settings, train_end, validation.ids, validation.length, about,
               {"split": scenario.split.record(n), "scenario": scenario.record()}, log=log)


def fit_rule(scenario=None, trace: str | None = None, *, cleaning: str = "default", backfill: str = "none",
             slurm: Mapping[str, int] | None = None, metric: str = "bsld", budget: str = "5m", seed: int = 0,
             window_jobs: int = 1024, windows: int = 16,
             start: str = "f1", train_fraction: float = 0.7, validation_share: float = VALIDATION_SHARE,
             validation_sequences: int = 10, log: Callable[[str], None] = print,
             note: Callable[[str], None] | None = None):
    """`schedrl tuned fit`: a rule fitted on `scenario` (`fit_on_scenario`: its metric, split and validation sequences)
    or, without one, on `trace`'s split as the options give it (`fit_on_trace`; `slurm`: the site's Slurm fields of
    `SimConfig` under backfill slurm). `budget`: the search's wall time as
    written (`90s`, `5m`). ValueError on a bad value, or with neither a scenario nor a trace."""
    from schedrl.duration import parse_duration
    from schedrl.heuristics.tuned import FitSettings

    if scenario is None and trace is None:
        raise ValueError("give --trace (a catalog name or an SWF file) or --scenario")
    settings = FitSettings(metric=metric if scenario is None else scenario.metric,
                           budget_s=parse_duration(budget, "--budget"), seed=seed, window_jobs=window_jobs,
                           windows=windows, start=start)
    if scenario is not None:
        return fit_on_scenario(scenario, settings, log=log, note=note)
    return fit_on_trace(trace, cleaning, backfill, train_fraction, validation_share, validation_sequences, settings,
                        log=log, slurm=slurm)


def rule_judge(rule, trace: str | None = None) -> tuple[TraceJudge, SimConfig]:
    """The judge of the trace split a rule was fitted on (its file's trace, cleaning, metric, backfilling and split;
    `trace`: the same trace at another path), and the semantics it runs under (its recorded `SimConfig`)."""
    r = rule.record
    split = r.get("split", {})
    judge = trace_judge(trace or rule.trace["name"], rule.trace.get("cleaning", "default"), r.get("metric", "bsld"),
                        r.get("backfill", "none"), split.get("train_fraction", 0.7),
                        split.get("validation_share", VALIDATION_SHARE))
    return judge, (SimConfig.from_dict(r["sim_config"]) if "sim_config" in r else judge.sim)
