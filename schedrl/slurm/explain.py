"""Why the adapter moved a job: one `explain` record in the audit log per cycle that decided something new, and
`schedrl slurm explain JOBID` to read them.

An entry per job whose place the cycle changed: a job ranked at another place than Slurm's own order gives it (its
priority without the adapter's bonus), a job the policy deferred (an inspecting policy rejected its base rule's
proposal: `order.rank`), and a job the site's bounds or guard placed otherwise than the policy wanted. An entry holds

- `job`, `rank` (its place in the order applied, 1 first; absent: not in the top K) and `slurm` (its place in
  Slurm's own order);
- `by`: what placed it: `tree`, `network` or `policy` (an inspecting policy's decision; `mask` or `guard`: the
  policy's own rules allowed no rejection; `limit`: the cycle's deferrals were spent), `pick` (a policy that does not
  inspect: its pick), `guard` (the site's starvation guard); `decide` (`accept` or `reject`) for an inspection;
- `path`: the tree's tests with this cycle's values, as `schedrl zoo show` prints them, the leaf last; with a tree
  beside a network (`--explain-with`; `by`: `tree-beside`), the tree's path, `decide` the network's decision and
  `agree` whether the tree decided the same;
- `overrides`: a line each where the site overrode the policy: the starvation guard put the job first; the bounded
  handle (`mechanism.protect`, `--max-bonus`) kept it behind jobs it may not pass, or put it ahead of ranked jobs;
  the rate limit held its change; scontrol refused it.

Compact by design: a job's entry is written when it first has one and again only when what decided it changes (the
decision, the tests passed, the overrides; not the values, which move every cycle); at most `MAX_JOBS` entries a
record (`left_out` counts the rest) and `MAX_PATH` lines a path. Live mode only, as every audit record; a dry run
prints the entries it would write. A cycle whose policy failed or ran out of time keeps the last order and writes
nothing here (its cycle line says why).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

MAX_JOBS = 32
"""Entries in one record at most (the default --top); the record's `left_out` counts those left out."""
MAX_PATH = 14
"""Lines of a path at most (a depth-12 tree's tests and its leaf), each cut at `MAX_LINE` characters."""
MAX_LINE = 240


class ExplainError(ValueError):
    """Nothing to explain, or an audit log that cannot be read: one line, naming the file (and line)."""


@dataclass
class Placement:
    """What the adapter did this cycle, for the explanations: the orders and the site's interventions."""

    slurm_order: Sequence[int]
    """The pending jobs by priority without the adapter's bonus (Slurm's own order)."""
    order: Sequence[int]
    """The order applied (after the bounds), top K."""
    wanted: Sequence[int]
    """The order the policy (and guard) asked for."""
    guard: dict[int, str] = field(default_factory=dict)
    """Job -> the guard's line."""
    site: dict[int, list[tuple[str, str]]] = field(default_factory=dict)
    """Job -> (kind, line) of the bounds, the rate limit and scontrol."""


