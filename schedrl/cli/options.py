"""Command-line options shared by `simulate`, `compare`, `train` and `evaluate`."""

from __future__ import annotations

import argparse

from schedrl.sim.config import ALLOCATIONS, BACKFILLS, DISCIPLINES, EVENT_ORDERS, SimConfig

from schedrl.scenarios.workload import CLEANING_PRESETS, WorkloadSpec

PRESETS = ("rlscheduler",)


def apart(parser: argparse.ArgumentParser, option: str, others: tuple[str, ...], why: str) -> None:
    """Declare that `option` cannot be given with any of `others` (options of `parser`): `schedrl.cli.main` refuses
    the pair when the command line is read, in one line saying `why`, so that neither is silently dropped."""
    _together(parser).append(("apart", option, tuple(others), why))


def needs(parser: argparse.ArgumentParser, option: str, needed: str, why: str = "") -> None:
    """Declare that `option` means nothing without `needed` (`export --replace` without `--add`): refused likewise."""
    _together(parser).append(("needs", option, (needed,), why))


def _together(parser: argparse.ArgumentParser) -> list:
    rules = parser.get_default("option_rules")
    if rules is None:
        rules = []
        parser.set_defaults(option_rules=rules)
    return rules


def add_trace_options(parser: argparse.ArgumentParser, default_from: str | None = None) -> None:
    """`--trace` (required unless `default_from` says where its default comes from) and `--cleaning`."""
    trace_help = "catalog name (see `schedrl traces list`) or SWF file; `default` is the embedded trace"
    parser.add_argument("--trace", required=default_from is None, metavar="NAME|PATH",
                        help=trace_help + (f" (default: {default_from})" if default_from else ""))
    parser.add_argument("--cleaning", choices=CLEANING_PRESETS, default=None,
                        help="trace cleaning preset (default: " + (default_from or "default, or rlscheduler with "
                                                                   "--preset rlscheduler") + ")")
    add_augment_options(parser)


def add_augment_options(parser) -> None:
    """`--augment S1..S10` and `--augment-seed`: MRSch's burst-buffer/power workloads from any trace."""
    from schedrl.workload.augment import MRSCH_PRESETS

    parser.add_argument("--augment", choices=list(MRSCH_PRESETS), default=None, metavar="S1..S10",
                        help="add MRSch's burst-buffer (S1-S5) and power (S6-S10) requests, scaled to the machine "
                             "(MRSch Table III; `schedrl traces info --augment` shows the capacities)")
    parser.add_argument("--augment-seed", type=int, default=0, help="seed of the augmentation (default 0)")


def add_sim_options(parser: argparse.ArgumentParser, backfill_many: bool = False,
                    backfill_default: str | None = "none") -> None:
    parser.add_argument("--preset", choices=PRESETS, default=None,
                        help="rlscheduler: SchedGym's semantics (event order, node allocation, no walltime kill, "
                             "its cleaning) to reproduce RLScheduler's published numbers")
    parser.add_argument("--discipline", choices=DISCIPLINES, default=None, help="scheduling discipline (default: pick-and-wait)")
    if backfill_many:
        parser.add_argument("--backfill", default=backfill_default, metavar="LIST",
                            help=f"comma-separated backfilling strategies from {', '.join(BACKFILLS)} "
                                 f"(default: {backfill_default or 'the one trained with'})")
    else:
        parser.add_argument("--backfill", choices=BACKFILLS, default="none", help="backfilling strategy (default: none)")
    parser.add_argument("--event-order", choices=EVENT_ORDERS, default=None, help="same-instant event order (default: standard)")
    parser.add_argument("--allocation", choices=ALLOCATIONS, default=None, help="resource 0 counts procs or whole nodes (default: procs)")
    parser.add_argument("--no-kill", action="store_true", help="let jobs run past their requested time")
    parser.add_argument("--window", type=int, default=0, help="list discipline: visible jobs at the queue front (0: all)")
    add_slurm_options(parser)


