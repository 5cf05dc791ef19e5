"""Generated SWF files through `schedrl traces info` and `schedrl simulate`: each run succeeds with a
consistent schedule and a report that accounts for every dropped job, or is refused in one line.

Files are small (at most 25 job lines) so that a hang is a bug, not a big input. Field values mix
plausible numbers with negatives, huge and non-numeric tokens; lines may lose or gain fields;
headers give, garble or omit the machine size; the bytes may get a BOM, latin-1 text, binary
garbage, CR line ends, truncation or gzip (whole or cut).
"""

from __future__ import annotations

import gzip
import json
import os
import tempfile
from pathlib import Path

import pytest
from harness import assert_clean_outcome, assert_consistent_schedule, run_cli
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from schedrl.heuristics import get_heuristic
from schedrl.metrics import summarize
from schedrl.sim import SimConfig, Simulator
from schedrl.workload.catalog import load_trace
from schedrl.workload.cleaning import CleaningRules

EXAMPLES = 120
WEIRD_TOKENS = ["abc", "nan", "inf", "-inf", "1e400", "99999999999999999999", "2.5", "-50", "+7", "0x10", "1e3",
                "--", "\u00e9", "9007199254740993"]
HEADER_LINES = ["; Version: 2.2", "; MaxProcs: 64", "; MaxNodes: 16", "; MaxProcs: 8", "; MaxProcs: lots",
                "; MaxProcs: 0", "; MaxNodes: -3", "; ExtraColumns: priority", "; Computer: fuzz \u00e9",
                "; a free comment", ";", "Version: 2.2"]
POLICIES = ["fcfs", "sjf", "f1", "wfp3", "unicep", "saf", "random"]
BACKFILLS = ["none", "easy", "conservative", "rlscheduler"]


@pytest.fixture(scope="module", autouse=True)
def private_parse_cache(tmp_path_factory):
    """Generated files stay out of the shared test cache."""
    old = os.environ.get("SCHEDRL_CACHE_DIR")
    os.environ["SCHEDRL_CACHE_DIR"] = str(tmp_path_factory.mktemp("fuzz-cache"))
    yield
    if old is None:
        del os.environ["SCHEDRL_CACHE_DIR"]
    else:
        os.environ["SCHEDRL_CACHE_DIR"] = old


def plausible_job(draw, job_id: int) -> list[str]:
    ints = st.integers
    fields = [job_id, draw(ints(-2, 5000)), draw(ints(-1, 100)), draw(ints(-2, 3000)), draw(ints(-1, 70)), -1, -1,
              draw(ints(-1, 70)), draw(ints(-2, 4000)), -1, draw(st.sampled_from([-1, 0, 1, 5])), draw(ints(-1, 5)),
              1, 1, 1, 1, -1, -1]
    return [str(f) for f in fields]