class Explainer:
    """The adapter's explanations: `entries` for a cycle, remembering what it last wrote for each job."""

    def __init__(self, policy_name: str):
        self.policy_name = policy_name
        self.last: dict[int, tuple] = {}

    def entries(self, placement: Placement, decisions: Iterable[dict]) -> tuple[list[dict], int]:
        """This cycle's new entries (at most `MAX_JOBS`) and how many more there were."""
        decided = {int(d["job"]): d for d in decisions}
        slurm = {job: i + 1 for i, job in enumerate(placement.slurm_order)}
        rank = {job: i + 1 for i, job in enumerate(placement.order)}
        jobs = list(placement.order) + [j for j in placement.wanted if j not in rank]
        jobs += [j for j, d in decided.items() if d.get("decide") == "reject" and j not in jobs]
        out = []
        for job in jobs:
            d = decided.get(job)
            site = placement.site.get(job, [])
            moved = rank.get(job) != slurm.get(job)
            deferred = d is not None and d.get("decide") == "reject"
            if not (moved or deferred or site or job in placement.guard):
                continue
            entry: dict = {"job": job}
            if job in rank:
                entry["rank"] = rank[job]
            if job in slurm:
                entry["slurm"] = slurm[job]
            if job in placement.guard:
                entry["by"] = "guard"
                site = [("guard", placement.guard[job])] + site
            elif d is not None:
                entry.update(by=d.get("by", "policy"), decide=d.get("decide"))
                path = [str(line)[:MAX_LINE] for line in d.get("path", ())]
                if path:
                    entry["path"] = path[:MAX_PATH - 1] + path[-1:] if len(path) > MAX_PATH else path
                if "agree" in d:
                    entry["agree"] = bool(d["agree"])
            else:
                entry["by"] = "pick"
            if site:
                entry["overrides"] = [line[:MAX_LINE] for _, line in site]
            key = (entry.get("by"), entry.get("decide"), tuple(_without_values(entry.get("path", ()))),
                   entry.get("agree"), tuple(kind for kind, _ in site), "rank" in entry)
            if self.last.get(job) == key:
                continue
            self.last[job] = key
            out.append(entry)
        pending = set(placement.slurm_order)
        for job in [j for j in self.last if j not in pending]:
            del self.last[job]
        return out[:MAX_JOBS], max(len(out) - MAX_JOBS, 0)


def placement(snap, slurm_order: Sequence[int], wanted: Sequence[int], order: Sequence[int], base: dict[int, float],
              value_now: dict[int, int], own: dict[int, int], changes: Sequence, guarded: Iterable[int], granted: int,
              refused: dict[int, str], sign: int, ceiling: int, starvation_limit_s: float) -> Placement:
    """A cycle's `Placement` from what the adapter computed (`Adapter._enforce`): the priorities the granted changes
    give (`base` + the bonus), the bounds' lines (`site_lines`), the rate limit's and scontrol's, the guard's."""
    from schedrl.duration import format_duration

    applied = {c.job: c.new for c in changes[:granted] if c.job not in refused}
    own_after = {**{c.job: c.old if c.own is None else c.own for c in changes}, **own}
    final = {job: base[job] + sign * (applied.get(job, value_now[job]) - own_after.get(job, value_now[job]))
             for job in base}
    site = site_lines(slurm_order, wanted, order, base, final, ceiling)
    for c in changes[granted:]:
        site.setdefault(c.job, []).append(("rate", "the rate limit (--max-changes-per-minute) held its change for a "
                                                   "later cycle"))
    for job, why in refused.items():
        site.setdefault(job, []).append(("refused", f"scontrol refused its change: {why}"))
    submit = {j.job_id: j.submit for j in snap.pending}
    limit = format_duration(starvation_limit_s)
    guard = {job: f"it has waited {format_duration(snap.time - submit[job])}, past the starvation limit of {limit}: "
                  "first, whatever the policy says" for job in guarded if job in submit}
    return Placement(slurm_order, order, wanted, guard, site)