def add_slurm_options(parser: argparse.ArgumentParser, policy_top: bool = True) -> None:
    """`--slurm-config` and the `--bf-*` options (`SLURM_OPTIONS`; `--policy-top` only where `policy_top`: the Slurm
    adapter's interface, which training does not take)."""
    slurm = parser.add_argument_group("--backfill slurm (Slurm's backfill scheduler; Slurm's defaults unless given)")
    slurm.add_argument("--slurm-config", default=None, metavar="FILE",
                       help="a saved `scontrol show config` (or slurm.conf's SchedulerParameters line): the site's "
                            "bf_interval, bf_resolution, bf_window, bf_max_job_test; the options below override it")
    slurm.add_argument("--bf-interval", type=int, default=None, metavar="S", help="seconds between passes (30)")
    slurm.add_argument("--bf-resolution", type=int, default=None, metavar="S",
                       help="seconds reservations are rounded down to (60)")
    slurm.add_argument("--bf-window", type=int, default=None, metavar="MIN", help="minutes ahead jobs are reserved (1440)")
    slurm.add_argument("--bf-max-job-test", type=int, default=None, metavar="N", help="jobs tested per pass (500)")
    slurm.add_argument("--node-procs", type=int, default=None, metavar="N",
                       help="procs per node: a reservation holds whole nodes (0: only its own procs; the default)")
    if not policy_top:
        return
    slurm.add_argument("--policy-top", type=int, default=None, metavar="K",
                       help="pick-and-wait: the policy's top K tested first at every pass, a pick that cannot start "
                            "reserved, not held (the Slurm adapter's interface; 0, the default: held)")


def _items(text: str, what: str, flag: str) -> list[str]:
    """Comma-separated items; an empty one (`a,,b`, a trailing comma) is refused, not skipped."""
    from schedrl.cli.main import UsageError

    items = [t.strip() for t in text.split(",")]
    if not any(items):
        raise UsageError(f"empty {what} list{flag}")
    if not all(items):
        raise UsageError(f"{what} list {text!r}{flag} has an empty entry: remove the stray comma")
    return items


def parse_list(text: str, allowed=None, what: str = "value", option: str | None = None) -> list[str]:
    """`a,b,c` -> [a, b, c]; an empty entry, one named twice (a name in any case: `f1,F1`; a path or `kind:spec` as
    written) or (with `allowed`) an unknown one is a UsageError."""
    from schedrl.cli.main import UsageError

    items = _items(text, what, f" in {option}" if option else "")
    first: dict[str, str] = {}
    for item in items:
        key = item if ("/" in item or ":" in item) else item.lower()
        if key in first:
            same = f" ({first[key]} and {item})" if first[key] != item else ""
            raise UsageError(f"{option or 'the list'} names the {what} {item} twice{same}: each is one column or "
                             "row of the result, so give each once")
        first[key] = item
    if allowed is not None:
        bad = [t for t in items if t not in allowed]
        if bad:
            raise UsageError(f"unknown {what} {', '.join(bad)}; choose from {', '.join(allowed)}")
    return items


def sim_config(args: argparse.Namespace, backfill: str | None = None) -> SimConfig:
    """SimConfig from the options; --preset supplies defaults that explicit options override."""
    from schedrl.cli.main import UsageError

    base = SimConfig.rlscheduler() if args.preset == "rlscheduler" else SimConfig()
    backfill = backfill if backfill is not None else args.backfill
    try:
        return SimConfig(
            discipline=args.discipline or base.discipline,
            backfill=backfill,
            event_order=args.event_order or base.event_order,
            kill_at_limit=base.kill_at_limit and not args.no_kill,
            allocation=args.allocation or base.allocation,
            window=args.window,
            **slurm_options(args, str(args.backfill or backfill or "")),
        )
    except ValueError as e:
        raise UsageError(str(e)) from None


