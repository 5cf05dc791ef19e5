"""Random argument combinations of `schedrl simulate` and `schedrl compare` on the embedded trace:
each run succeeds or is refused with one `error:` line, never a traceback or a hang.

Values mix valid choices with the ones people get wrong: negative and huge counts, starts past the
end, empty and stray-comma lists, unknown names. Sizes stay small (at most a few hundred jobs per
sequence and a few sequences) so that every run is quick unless something is wrong.
(`checkpoint:` policies are left to the evaluate tests: they load torch.)
"""

from __future__ import annotations

import json

from harness import assert_clean_outcome, run_cli
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

EXAMPLES = 120



def mostly(valid: list[str], wrong: list[str]) -> st.SearchStrategy[str]:
    """A valid value three times in four, else one people get wrong."""
    return st.one_of(st.sampled_from(valid), st.sampled_from(valid), st.sampled_from(valid), st.sampled_from(wrong))


POLICY = mostly(["fcfs", "sjf", "f1", "wfp3", "unicep", "saf", "ljf", "smallest", "random", "tetris", "FCFS"],
                ["bogus", "", " ", "fcfs,", ",sjf", "fcfs,,sjf"])
BACKFILL = mostly(["none", "easy", "conservative", "rlscheduler"], ["bogus", "easy,", ""])
JOBS = mostly(["1", "3", "17", "64", "200"], ["-5", "-1", "0", "2001", "100000", "1e3", "x", ""])
START = mostly(["0", "1", "100", "1000"], ["-1", "1999", "2000", "5000", "x"])
OPTIONAL = {
    "--backfill": BACKFILL,
    "--discipline": mostly(["pick-and-wait", "list"], ["bogus"]),
    "--event-order": st.sampled_from(["standard", "rlscheduler"]),
    "--allocation": st.sampled_from(["procs", "nodes"]),
    "--window": mostly(["0", "1", "8", "5000"], ["-1", "x"]),
    "--preset": mostly(["rlscheduler"], ["bogus"]),
    "--cleaning": mostly(["default", "none", "rlscheduler"], ["bogus"]),
    "--seed": mostly(["0", "7", "-3"], ["x"]),
    "--trace": mostly(["default"], ["lublin_256x", "/nonexistent/file.swf", "/"]),
}
FLAGS = ["--no-kill", "--json"]


@st.composite
def simulate_args(draw) -> list[str]:
    args = ["simulate", "--trace", "default", "--policy", draw(POLICY), "--jobs", draw(JOBS)]
    if draw(st.booleans()):
        args += ["--start", draw(START)]
    return args + draw(options())


@st.composite
def compare_args(draw) -> list[str]:
    args = ["compare", "--trace", "default", "--no-progress", "--policies",
            ",".join(draw(st.lists(POLICY, min_size=1, max_size=3))),
            "--jobs", draw(st.one_of(JOBS, st.sampled_from(["1999", "2000"])))]
    if draw(st.booleans()):
        args += ["--starts", draw(mostly(["0", "0,0", "0,100", "3,1,2"], ["0,5,", "1,x", "-1", "1999", ""]))]
    else:
        args += ["--sequences", draw(mostly(["1", "2", "3"], ["-1", "0", "100000", "x"]))]
    args += ["--metric", draw(mostly(["bsld", "wait", "utilization", "fairness"], ["speed"]))]
    return args + draw(options())


@st.composite
def options(draw) -> list[str]:
    chosen = draw(st.lists(st.sampled_from(sorted(OPTIONAL)), max_size=4, unique=True))
    out = []
    for name in chosen:
        out += [name, draw(OPTIONAL[name])]
    return out + draw(st.lists(st.sampled_from(FLAGS), max_size=2, unique=True))


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(args=st.one_of(simulate_args(), compare_args()))
def test_random_simulate_and_compare_arguments_run_or_are_refused_in_one_line(args):
    status, out, err = run_cli(*args)
    assert_clean_outcome(status, out, err, args)
    event(f"{args[0]}: exit {status}")
    if status == 0 and "--json" in args:
        result = json.loads(out)
        assert result["jobs"] if args[0] == "simulate" else result["starts"]
