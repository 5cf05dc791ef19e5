"""Import a Slurm accounting log (`sacct --parsable2` output) as an SWF workload.

The command, the field mapping and the anonymisation are documented in docs/slurm.md ("Importing a
site's accounting log"); `SACCT_COMMAND` and `SINFO_COMMAND` are the commands it shows. Fields are
found by the header line, in any order; fields not listed in `SACCT_FIELDS` are ignored.

What is a job: sacct prints one line per job and one per job step (`123.batch`, `123.extern`,
`123.0`); steps run inside their job's allocation and are dropped. An array task (`123_4`) is a job
with its own `JobIDRaw`; a record of array tasks that never started (`123_[5-9]`) is dropped. The
components of a heterogeneous job (`123+0`, `123+1`) start together and are one SWF job: CPUs
summed, the longest run time and time limit, the first component's ids. Jobs still pending or
running when sacct ran are dropped: they are not finished jobs yet.

User, group, partition, QOS and job names become integers through `NameIds` (a keyed hash, or a
mapping file the site keeps), so a shared trace holds no names. Times are read in the time zone
sacct ran in (`SlurmImport.timezone`), recorded in the SWF header.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Mapping
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np

from schedrl.duration import parse_slurm_duration
from schedrl.workload.catalog import content_sha256
from schedrl.workload.cleaning import CleaningAction, CleaningRules
from schedrl.workload.errors import TraceError
from schedrl.workload.fields import FIELD_NAMES
from schedrl.workload.header import parse_header
from schedrl.workload.swf import read_bytes, workload_from_columns, write_swf
from schedrl.workload.workload import Workload

SACCT_FIELDS = ("JobID", "JobIDRaw", "JobName", "User", "Group", "Partition", "QOS", "Submit", "Eligible", "Start",
                "Elapsed", "Timelimit", "ReqCPUS", "AllocCPUS", "ReqNodes", "AllocNodes", "State", "TotalCPU")
"""The fields read, in the order the documented command asks for them."""
REQUIRED_FIELDS = ("JobID", "JobIDRaw", "State", "Submit", "Start", "Elapsed", "Timelimit", "ReqCPUS", "AllocCPUS")
"""Without these there is no SWF job; the others fill optional SWF fields (-1 when absent)."""
SACCT_COMMAND = ("TZ=UTC SLURM_TIME_FORMAT=standard sacct --allusers --parsable2 --noconvert "
                 "--starttime=2024-01-01T00:00:00 --endtime=2024-07-01T00:00:00 --format=" + ",".join(SACCT_FIELDS))
SINFO_COMMAND = "sinfo --all --Node --format='%N|%P|%c|%l'"
SINFO_PARTITION_COMMAND = "sinfo --Node --partition=P --format='%N|%P|%c|%l'"
"""One partition's nodes: sinfo refuses --all with --partition ("Conflicting options, -a and -p"), printing nothing
on its standard output, so `> sinfo.txt` leaves an empty file."""
YEAR_S = 365 * 86400
"""Slurm 22.05 records `365-00:00:00` as the time limit of a job submitted without --time to a partition whose
MaxTime is INFINITE (its stand-in for 'no limit', a year in minutes): read as no limit."""
NAME_FIELDS = {"user": "User", "group": "Group", "app": "JobName", "queue": "QOS", "partition": "Partition"}
"""SWF field -> the sacct field whose names `NameIds` turns into its ids (the sacct field is the kind of name)."""
HASHED_IDS = 10**9
"""Hashed ids lie in [1, 10^9]: small enough for tools that read SWF fields as 32-bit ints."""

# sacct's State (first word) -> SWF status (swf.html field 11: 1 completed, 0 failed, 5 cancelled)
FINISHED = {"COMPLETED": 1, "FAILED": 0, "TIMEOUT": 0, "OUT_OF_MEMORY": 0, "NODE_FAIL": 0, "BOOT_FAIL": 0,
            "DEADLINE": 0, "PREEMPTED": 0, "CANCELLED": 5}
UNFINISHED = {
    "PENDING": "still pending when sacct ran",
    "RUNNING": "still running when sacct ran",
    "SUSPENDED": "suspended when sacct ran",
    "REQUEUED": "an earlier run of a requeued job (sacct --duplicates); the job's last run is its own record",
    "RESIZING": "the record of a job before it was resized; the job goes on under the same id",
    "REVOKED": "a revoked federated sibling: the job ran on another cluster",
}
_NO_TIME = ("", "Unknown", "None", "N/A")
_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$")
# JobID: 123, 123_4, 123_[5-9%2], 123+1, and any of them with a step suffix (.batch, .extern, .0)
_JOB_ID = re.compile(r"^(\d+)(?:_(\d+|\[[^\]]*\]))?(?:\+(\d+))?(?:\.(\S+))?$")


def array_task_count(spec: str) -> int | None:
    """Tasks in an array index expression (`[5-9]`, `[1,3,8-10:2%4]`), or None if it is not one."""
    body = spec.strip("[]").split("%")[0]
    count = 0
    for part in body.split(","):
        m = re.fullmatch(r"(\d+)(?:-(\d+)(?::(\d+))?)?", part)
        if not m:
            return None
        first, last, step = int(m.group(1)), int(m.group(2) or m.group(1)), int(m.group(3) or 1)
        if last < first or step < 1:
            return None
        count += (last - first) // step + 1
    return count


def local_timezone() -> str:
    """The IANA name of this machine's time zone: `$TZ`, else what /etc/localtime links to, else UTC."""
    tz = os.environ.get("TZ", "").lstrip(":")
    if tz:
        return tz.split("zoneinfo/", 1)[-1]
    link = Path("/etc/localtime")
    if link.is_symlink() and "zoneinfo/" in str(link.resolve()):
        return str(link.resolve()).split("zoneinfo/", 1)[1]
    try:
        return Path("/etc/timezone").read_text().strip() or "UTC"
    except OSError:
        return "UTC"