SLURM_OPTIONS = ("bf_interval", "bf_resolution", "bf_window", "bf_max_job_test", "node_procs", "policy_top")
"""The `--backfill slurm` options (dests): each sets the `SimConfig` field of its name."""


def slurm_options(args: argparse.Namespace, backfills: str) -> dict:
    """The Slurm backfill fields `--slurm-config` and the `--bf-*` options give (explicit ones over the file's); a
    UsageError where one is given but no backfilling in `backfills` (comma-separated) is `slurm`, or the file is bad."""
    from schedrl.cli.main import UsageError
    from schedrl.sim.slurmconf import read_config_file

    given_ = [d for d in ("slurm_config", *SLURM_OPTIONS) if getattr(args, d, None) is not None]
    if not given_:
        return {}
    if "slurm" not in [b.strip() for b in backfills.split(",")]:
        raise UsageError(f"--{given_[0].replace('_', '-')} applies only to --backfill slurm")
    out = {}
    if getattr(args, "slurm_config", None) is not None:
        try:
            params = read_config_file(args.slurm_config)
            out = {k: v for k, v in SimConfig.slurm(params).to_dict().items() if k in SLURM_OPTIONS[:4]}
        except ValueError as e:
            raise UsageError(f"--slurm-config {e}") from None
    out.update({d: getattr(args, d) for d in SLURM_OPTIONS if getattr(args, d, None) is not None})
    return out


def workload_spec(args: argparse.Namespace) -> WorkloadSpec:
    """The `WorkloadSpec` of the trace options (`--trace`, `--cleaning`, `--preset`, `--augment`)."""
    from schedrl.cli.main import UsageError

    try:
        return WorkloadSpec(args.trace, args.cleaning, getattr(args, "preset", None) or "standard",
                            getattr(args, "augment", None), getattr(args, "augment_seed", 0))
    except ValueError as e:
        raise UsageError(str(e)) from None


def load_workload(args: argparse.Namespace):
    """The workload of the trace options, cleaned and augmented (notes on stderr); one-line errors."""
    import sys

    from schedrl.cli.main import UsageError
    from schedrl.workload.errors import TraceError

    try:
        return workload_spec(args).load(note=lambda line: print(f"schedrl: {line}", file=sys.stderr))
    except TraceError:
        raise
    except ValueError as e:
        raise UsageError(str(e)) from None


def augmented(workload, args: argparse.Namespace):
    """The workload with `--augment` applied (and its report lines said on stderr); unchanged without it."""
    import sys

    from schedrl.cli.main import UsageError
    from schedrl.workload.augment import augment_preset

    preset = getattr(args, "augment", None)
    if not preset:
        return workload
    try:
        out, notes = augment_preset(workload, preset, getattr(args, "augment_seed", 0))
    except ValueError as e:
        raise UsageError(str(e)) from None
    for note in notes:
        print(f"schedrl: {out.name}: {note}", file=sys.stderr)
    return out


def parse_starts(text: str | None) -> list[int] | None:
    from schedrl.cli.main import UsageError

    if not text:
        return None
    items = _items(text, "start", " in --starts")
    try:
        return [int(t) for t in items]
    except ValueError:
        raise UsageError(f"--starts must be comma-separated integers, got {text!r}") from None


# walltime kills above this share of the jobs change every metric enough to say so loudly
KILL_WARN_SHARE = 0.05


def warn_walltime_kills(workloads, config: SimConfig) -> float:
    """Print a `warning:` on stderr when more than KILL_WARN_SHARE of the jobs will be killed at their
    requested time (run time > requested time, with the default walltime kill); returns that share."""
    import sys

    import numpy as np

    if not config.kill_at_limit:
        return 0.0
    killed = sum(int(np.count_nonzero(w.run > w.time_req)) for w in workloads)
    total = sum(len(w) for w in workloads)
    share = killed / total if total else 0.0
    if share > KILL_WARN_SHARE:
        print(f"warning: {100 * share:.1f}% of the jobs ({killed} of {total}) run longer than their requested time and "
              f"are killed at it (walltime kill, on by default): this changes every metric; pass --no-kill to let "
              f"them run to completion", file=sys.stderr)
    return share