@st.composite
def swf_files(draw) -> tuple[bytes, str]:
    """(content, file suffix) of a small, possibly broken SWF file."""
    header = draw(st.lists(st.sampled_from(HEADER_LINES), max_size=5))
    n_jobs = draw(st.integers(1, 25))
    n_extra = draw(st.sampled_from([0, 0, 0, 1, 2]))
    broken = set(draw(st.lists(st.integers(0, n_jobs - 1), max_size=draw(st.sampled_from([0, 0, 0, 1, 2])))))
    lines = []
    for i in range(n_jobs):
        fields = plausible_job(draw, draw(st.sampled_from([i + 1, i + 1, 1, -4])))
        fields += [str(draw(st.integers(0, 1))) for _ in range(n_extra)]
        mutation = draw(st.sampled_from(["weird", "huge", "drop-field", "add-field"])) if i in broken else "none"
        k = draw(st.integers(0, len(fields) - 1))
        if mutation == "weird":
            fields[k] = draw(st.sampled_from(WEIRD_TOKENS))
        elif mutation == "huge":
            fields[k] = str(draw(st.sampled_from([10**12, -(10**12), 2**53, 10**15])))
        elif mutation == "drop-field":
            del fields[k]
        elif mutation == "add-field":
            fields.insert(k, "1")
        sep = draw(st.sampled_from([" ", " ", "\t", "  "]))
        lines.append(sep.join(fields))
    text = "\n".join(header + lines) + draw(st.sampled_from(["\n", "", "\n\n"]))
    encoding = draw(st.sampled_from(["utf-8"] * 12 + ["bom", "latin-1", "crlf", "cr", "utf-16", "binary", "truncate",
                                                     "gzip", "gzip-cut"]))
    data = text.encode("latin-1" if encoding == "latin-1" else "utf-8")
    if encoding == "bom":
        data = b"\xef\xbb\xbf" + data
    elif encoding == "crlf":
        data = data.replace(b"\n", b"\r\n")
    elif encoding == "cr":
        data = data.replace(b"\n", b"\r")
    elif encoding == "utf-16":
        data = text.encode("utf-16")
    elif encoding == "binary":
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.binary(min_size=1, max_size=16)) + data[at:]
    elif encoding == "truncate":
        data = data[: draw(st.integers(0, len(data)))]
    elif encoding.startswith("gzip"):
        data = gzip.compress(data, mtime=0)
        if encoding == "gzip-cut":
            data = data[: draw(st.integers(0, len(data) - 1))]
    return data, ".swf.gz" if encoding.startswith("gzip") else ".swf"


def check_info(path: Path, cleaning: str) -> dict | None:
    argv = ("traces", "info", str(path), "--json", "--cleaning", cleaning)
    status, out, err = run_cli(*argv)
    assert_clean_outcome(status, out, err, argv)
    event(f"traces info: exit {status}")
    if status != 0:
        return None
    info = json.loads(out)
    report = info["report"]
    dropped = sum(a["count"] for a in report["actions"] if a["action"] == "dropped")
    assert report["jobs_in"] - report["jobs_out"] == dropped == report["dropped"]
    assert report["jobs_out"] == info["jobs"]
    for action in report["actions"]:
        assert 0 < action["count"] <= report["jobs_in"]
        assert len(action["example_lines"]) == min(5, action["count"])
    return info


def check_simulate(path: Path, cleaning: str, policy: str, backfill: str, discipline: str, kill: bool) -> None:
    argv = ("simulate", "--trace", str(path), "--json", "--cleaning", cleaning, "--policy", policy,
            "--backfill", backfill, "--discipline", discipline) + (() if kill else ("--no-kill",))
    status, out, err = run_cli(*argv)
    assert_clean_outcome(status, out, err, argv)
    event(f"simulate: exit {status}")
    if status != 0:
        return
    # the same run through the library: its schedule must be consistent and give the CLI's numbers
    workload = load_trace(path, CleaningRules.preset(cleaning))
    config = SimConfig(backfill=backfill, discipline=discipline, kill_at_limit=kill)
    schedule = get_heuristic(policy, 0).run(Simulator(workload, config))
    assert_consistent_schedule(schedule)
    metrics = summarize(schedule)
    printed = json.loads(out)
    assert printed["jobs"] == len(workload) == metrics.jobs
    assert printed["avg_wait"] == pytest.approx(metrics.avg_wait)
    if kill:
        assert printed["killed"] == int((workload.run > workload.time_req).sum())


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(file=swf_files(), cleaning=st.sampled_from(["default", "default", "none", "rlscheduler"]),
       policy=st.sampled_from(POLICIES), backfill=st.sampled_from(BACKFILLS),
       discipline=st.sampled_from(["pick-and-wait", "list"]), kill=st.booleans())
def test_generated_swf_files_are_read_and_simulated_or_refused_in_one_line(file, cleaning, policy, backfill,
                                                                         discipline, kill):
    data, suffix = file
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"fuzz{suffix}"
        path.write_bytes(data)
        check_info(path, cleaning)
        check_simulate(path, cleaning, policy, backfill, discipline, kill)