def zone_info(name: str) -> ZoneInfo:
    """The time zone named `name`; ValueError saying what to give instead."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown time zone {name!r}: give an IANA name such as Europe/Berlin, America/Chicago "
                         "or UTC") from None


# --- names to integers ---------------------------------------------------------------------------


@dataclass
class NameIds:
    """Stable integer ids for names, one numbering per kind of name (`User`, `Group`, `JobName`, ...).

    With a `salt`: a keyed hash (HMAC-SHA256) of kind and name, the same for every import with that
    salt, irreversible without it. Without: the `table` a site keeps (`load`/`save`), where a new
    name gets the next free id of its kind.
    """

    salt: bytes | None = None
    """Secret key of the hash; None to number names through `table`."""
    table: dict[str, dict[str, int]] = field(default_factory=dict)
    """kind -> name -> id (the site's mapping file)."""
    added: dict[str, int] = field(default_factory=dict)
    """kind -> names added to `table` by this import."""
    _seen: dict[tuple[str, int], str] = field(default_factory=dict, init=False, repr=False)
    _next: dict[str, int] = field(default_factory=dict, init=False, repr=False)
    _hashed: dict[tuple[str, str], int] = field(default_factory=dict, init=False, repr=False)

    @classmethod
    def load(cls, path: str | Path) -> "NameIds":
        """The mapping kept in `path` (JSON: kind -> name -> id), or an empty one if the file does not exist."""
        from schedrl.bounded import TooLarge, read_bounded

        path = Path(path)
        if not path.exists():
            return cls()
        try:
            table = json.loads(read_bounded(path, "an id map", 256 << 20))
        except TooLarge as e:
            raise TraceError(path, e.problem) from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
            raise TraceError(path, f"not a readable id map ({e})") from None
        ok = isinstance(table, dict) and all(
            isinstance(names, dict) and all(isinstance(i, int) and i > 0 for i in names.values())
            for names in table.values())
        if not ok:
            raise TraceError(path, "not an id map: expected a JSON object of kind -> {name: positive integer id}")
        for kind, names in table.items():
            first: dict[int, str] = {}
            for name, number in names.items():
                if number in first:  # two people would become one in every trace imported with this map
                    raise TraceError(path, f"{kind} id {number} is given to both {first[number]!r} and {name!r}; "
                                           "an id names one name: correct the map")
                first[number] = name
        return cls(table=table)

    def save(self, path: str | Path) -> None:
        """Write `table` to `path` (atomically: a crash never leaves half a map); OSError naming `path` only."""
        from schedrl.outputs import atomic_write

        path = Path(path)
        try:
            atomic_write(path, json.dumps(self.table, indent=1, sort_keys=True, ensure_ascii=True) + "\n")
        except OSError as e:
            raise TraceError(path, f"cannot write the id map ({e.strerror or type(e).__name__})") from None

    def id(self, kind: str, name: str) -> int:
        """The id of `name` among names of `kind`; -1 for an empty name (unknown)."""
        if not name:
            return -1
        if self.salt is None:
            names = self.table.setdefault(kind, {})
            if name not in names:
                if kind not in self._next:
                    self._next[kind] = max(names.values(), default=0) + 1
                names[name] = self._next[kind]
                self._next[kind] += 1
                self.added[kind] = self.added.get(kind, 0) + 1
            return names[name]
        if (kind, name) in self._hashed:
            return self._hashed[(kind, name)]
        digest = hmac.new(self.salt, f"{kind}\0{name}".encode("utf-8", "surrogateescape"), hashlib.sha256).digest()
        value = int.from_bytes(digest[:8], "big") % HASHED_IDS + 1
        other = self._seen.setdefault((kind, value), name)
        if other != name:
            raise ValueError(f"two {kind} names hash to the same id {value} with this salt: choose another --salt, "
                             "or keep an --id-map")
        self._hashed[(kind, name)] = value
        return value


# --- sinfo -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SinfoMachine:
    """The machine as `SINFO_COMMAND` prints it."""

    nodes: int
    """Distinct nodes."""
    procs: int
    """CPUs over the distinct nodes."""
    partition_limits: Mapping[str, int | None]
    """Partition -> its time limit in seconds (None: infinite)."""


def _fields_header(path, lines: list[str], required: tuple[str, ...], command: str) -> tuple[int, dict[str, int], bool]:
    """(line index of the header, field -> column, whether lines end in a `|` as with --parsable)."""
    at = next((k for k, line in enumerate(lines) if line.strip()), None)
    if at is None:
        raise TraceError(path, "no lines", hint=f"expected the output of `{command}`")
    header = lines[at]
    trailing = header.endswith("|")
    names = (header[:-1] if trailing else header).split("|")
    if len(names) == 1:
        raise TraceError(path, f"the first line is not a '|'-separated header: {header[:60]!r}", line=at + 1,
                         hint=f"expected the output of `{command}`, with its header line")
    upper = {n.strip().upper(): k for k, n in enumerate(names)}
    missing = [f for f in required if f.upper() not in upper]
    if missing and _JOB_ID.match(names[0].strip()):
        raise TraceError(path, "the first line is a job record, not a header", line=at + 1,
                         hint="run sacct without --noheader")
    if len(upper) < len(names):
        twice = next(n.strip() for k, n in enumerate(names) if upper[n.strip().upper()] != k)
        raise TraceError(path, f"the header names field {twice} twice", line=at + 1)
    if missing:
        raise TraceError(path, f"the header lacks required field{'s' if len(missing) > 1 else ''} {', '.join(missing)}",
                         line=at + 1, hint=f"expected the output of `{command}`")
    return at, upper, trailing


def _split(path, line: str, number: int, width: int, trailing: bool) -> list[str]:
    if trailing:
        if not line.endswith("|"):
            raise TraceError(path, "the line does not end in '|' as the header does (sacct --parsable)", line=number)
        line = line[:-1]
    values = line.split("|")
    if len(values) != width:
        raise TraceError(path, f"expected {width} '|'-separated fields as in the header, found {len(values)}",
                         line=number, hint="a name containing '|'? sacct --delimiter cannot be read here")
    return values


def _text_lines(path, hint: str | None = None) -> list[str]:
    try:
        data = read_bytes(path)
    except TraceError as e:
        if e.problem != "empty file":
            raise
        raise TraceError(path, "empty file", hint=hint or "expected a header line, then one line per record") from None
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    # names are hashed byte for byte: undecodable bytes survive as surrogates
    return [line.rstrip("\r") for line in data.decode("utf-8", "surrogateescape").split("\n")]


def read_sinfo(path: str | Path) -> SinfoMachine:
    """Machine size and partition time limits from `SINFO_COMMAND` output (one line per node and partition)."""
    lines = _text_lines(path, hint="sinfo printed nothing: did it fail? sinfo refuses --all with --partition "
                                   "(\"Conflicting options, -a and -p\") and writes its error to the terminal, not "
                                   f"the file; for one partition run `{SINFO_PARTITION_COMMAND}`")
    at, columns, trailing = _fields_header(path, lines, ("NODELIST", "CPUS"), SINFO_COMMAND)
    cpus: dict[str, int] = {}
    limits: dict[str, int | None] = {}
    for k in range(at + 1, len(lines)):
        if not lines[k].strip():
            continue
        values = _split(path, lines[k], k + 1, len(columns), trailing)
        node, count = values[columns["NODELIST"]].strip(), values[columns["CPUS"]].strip()
        if any(c in node for c in "[],"):
            raise TraceError(path, f"NODELIST {node!r} names several nodes", line=k + 1,
                             hint=f"run sinfo with --Node, one line per node: `{SINFO_COMMAND}`")
        if not count.isdigit() or int(count) <= 0:
            raise TraceError(path, f"CPUS is not a positive number: {count!r}", line=k + 1)
        if cpus.setdefault(node, int(count)) != int(count):
            raise TraceError(path, f"node {node} has {count} CPUs here and {cpus[node]} on an earlier line", line=k + 1)
        if "PARTITION" in columns and "TIMELIMIT" in columns:
            partition, limit = values[columns["PARTITION"]].strip().rstrip("*"), values[columns["TIMELIMIT"]].strip()
            try:
                limits[partition] = None if limit in ("infinite", "UNLIMITED", "n/a") else int(parse_slurm_duration(limit))
            except ValueError as e:
                raise TraceError(path, f"TIMELIMIT {e}", line=k + 1) from None
    if not cpus:
        raise TraceError(path, "no node lines after the header")
    return SinfoMachine(len(cpus), sum(cpus.values()), limits)


# --- sacct -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SlurmImport:
    """How `read_sacct` turns sacct records into SWF jobs."""

    procs: int
    """CPUs in the machine (SWF MaxProcs): an option, or `read_sinfo(...).procs`."""
    nodes: int | None = None
    """Nodes in the machine (SWF MaxNodes), when known."""
    timezone: str = "UTC"
    """IANA name of the zone sacct printed its times in (its `TZ`); recorded in the SWF header."""
    partition_limits: Mapping[str, int | None] = field(default_factory=dict)
    """Partition -> time limit in seconds (None: infinite), for jobs whose Timelimit is `Partition_Limit`."""
    arrival: str = "submit"
    """The SWF submit time: sacct's `submit`, or `eligible` (when the job could first start; Submit where unknown)."""
    node_columns: bool = False
    """Write ReqNodes and AllocNodes after the 18 SWF fields as extra columns `nodes_req` and `nodes_alloc`."""

    def __post_init__(self) -> None:
        if self.procs <= 0 or (self.nodes is not None and self.nodes <= 0):
            raise ValueError(f"the machine size must be positive, got {self.procs} CPUs and {self.nodes} nodes")
        if self.arrival not in ("submit", "eligible"):
            raise ValueError(f"arrival must be 'submit' or 'eligible', got {self.arrival!r}")
        zone_info(self.timezone)


@dataclass
class _Job:
    """One job record (or heterogeneous-job component) of a sacct file, its values parsed."""

    line: int
    raw: int
    state: str
    names: dict[str, str]
    submit: int | None
    eligible: int | None
    start: int | None
    elapsed: int | None
    limit: int | str | None
    req_cpus: int
    alloc_cpus: int
    req_nodes: int | None
    alloc_nodes: int | None
    total_cpu: float | None

    @property
    def started(self) -> bool:
        # a job cancelled while pending has Start = End = the cancel time, but no nodes
        return self.start is not None and self.alloc_nodes != 0


class _SacctReader:
    """Parses the records of one sacct file and keeps the tallies of the import report."""

    def __init__(self, path, columns: dict[str, int], options: SlurmImport):
        self.path, self.options = path, options
        self.index = {f: columns.get(f.upper()) for f in SACCT_FIELDS}
        self.zone = zone_info(options.timezone)
        # a time's epoch is its hour's (UTC) start + minutes and seconds - the hour's UTC offset, where the
        # offset is the same all through the hour; times in an hour with a transition are converted one by one
        self.hours: dict[str, tuple[int, int | None]] = {}
        self.epochs: dict[str, int] = {}
        self.durations: dict[str, float] = {}
        self.dst = {"fold": 0, "gap": 0}
        self.tally: dict[tuple[str, str, str], list[int]] = {}
        self.array_tasks: list[int | None] = []

    def count(self, rule: str, action: str, detail: str, line: int) -> None:
        self.tally.setdefault((rule, action, detail), []).append(line)

    def actions(self) -> tuple[CleaningAction, ...]:
        order = {"dropped": 0, "repaired": 1, "noted": 2}
        items = sorted(self.tally.items(), key=lambda kv: order[kv[0][1]])
        return tuple(CleaningAction(rule, action, len(lines), detail, tuple(lines[:5]))
                     for (rule, action, detail), lines in items)

    def notes(self) -> tuple[str, ...]:
        zone = self.options.timezone
        notes = [f"times read as local time in {zone}"]
        if self.array_tasks:
            tasks = sum(t for t in self.array_tasks if t is not None)
            unknown = f" (and {self.array_tasks.count(None)} unreadable ranges)" if None in self.array_tasks else ""
            notes.append(f"the {len(self.array_tasks)} dropped array records stand for {tasks} array tasks{unknown}")
        if self.dst["fold"]:
            notes.append(f"{self.dst['fold']} distinct times fall in the hour repeated when {zone} set its clocks back: "
                         "read as the first pass (run sacct with TZ=UTC to avoid this)")
        if self.dst["gap"]:
            notes.append(f"{self.dst['gap']} distinct times fall in the hour {zone} skipped when it set its clocks "
                         "forward: is --timezone the zone sacct ran in?")
        return tuple(notes)

    def get(self, values: list[str], name: str) -> str | None:
        k = self.index[name]
        return None if k is None else values[k].strip()

    def epoch(self, values, name: str, line: int) -> int | None:
        text = self.get(values, name)
        if text is None or text in _NO_TIME:
            return None
        if not _TIME.match(text):
            raise TraceError(self.path, f"{name} is not a time: {text!r}", line=line,
                             hint="sacct prints 2024-05-01T12:00:00 with SLURM_TIME_FORMAT=standard")
        hour = self.hours.get(text[:13])
        if hour is None:
            hour = self.hours[text[:13]] = self._hour(text, name, line)
        minutes, seconds = int(text[14:16]), int(text[17:19])
        if minutes > 59 or seconds > 59:
            raise TraceError(self.path, f"{name} is not a valid date and time: {text!r}", line=line)
        if hour[1] is not None:
            return hour[0] + 60 * minutes + seconds - hour[1]
        if text in self.epochs:
            return self.epochs[text]
        local = datetime.fromisoformat(text)
        first, second = local.replace(tzinfo=self.zone, fold=0), local.replace(tzinfo=self.zone, fold=1)
        if first.utcoffset() != second.utcoffset():
            exists = datetime.fromtimestamp(first.timestamp(), self.zone).replace(tzinfo=None) == local
            self.dst["fold" if exists else "gap"] += 1
        self.epochs[text] = value = int(first.timestamp())
        return value

    def _hour(self, text: str, name: str, line: int) -> tuple[int, int | None]:
        """(epoch of the start of `text`'s hour read as UTC, the zone's UTC offset all through that hour or None)."""
        try:
            start = datetime.fromisoformat(text[:13] + ":00:00")
        except ValueError:
            raise TraceError(self.path, f"{name} is not a valid date and time: {text!r}", line=line) from None
        offsets = {moment.replace(tzinfo=self.zone, fold=fold).utcoffset()
                   for moment in (start, start.replace(minute=59, second=59)) for fold in (0, 1)}
        naive = int(start.replace(tzinfo=timezone.utc).timestamp())
        return naive, int(offsets.pop().total_seconds()) if len(offsets) == 1 else None

    def integer(self, values, name: str, line: int) -> int | None:
        text = self.get(values, name)
        if text is None:
            return None
        if not text.isdigit():
            raise TraceError(self.path, f"{name} is not a whole number: {text!r}", line=line,
                             hint="run sacct with --noconvert" if text and text[-1] in "KMGTP" else "")
        return int(text)

    def duration(self, values, name: str, line: int) -> float | None:
        text = self.get(values, name)
        if text is None or text == "INVALID":
            return None
        if text in self.durations:
            return self.durations[text]
        try:
            self.durations[text] = value = parse_slurm_duration(text)
            return value
        except ValueError as e:
            raise TraceError(self.path, f"{name} is {e}", line=line,
                             hint="Slurm prints [D-]HH:MM:SS, MM:SS or MM:SS.mmm") from None

    def job(self, values: list[str], state: str, line: int) -> _Job:
        raw = self.get(values, "JobIDRaw")
        if not raw.isdigit():
            raise TraceError(self.path, f"JobIDRaw of a job is not a job number: {raw!r}", line=line)
        limit_text = self.get(values, "Timelimit")
        limit: int | str | None
        if limit_text in ("UNLIMITED", "Partition_Limit"):
            limit = limit_text
        elif limit_text in ("", "INVALID"):
            limit = None
        else:
            limit = int(self.duration(values, "Timelimit", line))
        elapsed = self.duration(values, "Elapsed", line)
        if elapsed is None:
            self.count("slurm_elapsed", "noted", "Elapsed INVALID (end before start): run time -1", line)
        return _Job(line=line, raw=int(raw), state=state,
                    names={f: self.get(values, f) or "" for f in NAME_FIELDS.values()},
                    submit=self.epoch(values, "Submit", line), eligible=self.epoch(values, "Eligible", line),
                    start=self.epoch(values, "Start", line),
                    elapsed=None if elapsed is None else int(elapsed), limit=limit,
                    req_cpus=self.integer(values, "ReqCPUS", line), alloc_cpus=self.integer(values, "AllocCPUS", line),
                    req_nodes=self.integer(values, "ReqNodes", line),
                    alloc_nodes=self.integer(values, "AllocNodes", line),
                    total_cpu=self.duration(values, "TotalCPU", line) if self.get(values, "TotalCPU") else None)

    def time_req(self, job: _Job) -> int:
        if isinstance(job.limit, int) and job.limit == YEAR_S:
            partition = job.names["Partition"]
            known = self.options.partition_limits.get(partition, "absent")
            if known is None or known == "absent":
                self.count("slurm_time_limit", "noted", "Timelimit 365-00:00:00, what Slurm 22.05 records for a job "
                           "without --time in a partition whose limit is INFINITE: no time limit, requested time -1 "
                           "(unknown)" + ("" if known is None else "; the partition is not in --sinfo, so its "
                                          "limit could not be checked"), job.line)
                return -1
        if isinstance(job.limit, int):
            return job.limit
        if job.limit == "Partition_Limit":
            partition = job.names["Partition"]
            if partition in self.options.partition_limits and self.options.partition_limits[partition] is not None:
                self.count("slurm_partition_limit", "repaired", "Timelimit Partition_Limit: the partition's time "
                           "limit (from sinfo)", job.line)
                return self.options.partition_limits[partition]
            if partition not in self.options.partition_limits:
                self.count("slurm_partition_limit", "noted", "Timelimit Partition_Limit of a partition sinfo does not "
                           "list (give --sinfo): requested time -1 (unknown)", job.line)
                return -1
        if job.limit is None:
            self.count("slurm_time_limit", "noted", "Timelimit empty or INVALID: requested time -1 (unknown)", job.line)
        else:
            self.count("slurm_time_limit", "noted", "no time limit (UNLIMITED, or an infinite partition limit): "
                       "requested time -1 (unknown)", job.line)
        return -1

    def row(self, parts: list[_Job], ids: NameIds) -> dict[str, float]:
        """The SWF fields of one job (a heterogeneous job's components merged), submit still an epoch."""
        lead = parts[0]
        arrival = lead.submit
        if self.options.arrival == "eligible":
            if lead.eligible is None:
                self.count("slurm_arrival", "noted", "Eligible unknown: submit time is Submit", lead.line)
            else:
                arrival = lead.eligible
        started = lead.started
        if started and arrival is not None and lead.start < arrival:
            if arrival != lead.submit and lead.submit is not None and lead.submit <= lead.start:
                self.count("slurm_start_before_arrival", "repaired", "Eligible after Start (--arrival eligible): "
                           "submit time is Submit", lead.line)
                arrival = lead.submit
            else:
                self.count("slurm_start_before_arrival", "repaired", "Start before Submit (clock step, or a requeued "
                           "job's Submit reset after its Start): submit time set to Start, wait 0", lead.line)
                arrival = lead.start
        elapsed = [p.elapsed for p in parts]
        limits = [self.time_req(p) for p in parts]
        alloc = sum(p.alloc_cpus for p in parts) if started else -1
        req = sum(p.req_cpus for p in parts)
        total_cpu = None if any(p.total_cpu is None for p in parts) else sum(p.total_cpu for p in parts)
        codes = {FINISHED[p.state] for p in parts}
        if started and alloc > req:
            self.count("slurm_alloc_above_request", "noted", "allocated more CPUs than requested (whole nodes or "
                       "cores): procs_alloc > procs_req; `--cleaning rlscheduler` uses the larger", lead.line)
        row = {
            "job_id": lead.raw,
            "submit": -1 if arrival is None else arrival,
            "wait": lead.start - arrival if started and arrival is not None else -1,
            "run": max(elapsed) if started and None not in elapsed else -1,
            "procs_alloc": alloc,
            # TotalCPU has millisecond resolution; per CPU, microseconds are plenty
            "cpu_avg": round(total_cpu / alloc, 6) if started and alloc > 0 and total_cpu is not None else -1,
            "mem_used": -1,
            "procs_req": req,
            "time_req": -1 if -1 in limits else max(limits),
            "mem_req": -1,
            "status": 5 if 5 in codes else 0 if 0 in codes else 1,
            **{swf: ids.id(kind, lead.names[kind]) for swf, kind in NAME_FIELDS.items()},
            "prev_job": -1,
            "think_time": -1,
        }
        if self.options.node_columns:
            row["nodes_req"] = sum(p.req_nodes for p in parts)
            row["nodes_alloc"] = sum(p.alloc_nodes for p in parts) if started else -1
        return row


def read_sacct(path: str | Path, ids: NameIds, options: SlurmImport, rules: CleaningRules = CleaningRules(), *,
               name: str | None = None) -> Workload:
    """Read `sacct --parsable2` (or `--parsable`) output into a cleaned `Workload`.

    The report counts every sacct record: steps, unfinished jobs, never-started array records and
    merged heterogeneous components are dropped by the import, the rest by `rules`; example lines
    are lines of the sacct file. Names become ids through `ids` (a table it extends: save it after).
    """
    path = Path(path)
    lines = _text_lines(path)
    at, columns, trailing = _fields_header(path, lines, REQUIRED_FIELDS, SACCT_COMMAND)
    if options.node_columns:
        missing = [f for f in ("ReqNodes", "AllocNodes") if f.upper() not in columns]
        if missing:
            raise TraceError(path, f"the header lacks {' and '.join(missing)}, needed for the node columns", line=at + 1)
    reader = _SacctReader(path, columns, options)
    groups: dict[tuple[str, int, int | None], list[tuple[int, _Job]]] = {}
    seen: dict[tuple, int] = {}  # (JobID, submit, start, elapsed) -> the line that gave it first
    records = 0
    for k in range(at + 1, len(lines)):
        if not lines[k].strip():
            continue
        records += 1
        number = k + 1
        values = _split(path, lines[k], number, len(columns), trailing)
        job_id = reader.get(values, "JobID")
        m = _JOB_ID.match(job_id)
        if not m:
            raise TraceError(path, f"JobID is not a Slurm job id: {job_id!r}", line=number,
                             hint="expected 123, 123_4, 123_[5-9], 123+1 or a step such as 123.batch")
        if m.group(4) is not None:
            reader.count("slurm_step", "dropped", "job steps (123.batch, 123.extern, 123.0): they run inside "
                         "their job's allocation, not jobs", number)
            continue
        state = (reader.get(values, "State").split() or [""])[0].upper()
        if state not in FINISHED and state not in UNFINISHED:
            known = ", ".join([*FINISHED, *UNFINISHED])
            raise TraceError(path, f"State is not a Slurm job state: {reader.get(values, 'State')!r}", line=number,
                             hint=f"expected one of {known}")
        job = reader.job(values, state, number)
        # the same record again (sacct output concatenated, or a query that overlapped another): one job, said so;
        # a requeued job's earlier runs and a reused id differ in their submit or start time and stay jobs
        same = (job_id, job.submit, job.start, job.elapsed, state)
        if same in seen:
            reader.count("slurm_repeated", "dropped", f"records repeating an earlier one (the same JobID, submit, "
                         f"start, elapsed and state; e.g. line {seen[same]}): one job each", number)
            continue
        seen[same] = number
        if m.group(2) is not None and m.group(2).startswith("["):
            what = "cancelled before any started" if state == "CANCELLED" else "still pending"
            reader.count("slurm_array_record", "dropped", f"records of array tasks {what} (123_[5-9]): no task "
                         "record split out yet", number)
            reader.array_tasks.append(array_task_count(m.group(2)))
            continue
        # components of a heterogeneous job share the id before the '+' and their submit time; every other
        # record is a job of its own (a requeued job's earlier runs and reused ids repeat a JobIDRaw)
        key = ("het", int(m.group(1)), job.submit) if m.group(3) is not None else ("job", number, None)
        groups.setdefault(key, []).append((int(m.group(3) or 0), job))

    rows, row_lines = [], []
    for parts in groups.values():
        parts = [job for _, job in sorted(parts, key=lambda p: p[0])]
        unfinished = next((p.state for p in parts if p.state in UNFINISHED), None)
        if unfinished is not None:
            for p in parts:
                reader.count("slurm_unfinished", "dropped", UNFINISHED[unfinished], p.line)
            continue
        for p in parts[1:]:
            reader.count("slurm_heterogeneous", "dropped", "heterogeneous-job components after the first (123+1, ...): "
                         "merged into one job (CPUs summed, longest run and limit)", p.line)
        rows.append(reader.row(parts, ids))
        row_lines.append(parts[0].line)
    if not rows:
        dropped = "; ".join(f"{len(v)} {detail}" for (_, _, detail), v in reader.tally.items()) or "none"
        raise TraceError(path, f"no finished job among {records} records", hint=dropped)

    known = [r["submit"] for r in rows if r["submit"] != -1]
    t0 = min(known) if known else 0
    for r in rows:
        r["submit"] = r["submit"] - t0 if r["submit"] != -1 else -1
    columns_out = {f: np.array([r[f] for r in rows], dtype=np.float64) for f in FIELD_NAMES}
    extras = {f: np.array([r[f] for r in rows], dtype=np.float64) for f in ("nodes_req", "nodes_alloc")
              if options.node_columns}
    size = [f"; MaxProcs: {options.procs}"] + ([f"; MaxNodes: {options.nodes}"] if options.nodes else [])
    workload = workload_from_columns(columns_out, parse_header(size), name or path.stem, str(path), rules,
                                     np.array(row_lines, dtype=np.int64), extras=extras, notes=reader.notes())
    report = replace(workload.report, jobs_in=records, actions=reader.actions() + workload.report.actions)
    return replace(workload, header=_swf_header(workload, options, ids, t0, records), report=report)


def _swf_header(workload: Workload, options: SlurmImport, ids: NameIds, t0: int, records: int):
    """The SWF header of an imported trace: machine, time zone, time span, and how each field was made."""
    from schedrl import __version__

    zone = zone_info(options.timezone)
    ran = (workload.wait >= 0) & (workload.run >= 0)
    last = int((workload.submit + workload.wait + workload.run)[ran].max()) if ran.any() else int(workload.submit.max())

    def stamp(offset: int) -> str:
        return datetime.fromtimestamp(t0 + offset, zone).isoformat()

    machine = ", ".join(([f"{options.nodes} nodes"] if options.nodes else []) + [f"{options.procs} CPUs"])
    named = ("a keyed hash (HMAC-SHA256) with a secret salt" if ids.salt is not None
             else "the site's id map (kept at the site)")
    submit = "Eligible (Submit where unknown)" if options.arrival == "eligible" else "Submit"
    lines = [
        "; Version: 2.2",
        f"; Computer: Slurm cluster, {machine}",
        f"; Conversion: schedrl {__version__} `schedrl traces import --slurm` from sacct output (docs/slurm.md)",
        f"; MaxJobs: {len(workload)}",
        f"; MaxRecords: {len(workload)}",
        f"; UnixStartTime: {t0}",
        f"; TimeZoneString: {options.timezone}",
        f"; StartTime: {stamp(0)}",
        f"; EndTime: {stamp(last)}",
        *([f"; MaxNodes: {options.nodes}"] if options.nodes else []),
        f"; MaxProcs: {options.procs}",
        f"; Note: {records} sacct records; steps, unfinished jobs and never-started array records dropped, "
        "heterogeneous jobs merged; cleaning as reported by the import",
        f"; Note: submit is {submit}; wait is Start - submit; run is Elapsed; procs_alloc is AllocCPUS; procs_req is "
        "ReqCPUS; time_req is Timelimit; cpu_avg is TotalCPU / AllocCPUS; status 1 COMPLETED, 5 CANCELLED, 0 other ends",
        f"; Note: user, group, app, queue and partition are ids of User, Group, JobName, QOS and Partition from "
        f"{named}: no names are in this file",
    ]
    return parse_header(lines)


# --- `schedrl traces import --slurm` ----------------------------------------------------------------


@dataclass(frozen=True)
class SacctImported:
    """A sacct log written as an SWF trace (`import_sacct`): what `schedrl traces import` reports."""

    source: str
    out: Path
    sha256: str
    workload: Workload
    options: SlurmImport
    id_map: str | None
    added: Mapping[str, int]
    """kind -> names the import added to the id map."""

    def to_dict(self) -> dict:
        w = self.workload
        return {"source": self.source, "out": str(self.out), "sha256": self.sha256, "jobs": len(w),
                "machine": {"procs": w.max_procs, "nodes": self.options.nodes},
                "timezone": self.options.timezone, "id_map": self.id_map, "id_map_added": dict(self.added),
                "header": w.header.to_dict(), "report": w.report.to_dict()}

    def text(self) -> str:
        w = self.workload
        added = ", ".join(f"{n} {kind}" for kind, n in sorted(self.added.items()))
        nodes = f", {self.options.nodes} nodes" if self.options.nodes else ""
        return "\n".join([
            f"read {w.report.jobs_in} sacct records from {self.source} (times in {self.options.timezone}; "
            "example lines are lines of that file)",
            w.report.summary(),
            *([f"id map {self.id_map}: {'new names: ' + added if added else 'no new names'}"] if self.id_map else []),
            f"wrote {len(w)} jobs ({w.max_procs} CPUs{nodes}) to {self.out}, sha256 {self.sha256}",
        ])


def import_sacct(sacct: str, out: str | Path, *, salt: str | None = None, id_map: str | None = None,
                 procs: int | None = None, nodes: int | None = None, sinfo: str | None = None,
                 timezone: str | None = None, arrival: str = "submit", node_columns: bool = False,
                 cleaning: str = "default", written: Callable[[Path], object] | None = None) -> SacctImported:
    """Read `sacct --parsable2` output, replace its names by ids (a keyed hash with `salt`, or the site's `id_map`
    file, created or extended), size the machine (`procs`/`nodes`, or from `sinfo` output), clean it with the preset
    `cleaning` and write it as the SWF file `out` (then `written(out)`: a command's output claim records it).
    ValueError (one line) for options that do not go together,
    TraceError (file and line) for a log that cannot be read."""
    out = Path(out).expanduser()
    if (salt is None) == (id_map is None):
        raise ValueError("give one of --salt SECRET (ids are a keyed hash of the names) or --id-map FILE (the site's "
                         "name -> id map), so that the trace holds no names")
    if salt is not None and not salt:
        raise ValueError("--salt must not be empty: anyone could recompute ids from a list of likely names")
    machine = read_sinfo(Path(sinfo).expanduser()) if sinfo else None
    procs = procs if procs is not None else machine.procs if machine else None
    nodes = nodes if nodes is not None else machine.nodes if machine else None
    if procs is None:
        raise ValueError("give the machine size: --procs N (CPUs, and --nodes N) or --sinfo FILE")
    ids = NameIds(salt=salt.encode()) if salt is not None else NameIds.load(Path(id_map).expanduser())
    options = SlurmImport(procs=procs, nodes=nodes, timezone=timezone or local_timezone(),
                          partition_limits=machine.partition_limits if machine else {},
                          arrival=arrival, node_columns=node_columns)
    workload = read_sacct(Path(sacct).expanduser(), ids, options, CleaningRules.preset(cleaning),
                          name=out.name.split(".")[0])
    write_swf(workload, out)
    if id_map:
        try:
            ids.save(Path(id_map).expanduser())
        except TraceError:
            out.unlink(missing_ok=True)  # a failed import leaves no trace behind
            raise
    if written is not None:
        written(out)
    return SacctImported(sacct, out, content_sha256(out), workload, options, id_map, dict(ids.added))
