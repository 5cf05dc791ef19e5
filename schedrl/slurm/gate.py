"""The go-live gate: `schedrl slurm run` without `--shadow` refuses unless the partition's latest shadow report
says the policy is probably not worse than Slurm's own order (non-inferiority), unless `--force`.

`schedrl slurm report` keeps the report of a shadow log in the state directory (`<cluster>.<partition>.shadow-
report.json`, the latest replacing the earlier). The gate passes when that report is of the same policy (its
`--policy` as given to `run`), covers at least `min_jobs` jobs (`--gate-jobs`, 1,000 by default), and the upper end
of its 95% interval for the site's metric (policy minus the model of Slurm's order, in % of the latter) is at most
`margin_pct` (`--gate-margin`, +5%): the policy may be no better, but is probably not more than 5% worse. A report
whose interval crossed zero passes if its upper end is within the margin; one that needs more days says how many.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

MIN_JOBS = 1000
"""Jobs a shadow report must cover (the replayed jobs that started and ended)."""
MARGIN_PCT = 5.0
"""The largest upper end of the interval (policy worse by at most this %, at 95%)."""


class GateError(ValueError):
    """Live mode refused; the message says what the shadow report lacks."""


def path_for(state_dir: str | Path, cluster: str, partition: str) -> Path:
    return Path(state_dir) / f"{cluster}.{partition}.shadow-report.json"


def save(report, state_dir: str | Path) -> Path | None:
    """Keep a shadow log's report for the gate (atomically); None for other logs (live, dry run)."""
    h = report.header
    if h.get("mode") != "shadow":
        return None
    path = path_for(state_dir, h.get("cluster", "cluster"), h.get("partition", ""))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    tmp.write_text(json.dumps({"saved": time.time(), **report.to_dict()}, indent=1))
    os.replace(tmp, path)
    return path


def verdict(estimate: dict, min_jobs: int = MIN_JOBS, margin_pct: float = MARGIN_PCT) -> str | None:
    """Why the estimate does not pass (one phrase), or None if it does."""
    ci = estimate.get("ci95_pct")
    jobs = int(estimate.get("jobs", 0))
    if jobs < min_jobs:
        return f"it covers {jobs:,} jobs, fewer than the {min_jobs:,} the gate asks (--gate-jobs)"
    if not ci:
        return "it has no interval"
    if ci[1] > margin_pct:
        return (f"the upper end of its 95% interval is {ci[1]:+.1f}% ({estimate.get('metric')}), above the +"
                f"{margin_pct:g}% the gate allows (--gate-margin): the policy may be worse than Slurm's own order")
    return None


def describe(report, min_jobs: int = MIN_JOBS, margin_pct: float = MARGIN_PCT) -> str:
    """The report's line about the gate."""
    why = verdict(_estimate(report), min_jobs, margin_pct)
    if why is None:
        return (f"go-live gate (upper end <= +{margin_pct:g}%, >= {min_jobs:,} jobs): passed; `schedrl slurm run` "
                "without --shadow accepts this policy")
    return f"go-live gate (upper end <= +{margin_pct:g}%, >= {min_jobs:,} jobs): not passed: {why}"


def _estimate(report) -> dict:
    from dataclasses import asdict

    return asdict(report.estimate)


def check(state_dir: str | Path, cluster: str, partition: str, policy: str, min_jobs: int = MIN_JOBS,
          margin_pct: float = MARGIN_PCT) -> str:
    """GateError unless the latest shadow report passes; returns the line saying which report passed."""
    path = path_for(state_dir, cluster, partition)
    advice = (f"shadow first (schedrl slurm run --shadow --policy {policy} --partition {partition} --log LOG), then "
              f"`schedrl slurm report LOG --state-dir {state_dir}`, or give --force")
    if not path.exists():
        raise GateError(f"live mode needs a shadow report of {policy} on {cluster}/{partition}: none in {state_dir}; "
                        + advice)
    try:
        saved = json.loads(path.read_text())
        estimate, replayed = saved["estimate"], saved.get("policy", "")
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise GateError(f"{path}: unreadable shadow report ({type(e).__name__}: {e}); {advice}") from None
    if replayed != policy:
        raise GateError(f"the latest shadow report on {cluster}/{partition} ({path}) is of {replayed!r}, not "
                        f"{policy!r}; {advice}")
    why = verdict(estimate, min_jobs, margin_pct)
    if why is not None:
        raise GateError(f"live mode refused by the shadow report {path}: {why}; {advice}")
    ci = estimate["ci95_pct"]
    return (f"go-live gate passed: {path} ({estimate['jobs']:,} jobs, {estimate['metric']} "
            f"{estimate['difference_pct']:+.1f}%, 95% interval [{ci[0]:+.1f}%, {ci[1]:+.1f}%], upper end within "
            f"+{margin_pct:g}%)")


def go_live(state_dir: str | Path, cluster: str | None, partition: str, policy: str, min_jobs: int = MIN_JOBS,
            margin_pct: float = MARGIN_PCT, force: bool = False, client=None) -> str:
    """Live mode's gate (`schedrl slurm run` without --shadow): the line saying which shadow report passed (`check`;
    `cluster` None: slurm.conf's ClusterName), or with `force` the line saying what the gate would refuse; GateError
    otherwise, and on a bad `min_jobs` or `margin_pct`."""
    from schedrl.slurm.client import SlurmClient, SlurmError

    if min_jobs < 1 or not margin_pct == margin_pct:
        raise GateError(f"--gate-jobs must be >= 1 and --gate-margin a number; got {min_jobs}, {margin_pct}")
    try:
        cluster = cluster or (client or SlurmClient()).config().get("ClusterName", "cluster")
        return check(state_dir, cluster, partition, policy, min_jobs, margin_pct)
    except (GateError, SlurmError) as e:
        if force:
            return f"going live with --force; the go-live gate would refuse: {e}"
        raise GateError(str(e)) from None


def gated_report(result, min_jobs: int, margin_pct: float, state_dir: str | Path, as_json: bool = False) -> str:
    """What `schedrl slurm report` prints of `result` (a `schedrl.slurm.report` report): its lines with the gate's
    line for `min_jobs` and `margin_pct` (`describe`), or the JSON with that line; the report is kept in `state_dir`
    for the gate (`save`), and the text says where."""
    gate_line = describe(result, min_jobs, margin_pct)
    lines = [gate_line if line.startswith("go-live gate") else line for line in result.lines()]
    saved = save(result, state_dir)
    if as_json:
        return json.dumps({**result.to_dict(), "gate": gate_line, "saved": str(saved) if saved else None}, indent=2)
    if saved is not None:
        lines.append(f"kept for the go-live gate of `schedrl slurm run`: {saved}")
    return "\n".join(lines)


__all__ = ["GateError", "MARGIN_PCT", "MIN_JOBS", "check", "describe", "gated_report", "go_live", "path_for", "save",
           "verdict"]
