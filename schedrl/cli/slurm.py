"""`schedrl slurm`: a policy ordering a Slurm partition's queue (`run`), its shadow log's report (`report`), why it
moved a job (`explain`), and the way back to Slurm's own order (`reset`). The adapter is `schedrl.slurm`;
docs/slurm.md is the site's guide."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from schedrl.duration import parse_duration
from schedrl.numbers import finite_float


def _duration(text: str) -> float:
    """`90s`, `20m`, `1.5h`, `2d` (`schedrl.duration.parse_duration`)."""
    try:
        value = parse_duration(text, "duration")
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    if not value <= MAX_DURATION_S:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_DURATION_S / 86400:g}d; got {text}")
    return value


MAX_DURATION_S = 3650 * 86400.0
"""The longest duration any `schedrl slurm` option takes: ten years (past it a number is a typo, or infinity)."""


COUNT_LIMIT = 2 ** 31
"""Every integer option of `schedrl slurm` is below this (what Slurm's own counters hold)."""


def _count(low: int):
    """An integer option of at least `low` (and below `COUNT_LIMIT`), refused at parse time otherwise."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a whole number >= {low}; got {text!r}") from None
        if not low <= value < COUNT_LIMIT:
            raise argparse.ArgumentTypeError(f"must be a whole number >= {low} (and below {COUNT_LIMIT:,}); got {text}")
        return value
    parse.__name__ = "count"
    return parse


def _number(low: float | None = None, *, above: bool = False):
    """A finite number (at least `low`, or above it with `above`): `nan`, `inf` and out-of-range values are refused at
    parse time, identically wherever the option appears."""
    def parse(text: str) -> float:
        value = finite_float(text)  # the finite-only float every option shares (`schedrl.numbers`)
        if low is not None and (value <= low if above else value < low):
            raise argparse.ArgumentTypeError(f"must be {'>' if above else '>='} {low:g}; got {text}")
        return value
    parse.__name__ = "number"
    return parse


def add_parser(subparsers, name: str, help_text: str) -> argparse.ArgumentParser:
    from schedrl.slurm.adapter import AdapterOptions
    from schedrl.slurm.guard import DEFAULT_LIMIT_S
    from schedrl.slurm.watch import METRICS as WATCH_METRICS, MIN_JOBS as WATCH_MIN_JOBS

    WATCH_MARGIN_PCT, WATCH_JOBS = 5.0, 1000

    defaults = AdapterOptions(partition="-")
    p = subparsers.add_parser(name, help=help_text, description=help_text)
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)

    r = actions.add_parser("run", help="order a partition's pending jobs by a policy, cycle after cycle",
                           description="A long-running adapter: each cycle reads squeue/sinfo, ranks the top K pending "
                                       "jobs by the policy and adds bonuses to their site factors so that Slurm "
                                       "starts them in that order.")
    r.add_argument("--policy", required=True, help="sjf, f1, ..., tuned:FILE, checkpoint:PATH or zoo:NAME")
    r.add_argument("--partition", required=True, help="the partition to order (jobs of others are left alone)")
    r.add_argument("--top", type=_count(1), default=defaults.top, help=f"K: jobs ranked per cycle (default {defaults.top})")
    r.add_argument("--interval", type=_duration, default=defaults.interval_s,
                   help=f"time between cycles (default {defaults.interval_s:g}s)")
    mode = r.add_mutually_exclusive_group()
    mode.add_argument("--shadow", action="store_true", help="change nothing; log snapshots, orders and starts (--log)")
    mode.add_argument("--dry-run", action="store_true", help="change nothing; print the changes a live cycle would make")
    r.add_argument("--log", type=Path, help="cycle log (JSON lines; .gz compressed) for `schedrl slurm report` and, "
                                             "live, the watchdog (needed there unless --no-watch)")
    r.add_argument("--cycles", type=_count(1), help="stop after this many cycles (default: run until stopped)")
    r.add_argument("--state-dir", type=Path, default=defaults.state_dir,
                   help="lock, lease and audit log (default ~/.local/state/schedrl/slurm)")
    r.add_argument("--starvation-limit", type=_duration, default=DEFAULT_LIMIT_S,
                   help="a job waiting longer goes first whatever the policy says (default 2d)")
    r.add_argument("--policy-timeout", type=_duration, default=defaults.policy_timeout_s,
                   help=f"the policy's budget per cycle; over it the order stays (default {defaults.policy_timeout_s:g}s)")
    r.add_argument("--max-changes-per-minute", type=_count(1), default=defaults.max_changes_per_minute,
                   help=f"nice changes per minute at most (default {defaults.max_changes_per_minute})")
    r.add_argument("--lease", type=_duration, default=defaults.lease_s,
                   help=f"how long an order outlives the last cycle (default {defaults.lease_s:g}s)")
    r.add_argument("--size-tolerance", type=_number(1.0), default=defaults.size_tolerance,
                   help="refuse a policy trained for a machine this many times smaller or larger (>= 1; default 2)")
    r.add_argument("--trained-cpus", type=_count(1), help="the policy's training machine, where its trace is not here")
    r.add_argument("--handle", choices=("site-factor", "nice"), default=defaults.handle,
                   help="the job field the bonuses go to: SiteFactor (default; users' nice values are never touched) "
                        "or Nice (a fallback where SiteFactor cannot be set; docs/slurm.md)")
    r.add_argument("--bonus-scale", type=_number(0.0, above=True), default=defaults.bonus_scale,
                   help="bonuses ceil(scale x (sum of the PriorityWeight* + 2)) apart per rank (default 1: ranked "
                        "jobs in the policy's order whatever their age or size), within --max-bonus, which shrinks "
                        "the step where it leaves less room; never across a QOS tier (docs/slurm.md)")
    r.add_argument("--band-step", type=_count(1), help="bonuses this far apart (overrides --bonus-scale)")
    r.add_argument("--max-bonus", type=_count(1),
                   help="the largest bonus, in priority units (default: the sum of PriorityWeightAge, JobSize, "
                        "Partition and TRES); a job passes another only where their priorities differ by less, and "
                        "never one of a higher QOS or a fair-share factor this much higher (docs/slurm.md)")
    r.add_argument("--watch-margin", type=_number(0.0), default=WATCH_MARGIN_PCT,
                   help="live: return to shadow on its own once the policy is worse than the model of Slurm's own "
                        f"order by more than this %% with 95%% confidence (default +{WATCH_MARGIN_PCT:g})")
    r.add_argument("--watch-jobs", type=_count(WATCH_MIN_JOBS), default=WATCH_JOBS,
                   help=f"the watchdog judges the last this many jobs (default {WATCH_JOBS:,}; at least "
                        f"{WATCH_MIN_JOBS})")
    r.add_argument("--watch-metric", default="bsld", choices=WATCH_METRICS,
                   help="the site's metric the watchdog judges on (default bsld)")
    r.add_argument("--no-watch", action="store_true", help="live without the watchdog (no --log needed)")
    r.add_argument("--slurmctld-log", type=Path,
                   help="slurmctld's log (SlurmctldDebug=info): the watchdog replays on its times")
    r.add_argument("--cluster", help="name for the lock and state files (default: slurm.conf's ClusterName)")
    r.add_argument("--explain-with", metavar="TREE",
                   help="a distilled tree beside an inspector: its path explains each decision (`slurm explain`)")
    r.add_argument("--force", action="store_true",
                   help="go live without a shadow report that passes the gate (docs/slurm.md, the go-live gate)")
    _gate_options(r)
    r.set_defaults(run=run_adapter)

    rep = actions.add_parser("report", help="agreement with Slurm and the estimated gain of a cycle log's policy",
                             description="How often the policy's order agreed with what Slurm started, and the "
                                         "logged arrivals replayed through a model of Slurm's backfill scheduler "
                                         "(its passes, its plan of nodes on the bf_resolution grid) under the "
                                         "policy's order and under Slurm's own: the difference on the site's metric.")
    rep.add_argument("log", type=Path, help="a cycle log of `schedrl slurm run --log`")
    rep.add_argument("--policy", help="the policy to replay (default: the log's)")
    rep.add_argument("--metric", default="bsld", choices=("bsld", "wait", "slowdown", "turnaround"),
                     help="the site's metric (default bsld)")
    rep.add_argument("--windows", type=_count(2), default=10, help="windows of jobs the interval is over (default 10)")
    rep.add_argument("--slurmctld-log", type=Path,
                     help="slurmctld's log (SlurmctldDebug=info; DebugFlags=Backfill adds the passes): count "
                          "main-scheduler and backfilled starts apart, and replay on its millisecond times")
    rep.add_argument("--json", action="store_true", help="the report as JSON")
    rep.add_argument("--state-dir", type=Path, default=defaults.state_dir,
                     help="where a shadow log's report is kept for the go-live gate of `slurm run` "
                          "(default ~/.local/state/schedrl/slurm)")
    _gate_options(rep)
    rep.set_defaults(run=run_report)

    rp = actions.add_parser("replay", help="submit a trace's jobs to a Slurm in compressed time (a rehearsal)",
                            description="Submits a window of a trace's jobs to a Slurm partition in compressed time: "
                                        "each job at its submit time x SCALE, a sleep of its run time x SCALE, with "
                                        "its trace request as its time limit (whole minutes, uncompressed); waits "
                                        "until they have ended and says what became of them. For a test cluster: "
                                        "rehearse the adapter on it before shadowing production.")
    rp.add_argument("trace", help="an SWF file or a catalog name (`schedrl traces list`)")
    rp.add_argument("--scale", type=_number(0.0, above=True), required=True,
                    help="replay seconds per trace second (4e-4: a trace day in 35 s)")
    rp.add_argument("--partition", required=True, help="the partition the jobs go to")
    rp.add_argument("--first", type=_count(0), default=0, help="the index of the first job of the window (default 0)")
    rp.add_argument("--jobs", type=_count(1), default=100, help="how many jobs (default 100)")
    rp.add_argument("--sbatch-option", action="append", default=[], metavar="OPTION",
                    help="one more sbatch option for every job (repeatable: --sbatch-option=--account=test)")
    rp.add_argument("--timeout", type=_duration, default=3600.0,
                    help="give up waiting for the jobs to end after this long (default 1h)")
    rp.add_argument("--no-wait", action="store_true", help="return once every job is submitted")
    rp.add_argument("--json", action="store_true", help="the outcome (and trace id -> Slurm id) as JSON")
    rp.set_defaults(run=run_replay)

    e = actions.add_parser("explain", help="why the live adapter moved a job: the policy's decision path, the site's "
                                           "overrides",
                           description="Prints what the audit log of a state directory records for one job, oldest "
                                       "first: each change of its site factor (or nice value) and each cycle's "
                                       "explanation of its place: the tests of the tree that decided it, with their "
                                       "values, and where the site's guard or bounds overrode the policy.")
    e.add_argument("job", type=_count(1), metavar="JOBID", help="the Slurm job id")
    e.add_argument("--state-dir", type=Path, default=defaults.state_dir, help="the adapter's state directory")
    e.set_defaults(run=run_explain)

    z = actions.add_parser("reset", help="give every pending job the adapter changed its own site factor back",
                           description="Returns every pending job to Slurm's own ordering: the site factors (or nice "
                                       "values) any adapter set are put back to the jobs' own, from the marks in the "
                                       "jobs' AdminComment (whatever the state directory), the state file and the "
                                       "audit log. Refused while an adapter holds the cluster's lock.")
    z.add_argument("--state-dir", type=Path, default=defaults.state_dir, help="the adapter's state directory")
    z.add_argument("--cluster", help="default: slurm.conf's ClusterName")
    z.add_argument("--expired", action="store_true",
                   help="only if the adapter's lease has expired (for cron or a systemd timer)")
    z.set_defaults(run=run_reset)
    return p


def _gate_options(p: argparse.ArgumentParser) -> None:
    from schedrl.slurm.gate import MARGIN_PCT, MIN_JOBS

    p.add_argument("--gate-jobs", type=_count(1), default=MIN_JOBS,
                   help=f"jobs a shadow report must cover to let live mode start (default {MIN_JOBS:,})")
    p.add_argument("--gate-margin", type=_number(), default=MARGIN_PCT,
                   help=f"the largest upper end of the report's 95%% interval, in %% worse than Slurm's own order "
                        f"(default +{MARGIN_PCT:g}): non-inferiority")


def _claim_outputs(args, command: str) -> None:
    """The state directory (and `run`'s cycle log) are continued, never replaced (`schedrl.slurm.adapter.claim_outputs`)."""
    from schedrl.cli.main import UsageError
    from schedrl.outputs import OutputError
    from schedrl.slurm.adapter import claim_outputs

    try:
        claim_outputs(command, args.state_dir, getattr(args, "log", None) if command == "slurm run" else None,
                      getattr(args, "policy", None))
    except OutputError as e:
        raise UsageError(str(e)) from None


def run_adapter(args) -> int:
    from schedrl.cli.main import UsageError
    from schedrl.eval.policies import resolve_policy
    from schedrl.slurm.adapter import Adapter, AdapterError, AdapterOptions, serve
    from schedrl.slurm.gate import GateError, go_live
    from schedrl.slurm.watch import EXIT_ROLLED_BACK

    mode = "shadow" if args.shadow else "dry-run" if args.dry_run else "live"
    watch = mode == "live" and not args.no_watch
    _refuse_unused(args, mode, watch)
    try:
        options = AdapterOptions(partition=args.partition, top=args.top, interval_s=args.interval, mode=mode,
                                 starvation_limit_s=args.starvation_limit, policy_timeout_s=args.policy_timeout,
                                 max_changes_per_minute=args.max_changes_per_minute, lease_s=args.lease,
                                 size_tolerance=args.size_tolerance, trained_cpus=args.trained_cpus,
                                 band_step=args.band_step, state_dir=args.state_dir, log=args.log,
                                 cluster=args.cluster, handle=args.handle, bonus_scale=args.bonus_scale,
                                 max_bonus=args.max_bonus, watch_margin_pct=args.watch_margin if watch else None,
                                 watch_jobs=args.watch_jobs, watch_metric=args.watch_metric,
                                 slurmctld_log=args.slurmctld_log)
        policy = resolve_policy(args.policy)
        beside = _explain_with(policy, args) if args.explain_with else None
    except ValueError as e:
        raise UsageError(str(e)) from None
    _claim_outputs(args, "slurm run")
    say = _printer()
    adapter = Adapter(policy, options, say=say, policy_name=args.policy, explain_with=beside)
    try:
        if mode == "live":  # the go-live gate: a shadow report of this policy that passes, unless --force
            # said once the adapter has started: a refusal after the gate is the only line
            adapter.gate_line = go_live(args.state_dir, args.cluster, args.partition, args.policy, args.gate_jobs,
                                        args.gate_margin, args.force)
        rolled_back = serve(adapter, args.cycles)
    except (GateError, AdapterError) as e:
        adapter.worker.close()
        raise UsageError(str(e)) from None
    if rolled_back:
        print(f"schedrl slurm: the watchdog rolled {args.policy} back to shadow: {rolled_back} (exit status "
              f"{EXIT_ROLLED_BACK})", file=sys.stderr)
        return EXIT_ROLLED_BACK
    return 0


def _explain_with(policy, args):
    """The policy of --explain-with, where it can explain the decisions of `--policy` (ValueError otherwise)."""
    from schedrl.agents.base import Explaining, Inspecting
    from schedrl.eval.policies import resolve_policy

    if args.shadow:
        raise ValueError("--explain-with explains the changes a live cycle (or a dry run) makes; --shadow makes none")
    if not isinstance(policy, Inspecting):
        raise ValueError(f"--explain-with: {args.policy} does not inspect a base rule's proposals (an inspector "
                         "does), so there is no decision of its to explain")
    beside = resolve_policy(args.explain_with)
    if not isinstance(beside, Explaining):
        raise ValueError(f"--explain-with {args.explain_with}: not a policy that explains its decisions (a "
                         "distilled tree, `schedrl distill`, does)")
    ours, theirs = getattr(policy, "base_name", None), getattr(beside, "base_name", None)
    if ours != theirs:  # a path through another base's proposals would explain decisions never made
        raise ValueError(f"--explain-with {args.explain_with} inspects the proposals of base rule {theirs}, "
                         f"{args.policy} those of {ours}: distil the tree from this policy (`schedrl distill`)")
    return beside


def run_explain(args) -> int:
    from schedrl.cli.main import UsageError
    from schedrl.slurm.explain import ExplainError, job_history

    try:
        lines, found = job_history(args.state_dir, args.job)
    except ExplainError as e:
        raise UsageError(str(e)) from None
    print(f"job {args.job}: {found} record(s) of the adapter in {args.state_dir}, oldest first")
    for line in lines:
        print(line)
    return 0


WATCH_OPTIONS = {"watch_margin": "--watch-margin", "watch_jobs": "--watch-jobs", "watch_metric": "--watch-metric",
                 "slurmctld_log": "--slurmctld-log"}
BAND_OPTIONS = {"max_bonus": "--max-bonus", "band_step": "--band-step", "bonus_scale": "--bonus-scale",
                "handle": "--handle", "max_changes_per_minute": "--max-changes-per-minute"}


def _refuse_unused(args, mode: str, watch: bool) -> None:
    """An option the mode would ignore is an error, not dropped: the watchdog's outside live mode (or with
    --no-watch), the bonuses' in shadow; and a --slurmctld-log that is not a readable regular file."""
    from schedrl.cli.main import UsageError
    from schedrl.slurm.cyclelog import CycleLogError, MAX_LOG_BYTES, regular_file

    given = getattr(args, "explicit", frozenset())
    if not watch:
        unused = [flag for dest, flag in WATCH_OPTIONS.items() if dest in given]
        if unused:
            why = "--no-watch" if mode == "live" else f"--{mode}"
            raise UsageError(f"{', '.join(unused)} {'is an option' if len(unused) == 1 else 'are options'} of the "
                             f"live watchdog, which {why} leaves out: drop {'it' if len(unused) == 1 else 'them'}")
    if mode == "shadow":
        unused = [flag for dest, flag in BAND_OPTIONS.items() if dest in given]
        if unused:
            raise UsageError(f"{', '.join(unused)} {'shapes' if len(unused) == 1 else 'shape'} the bonuses, which "
                             f"--shadow never sets: drop {'it' if len(unused) == 1 else 'them'}, or use --dry-run to "
                             "see the changes")
    if "no_watch" in given and mode != "live":
        raise UsageError(f"--no-watch is for live mode; --{mode} has no watchdog to turn off")
    if args.slurmctld_log is not None:
        try:
            regular_file(args.slurmctld_log, "slurmctld log", MAX_LOG_BYTES)
        except CycleLogError as e:
            raise UsageError(str(e)) from None


def _slow_progress(after_s: float = 5.0):
    """A progress printer (stderr) that stays quiet for the first `after_s` seconds: a long log's replay says how
    far it is, a short one prints nothing."""
    import time

    began = time.monotonic()

    def say(line: str) -> None:
        if time.monotonic() - began >= after_s:
            print(f"schedrl slurm report: {line}", file=sys.stderr, flush=True)
    return say


def run_report(args) -> int:
    from schedrl.cli.main import UsageError
    from schedrl.slurm.gate import gated_report
    from schedrl.slurm.report import ReportError, report

    _claim_outputs(args, "slurm report")
    try:
        result = report(args.log, policy=args.policy, metric=args.metric, windows=args.windows,
                        slurmctld_log=args.slurmctld_log, progress=_slow_progress())
    except ReportError as e:
        raise UsageError(str(e)) from None
    except OSError as e:
        raise UsageError(f"cannot read {e.filename or args.log}: {e.strerror or e}") from None
    print(gated_report(result, args.gate_jobs, args.gate_margin, args.state_dir, args.json))
    return 0


def run_replay(args) -> int:
    from schedrl.cli.main import UsageError
    from schedrl.slurm.replay import ReplayError, outcome, replay_trace

    say = _printer()
    try:
        replay, out = replay_trace(args.trace, args.partition, args.scale, args.first, args.jobs, args.sbatch_option,
                                   args.timeout, not args.no_wait, say)
    except ReplayError as e:
        raise UsageError(str(e)) from None
    for line in outcome(replay, out, args.json):
        say(line)
    return 0 if not out["errors"] and not out["lost"] else 1


def run_reset(args) -> int:
    from schedrl.cli.main import UsageError
    from schedrl.slurm.reset import ResetError, reset

    _claim_outputs(args, "slurm reset")
    try:
        reset(args.state_dir, args.cluster, args.expired, _printer())
    except ResetError as e:
        raise UsageError(str(e)) from None
    return 0


def _printer():
    def say(line: str) -> None:
        print(line, flush=True)

    return say


__all__ = ["add_parser"]