# ---------------------------------------------------------------------------- scenarios
SCENARIO_HELP = ("a named scenario (`schedrl scenarios list`) or a scenario YAML file: its trace, cleaning, simulator "
                 "semantics, metric and sequences. Precedence: options given here, then --scenario, then")


def add_scenario_option(parser: argparse.ArgumentParser, then: str = "the defaults") -> None:
    parser.add_argument("--scenario", metavar="NAME|FILE", default=None, help=f"{SCENARIO_HELP} {then}")


def get_scenario(args: argparse.Namespace):
    """The scenario `--scenario` names, or None; a UsageError for an unknown name or a bad file."""
    from schedrl.cli.main import UsageError
    from schedrl.scenarios import get_scenario as find

    if not getattr(args, "scenario", None):
        return None
    try:
        return find(args.scenario)
    except ValueError as e:
        raise UsageError(str(e)) from None


def given(args: argparse.Namespace, dest: str) -> bool:
    """Whether option `dest` was given on the command line (`schedrl.cli.main.explicit_dests`)."""
    return dest in getattr(args, "explicit", ())


SIM_OPTIONS = {"discipline": "discipline", "backfill": "backfill", "event_order": "event_order",
               "allocation": "allocation", "window": "window", **{d: d for d in SLURM_OPTIONS}}
"""Command-line option dest -> the `SimConfig` field it sets (`--no-kill` sets `kill_at_limit` off)."""


def scenario_overrides(args: argparse.Namespace, sequences: dict[str, str] | None = None) -> dict:
    """The explicit options that override parts of a scenario (`Scenario.overridden`'s keywords)."""
    changes = {}
    for dest in ("trace", "cleaning", "augment", "augment_seed", "metric", *SIM_OPTIONS):
        if given(args, dest):
            changes[dest] = getattr(args, dest)
    if given(args, "no_kill"):
        changes["kill_at_limit"] = not args.no_kill
    if given(args, "slurm_config"):
        file_fields = slurm_options(argparse.Namespace(slurm_config=args.slurm_config), "slurm")
        changes.update({k: v for k, v in file_fields.items() if not given(args, k)})
    for dest, key in (sequences or {}).items():
        if given(args, dest):
            changes[key] = getattr(args, dest)
    return changes


def scenario_with_options(args: argparse.Namespace, sequences: dict[str, str] | None = None):
    """`--scenario` with the explicit options applied over it, or None without `--scenario`."""
    from schedrl.cli.main import UsageError

    scenario = get_scenario(args)
    if scenario is None:
        return None
    preset = getattr(args, "preset", None)
    if given(args, "preset") and scenario.workload is not None and preset != scenario.workload.preset:
        # a preset is a set of defaults under the scenario's own: it would change nothing, silently
        raise UsageError(f"--preset {preset} does not apply with --scenario {scenario.name}, whose semantics are its "
                         f"own ({scenario.sim.describe()}): give --no-kill, --allocation, --event-order, --backfill, "
                         "--discipline or --window to change them")
    try:
        out = scenario.overridden(**scenario_overrides(args, sequences))
    except ValueError as e:
        raise UsageError(str(e)) from None
    slurm = [d for d in ("slurm_config", *SLURM_OPTIONS) if given(args, d)]
    sim = getattr(out, "sim", None)
    if slurm and (sim is None or sim.backfill != "slurm"):
        # the scenario's own backfilling would run and the option change nothing, silently
        raise UsageError(f"--{slurm[0].replace('_', '-')} applies only to --backfill slurm; scenario {out.name} "
                         f"backfills {'nothing on the discrete-time cluster' if sim is None else sim.backfill_text}")
    return out