def site_lines(slurm_order: Sequence[int], wanted: Sequence[int], order: Sequence[int], base: dict[int, float],
               final: dict[int, float], ceiling: int) -> dict[int, list[tuple[str, str]]]:
    """Job -> (kind, line) where the bounded handle placed a job otherwise than the policy wanted (`wanted`, before
    `mechanism.protect`; `order`, after it): put ahead of ranked jobs, kept behind jobs it may not pass, left out of
    the top K, or, by the priorities the bonuses give (`final`, against `base`: without them), still behind jobs the
    policy put after it (the bonus capped at `ceiling`, --max-bonus)."""
    out: dict[int, list[tuple[str, str]]] = {}
    wanted_rank = {job: i for i, job in enumerate(wanted)}
    rank = {job: i for i, job in enumerate(order)}
    lifted = [job for i, job in enumerate(order) if wanted_rank.get(job, len(wanted)) > i]
    tiers = f"a higher QOS, or a fair share {ceiling:,} or more higher"
    for job in lifted:
        asked = f"the policy's rank {wanted_rank[job] + 1}" if job in wanted_rank else "not ranked by the policy"
        out.setdefault(job, []).append(("lifted", f"the bounded handle put it at rank {rank[job] + 1} ({asked}): "
                                                  f"jobs the policy ranked may not pass it ({tiers})"))
    for job in wanted:
        if job in lifted:
            continue
        if job not in rank:
            out.setdefault(job, []).append(("cut", f"the bounded handle left it out of the top {len(order)} (the "
                                                   f"policy's rank {wanted_rank[job] + 1}): jobs it may not pass "
                                                   f"({tiers}) took the places"))
        elif rank[job] > wanted_rank[job]:
            n = sum(1 for other in order[:rank[job]] if other in lifted)
            out.setdefault(job, []).append(("kept", f"the bounded handle kept it behind {n} job(s) it may not pass "
                                                    f"({tiers}): rank {rank[job] + 1} instead of "
                                                    f"{wanted_rank[job] + 1}"))
    ranked = set(order)
    unranked = [job for job in slurm_order if job not in ranked and job in final]
    for i, job in enumerate(order):
        if job not in final:
            continue
        ahead = [other for other in list(order[i + 1:]) + unranked if other in final and final[other] > final[job]]
        if ahead:
            lead = max(ahead, key=lambda other: base.get(other, 0.0) - base.get(job, 0.0))
            out.setdefault(job, []).append(("capped", f"{len(ahead)} job(s) the policy put behind it keep a higher "
                                                      f"priority (job {lead}'s is {base[lead] - base[job]:,.0f} higher "
                                                      f"without bonuses): a bonus is at most {ceiling:,} "
                                                      "(--max-bonus)"))
    return out


def _without_values(path: Iterable[str]) -> Iterable[str]:
    for line in path:
        yield line.split(" (here ", 1)[0]


def entry_lines(entry: dict, policy: str) -> list[str]:
    """One entry for people: what placed the job, the path, the overrides."""
    rank, slurm = entry.get("rank"), entry.get("slurm")
    where = (f"rank {rank}" if rank else "not in the top K") + (f" (Slurm's own order: {slurm})" if slurm else "")
    by, decide = entry.get("by"), entry.get("decide")
    if by == "guard":
        what = "put first by the site's starvation guard"
    elif by == "pick":
        what = f"ranked by {policy}'s pick"
    else:
        said = {"tree": "by its tree", "network": "by its network", "guard": "its starvation guard allows no rejection",
                "mask": "its mask allows no rejection here", "limit": "the cycle's deferrals were spent",
                "tree-beside": "by its network; the path is the tree's beside it"}.get(str(by), str(by))
        what = (f"deferred: {policy} rejected the base rule's proposal" if decide == "reject" else
                f"{policy} accepted the base rule's proposal") + f" ({said})"
    lines = [f"{where}: {what}"]
    lines += [f"    {line}" for line in entry.get("path", ())]
    if "agree" in entry:
        lines.append("    the tree and the network agree" if entry["agree"] else
                     f"    the network disagrees with the tree, and decides: {decide}")
    lines += [f"    site: {line}" for line in entry.get("overrides", ())]
    return lines


def audit_logs(state_dir: Path) -> list[Path]:
    """The audit logs of a state directory; ExplainError for a directory that is missing, unreadable or holds none."""
    state_dir = Path(state_dir)
    if not state_dir.exists():
        raise ExplainError(f"--state-dir {state_dir}: no such directory")
    if not state_dir.is_dir():
        raise ExplainError(f"--state-dir {state_dir}: not a directory")
    try:
        logs = sorted(state_dir.glob("*.audit.jsonl"))
    except OSError as e:
        raise ExplainError(f"--state-dir {state_dir}: cannot read it ({e.strerror or e})") from None
    if not logs:
        raise ExplainError(f"--state-dir {state_dir} holds no audit log (*.audit.jsonl): a live adapter writes one "
                           "(shadow and dry runs write nothing there)")
    return logs


