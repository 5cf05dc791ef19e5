"""Explicit, reported trace cleaning.

Every rule can be switched off; each job is counted under the first rule that drops it, and the
`CleaningReport` says how many jobs each rule dropped or repaired, with example line numbers.

Defaults follow common practice in the scheduling literature (Feitelson & Tsafrir, "Workload
sanitation for performance evaluation", ISPASS 2006; the PWA "cleaned" logs; the simulators of
RLScheduler and DRAS): jobs that never ran carry no work and are dropped; a missing processor
request is the allocation; a missing requested time is the run time (a perfect estimate, as
RLScheduler does for Lublin traces); jobs wider than the machine cannot run and are dropped.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Mapping

import numpy as np

# SWF status codes (swf.html, field 11)
STATUS_CANCELLED = 5
_EXAMPLES = 5


@dataclass(frozen=True)
class CleaningRules:
    """Which cleaning rules apply. Construct with keywords; `CleaningRules.none()` keeps the raw log."""

    drop_cancelled_before_start: bool = True
    """Drop jobs with status 5 (cancelled) that never ran (run time -1 or 0)."""
    drop_nonpositive_runtime: bool = True
    """Drop jobs whose run time is 0, or -1 (unknown) unless `unknown_runtime_as` repairs it."""
    unknown_runtime_as: int | None = None
    """Repair run time -1 to this many seconds instead of dropping (RLScheduler's code uses 10)."""
    procs_from: str = "requested"
    """Processor count the job needs: `requested` (falling back to allocated when -1), `max` of both (RLScheduler), or `as_written`."""
    drop_nonpositive_procs: bool = True
    """Drop jobs whose processor count is still <= 0 after the fallback to allocated."""
    missing_requested_time: str | int = "runtime"
    """Requested time -1: `runtime` (perfect estimate), a number of seconds, `drop`, or `keep` (as written)."""
    drop_wider_than_machine: bool = True
    """Drop jobs that need more processors than the machine has (they could never start)."""
    sort_by_submit: bool = True
    """Stable-sort jobs by submit time when the log has them out of order (sequence indices follow it)."""
    negative_submit: str = "drop"
    """Submit time < 0 (-1 is SWF's unknown): `drop` the job, `shift` every submit so the first is 0, or `keep` (the
    simulator refuses it)."""

    def __post_init__(self) -> None:
        if self.procs_from not in ("requested", "max", "as_written"):
            raise ValueError(f"procs_from must be 'requested', 'max' or 'as_written', got {self.procs_from!r}")
        m = self.missing_requested_time
        if not (m in ("runtime", "drop", "keep") or (isinstance(m, int) and not isinstance(m, bool) and m > 0)):
            raise ValueError(f"missing_requested_time must be 'runtime', 'drop', 'keep' or a positive int, got {m!r}")
        if self.negative_submit not in ("drop", "shift", "keep"):
            raise ValueError(f"negative_submit must be 'drop', 'shift' or 'keep', got {self.negative_submit!r}")

    @classmethod
    def none(cls) -> "CleaningRules":
        """Keep every job as written (for round trips and inspection)."""
        return cls(False, False, None, "as_written", False, "keep", False, False, negative_submit="keep")

    @classmethod
    def rlscheduler(cls) -> "CleaningRules":
        """The filtering in RLScheduler's released code, to reproduce its published numbers:
        run time -1 becomes 10 s, run time 0 is dropped, processors = max(requested, allocated),
        requested time -1 becomes the run time, no other filter."""
        return cls(
            drop_cancelled_before_start=False,
            drop_nonpositive_runtime=True,
            unknown_runtime_as=10,
            procs_from="max",
            drop_nonpositive_procs=True,
            missing_requested_time="runtime",
            drop_wider_than_machine=True,
            sort_by_submit=False,
        )

    @classmethod
    def preset(cls, name: str) -> "CleaningRules":
        """Rules by name: `default`, `none`, `rlscheduler`."""
        presets = {"default": cls, "none": cls.none, "rlscheduler": cls.rlscheduler}
        if name not in presets:
            raise ValueError(f"unknown cleaning preset {name!r}; choose one of {', '.join(presets)}")
        return presets[name]()


@dataclass(frozen=True)
class CleaningAction:
    """What one rule did."""

    rule: str
    """Rule name (matches the `CleaningRules` field)."""
    action: str
    """`dropped`, `repaired`, `reordered` or `noted` (counted, left unchanged)."""
    count: int
    """Number of jobs affected."""
    detail: str
    """Human-readable explanation."""
    example_lines: tuple[int, ...] = ()
    """Up to five 1-based line numbers in the source file (when known)."""


@dataclass(frozen=True)
class CleaningReport:
    """What cleaning did to a trace."""

    source: str
    """The file (or name) cleaned."""
    jobs_in: int
    """Job lines read."""
    jobs_out: int
    """Jobs kept."""
    actions: tuple[CleaningAction, ...] = ()
    """One entry per rule that touched at least one job."""
    notes: tuple[str, ...] = field(default=())
    """Other facts (e.g. machine size inferred because the header gives none)."""

    @property
    def dropped(self) -> int:
        """Jobs removed in total."""
        return self.jobs_in - self.jobs_out

    def summary(self) -> str:
        """A few lines for humans."""
        lines = [f"cleaning {self.source}: kept {self.jobs_out} of {self.jobs_in} jobs ({self.dropped} dropped)"]
        for a in self.actions:
            where = f" (e.g. lines {', '.join(map(str, a.example_lines))})" if a.example_lines else ""
            lines.append(f"  {a.action:9s} {a.count:8d}  {a.detail}{where}")
        lines.extend(f"  note: {n}" for n in self.notes)
        return "\n".join(lines)

    def to_dict(self) -> dict:
        """JSON-friendly dict."""
        out = asdict(self)
        out["dropped"] = self.dropped
        return out


def _values(column: np.ndarray, mask: np.ndarray) -> str:
    """What the non-positive values under `mask` are: `-1 (unknown)`, `0`, `negative` (e.g. -50), joined by `or`."""
    v = column[mask]
    kinds = []
    if (v == -1).any():
        kinds.append("-1 (unknown)")
    if (v == 0).any():
        kinds.append("0")
    if (v < -1).any():
        kinds.append(f"negative (e.g. {v[v < -1][0]:g})")
    if (v > 0).any():
        kinds.append("positive")
    return " or ".join(kinds)


def _examples(mask: np.ndarray, lines: np.ndarray | None) -> tuple[int, ...]:
    if lines is None:
        return ()
    return tuple(int(x) for x in lines[np.flatnonzero(mask)[:_EXAMPLES]])


def clean_columns(
    columns: Mapping[str, np.ndarray],
    max_procs: int | None,
    rules: CleaningRules,
    source: str,
    lines: np.ndarray | None = None,
) -> tuple[dict[str, np.ndarray], CleaningReport]:
    """Apply `rules` to raw SWF columns; returns the kept (and repaired) columns and the report.

    `max_procs` is the machine size used by `drop_wider_than_machine` (None skips that rule).
    """
    cols = {k: np.array(v) for k, v in columns.items()}
    n = len(cols["job_id"])
    keep = np.ones(n, dtype=bool)
    actions: list[CleaningAction] = []

    def drop(rule: str, mask: np.ndarray, detail: str) -> None:
        hit = mask & keep
        if hit.any():
            actions.append(CleaningAction(rule, "dropped", int(hit.sum()), detail, _examples(hit, lines)))
            keep[hit] = False

    def repair(rule: str, mask: np.ndarray, detail: str, column: str, value) -> None:
        hit = mask & keep
        if hit.any():
            actions.append(CleaningAction(rule, "repaired", int(hit.sum()), detail, _examples(hit, lines)))
            cols[column][hit] = value[hit] if isinstance(value, np.ndarray) else value

    if rules.negative_submit == "drop":
        drop("negative_submit", cols["submit"] < 0, "submit time " + _values(cols["submit"], cols["submit"] < 0))
    run, status = cols["run"], cols["status"]
    if rules.drop_cancelled_before_start:
        drop("drop_cancelled_before_start", (status == STATUS_CANCELLED) & ((run == 0) | (run == -1)),
             "cancelled (status 5) before starting: run time -1 or 0")
    if rules.unknown_runtime_as is not None:
        repair("unknown_runtime_as", run == -1, f"run time -1 (unknown) set to {rules.unknown_runtime_as} s",
               "run", rules.unknown_runtime_as)
    if rules.drop_nonpositive_runtime:
        run = cols["run"]
        drop("drop_nonpositive_runtime", run == -1, "run time -1 (unknown)")
        drop("drop_nonpositive_runtime", run < -1, "run time " + _values(run, keep & (run < -1)) + ": invalid")
        drop("drop_nonpositive_runtime", run == 0, "run time 0 (no work)")

    req, alloc = cols["procs_req"], cols["procs_alloc"]
    if rules.procs_from == "max":
        larger = alloc > req
        repair("procs_from", larger, "requested processors raised to the allocation (max of both)", "procs_req", alloc)
    elif rules.procs_from == "requested":
        mask = (req <= 0) & (alloc > 0)
        repair("procs_from", mask, f"requested processors {_values(req, mask & keep)} set to allocated processors",
               "procs_req", alloc)
    if rules.drop_nonpositive_procs:
        drop("drop_nonpositive_procs", cols["procs_req"] <= 0, "no processor count (requested and allocated <= 0)")

    missing_time = cols["time_req"] <= 0
    what = "requested time " + _values(cols["time_req"], missing_time & keep)
    m = rules.missing_requested_time
    if m == "runtime":
        repair("missing_requested_time", missing_time, f"{what} set to the run time", "time_req", cols["run"])
    elif m == "drop":
        drop("missing_requested_time", missing_time, what)
    elif m != "keep":
        repair("missing_requested_time", missing_time, f"{what} set to {m} s", "time_req", m)

    notes: list[str] = []
    if rules.drop_wider_than_machine and max_procs is not None:
        drop("drop_wider_than_machine", cols["procs_req"] > max_procs, f"wider than the machine ({max_procs} processors)")

    over = keep & (cols["time_req"] > 0) & (cols["run"] > cols["time_req"])
    if over.any():
        actions.append(CleaningAction("run_exceeds_request", "noted", int(over.sum()),
                                      "run time exceeds requested time (left as is; the simulator kills at the limit if enabled)",
                                      _examples(over, lines)))

    ids = cols["job_id"]
    kept_at = np.flatnonzero(keep)
    _, first = np.unique(ids[kept_at], return_index=True)
    repeated = np.zeros(n, dtype=bool)
    repeated[kept_at] = True
    repeated[kept_at[first]] = False
    if repeated.any():
        actions.append(CleaningAction("duplicate_job_id", "noted", int(repeated.sum()),
                                      "job id already used by an earlier job (kept: ids only label jobs)",
                                      _examples(repeated, lines)))

    kept = {k: v[keep] for k, v in cols.items()}
    kept_lines = lines[keep] if lines is not None else None
    if rules.negative_submit == "shift" and len(kept["submit"]) and kept["submit"].min() < 0:
        negative = kept["submit"] < 0
        offset = -int(kept["submit"].min())
        actions.append(CleaningAction("negative_submit", "repaired", int(negative.sum()),
                                      f"submit time {_values(kept['submit'], negative)}: every submit time shifted "
                                      f"by +{offset} s so the first is 0", _examples(negative, kept_lines)))
        kept["submit"] = kept["submit"] + offset
    if rules.sort_by_submit:
        submit = kept["submit"]
        out_of_order = np.zeros(len(submit), dtype=bool)
        out_of_order[1:] = submit[1:] < np.maximum.accumulate(submit)[:-1]
        if out_of_order.any():
            order = np.argsort(submit, kind="stable")
            actions.append(CleaningAction("sort_by_submit", "reordered", int(out_of_order.sum()),
                                          "submitted earlier than a preceding job; jobs stable-sorted by submit time",
                                          _examples(out_of_order, kept_lines)))
            kept = {k: v[order] for k, v in kept.items()}
    report = CleaningReport(source, n, len(kept["job_id"]), tuple(actions), tuple(notes))
    return kept, report