def job_history(state_dir: Path, job: int) -> tuple[list[str], int]:
    """The lines `schedrl slurm explain` prints for `job`, oldest first, and the number of records found; ExplainError
    for a state directory without an audit log, an unreadable or corrupted one (file and line), a job never recorded."""
    from schedrl.slurm.audit import AuditError, AuditLog

    lines: list[str] = []
    found = 0
    for path in audit_logs(state_dir):
        try:
            records = list(AuditLog(path, "", "").numbered())
        except AuditError as e:
            raise ExplainError(str(e)) from None
        except OSError as e:
            raise ExplainError(f"{path}: cannot read it ({e.strerror or e})") from None
        for number, rec in records:
            for text in _record_lines(rec, job, f"{path}:{number}"):
                found += 1
                lines += text
    if not found:
        raise ExplainError(f"job {job}: no change or decision of the adapter is recorded for it in {state_dir} (a job "
                           "the adapter never moved, or one of another state directory)")
    return lines, found


def _record_lines(rec: dict, job: int, where: str) -> list[list[str]]:
    kind = rec.get("kind")
    stamp = _when(rec.get("time"), where)
    if kind == "explain":
        entries = rec.get("jobs")
        if not isinstance(entries, list) or not all(isinstance(e, dict) and isinstance(e.get("job"), int)
                                                    for e in entries):
            raise ExplainError(f"{where}: an explain record without its list of job entries: not an audit log of "
                               "schedrl slurm")
        out = []
        for entry in entries:
            if entry["job"] != job:
                continue
            path, overrides = entry.get("path", []), entry.get("overrides", [])
            if not (isinstance(path, list) and isinstance(overrides, list)):
                raise ExplainError(f"{where}: job {job}'s entry has a path or overrides that are not lists")
            body = entry_lines(entry, str(rec.get("policy", "the policy")))
            out.append([f"{stamp}  cycle {rec.get('cycle', '?')}: {body[0]}", *body[1:]])
        return out
    if kind is None and rec.get("job") == job:
        return [[f"{stamp}  its value {rec.get('from')} -> {rec.get('to')} ({rec.get('why')}, {rec.get('mode', 'live')}): "
                 f"{rec.get('result')}"]]
    return []


def _when(stamp, where: str) -> str:
    if isinstance(stamp, bool) or not isinstance(stamp, (int, float)) or not stamp == stamp:
        raise ExplainError(f"{where}: a record without its time: not an audit log of schedrl slurm")
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(stamp))


def write(audit, cycle: int, policy: str, entries: list[dict], left_out: int) -> None:
    """One `explain` record in the audit log (nothing when there is no entry)."""
    if entries:
        audit.note("explain", f"{len(entries)} job(s) explained", cycle=cycle, policy=policy, jobs=entries,
                   **({"left_out": left_out} if left_out else {}))


def say_entries(say: Callable[[str], None], cycle: int, policy: str, entries: list[dict], left_out: int) -> None:
    """A dry run's explanations, as `schedrl slurm explain` would print them."""
    for entry in entries:
        body = entry_lines(entry, policy)
        say(f"cycle {cycle}: would explain job {entry['job']}: {body[0]}")
        for line in body[1:]:
            say(line)
    if left_out:
        say(f"cycle {cycle}: ... and {left_out} more job(s) (at most {MAX_JOBS} a cycle)")


__all__ = ["ExplainError", "Explainer", "MAX_JOBS", "Placement", "audit_logs", "entry_lines", "job_history",
           "placement", "say_entries", "site_lines", "write"]
