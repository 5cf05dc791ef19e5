"""`--backfill slurm` on the command line: `--slurm-config FILE` and the `--bf-*` options reach the simulator (the
numbers are the library's under the same `SimConfig`), and bad input is one `error:` line with exit status 2."""

from __future__ import annotations

import json

import pytest

from schedrl.heuristics import get_heuristic
from schedrl.metrics import summarize
from schedrl.sim import SimConfig, Simulator
from schedrl.workload.catalog import load_trace
from schedrl.workload.cleaning import CleaningRules
from schedrl.workload.sampling import sequence
from cli_process import cli


def test_slurm_config_and_options_reach_the_simulator(capsys, tmp_path):
    conf = tmp_path / "show-config.txt"
    conf.write_text("SchedulerType = sched/backfill\nSchedulerParameters = bf_interval=10,bf_resolution=300\n")
    status, out, _ = cli(capsys, "simulate", "--trace", "default", "--policy", "sjf", "--jobs", "200",
                         "--backfill", "slurm", "--slurm-config", str(conf), "--node-procs", "4",
                         "--bf-max-job-test", "50", "--json")
    assert status == 0
    got = json.loads(out)
    config = SimConfig.slurm(bf_interval=10, bf_resolution=300, bf_max_job_test=50, node_procs=4)
    assert {k: got["config"][k] for k in config.to_dict()} == config.to_dict()
    seq = sequence(load_trace("default", CleaningRules.preset("default")), 0, 200)
    expected = summarize(get_heuristic("sjf").run(Simulator(seq, config)))
    assert got["avg_bsld"] == pytest.approx(expected.avg_bsld)
    status, out, _ = cli(capsys, "simulate", "--trace", "default", "--jobs", "50", "--backfill", "slurm",
                         "--bf-interval", "5")
    assert status == 0 and "backfill slurm (bf_interval 5 s, bf_resolution 60 s" in out


@pytest.mark.parametrize(("args", "message"), [
    (["--backfill", "easy", "--bf-interval", "5"], "error: --bf-interval applies only to --backfill slurm"),
    (["--backfill", "slurm", "--bf-resolution", "0"], "--bf-resolution"),
    (["--backfill", "slurm", "--slurm-config", "MISSING"], "error: --slurm-config MISSING: cannot read it"),
])
def test_bad_slurm_options_are_one_line_errors(capsys, args, message):
    status, _, err = cli(capsys, "simulate", "--trace", "default", "--jobs", "20", *args)
    assert status == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("schedrl simulate: error:") and message in lines[0]


def test_a_compare_row_under_slurm_names_slurms_parameters(capsys):
    status, out, _ = cli(capsys, "compare", "--trace", "default", "--policies", "fcfs,sjf", "--backfill", "easy,slurm",
                         "--bf-interval", "10", "--sequences", "2", "--jobs", "128")
    assert status == 0
    rows = {line.split("  ")[0].strip() for line in out.splitlines()}
    assert "easy" in rows and "slurm (bf_interval 10 s, bf_resolution 60 s, bf_window 1440 min, bf_max_job_test 500)" in rows


def test_tuned_fit_on_a_trace_fits_under_a_sites_slurm(capsys, tmp_path):
    """`tuned fit --trace T --backfill slurm` takes the train commands' Slurm options (the file's values under the
    explicit ones): the rule's file records the site's semantics and its validation score is the rule's under them."""
    from schedrl.heuristics.tuned import load_rule, scores

    conf = tmp_path / "show-config.txt"
    conf.write_text("SchedulerParameters = bf_interval=60,bf_resolution=300\n")
    out = tmp_path / "rule.json"
    status, text, err = cli(capsys, "tuned", "fit", "--trace", "default", "--backfill", "slurm", "--slurm-config",
                            str(conf), "--bf-resolution", "600", "--node-procs", "4", "--budget", "1s",
                            "--window-jobs", "128", "--windows", "1", "--validation-sequences", "1", "--out", str(out))
    assert status == 0, err
    rule = load_rule(out)
    config = SimConfig.slurm(bf_interval=60, bf_resolution=600, node_procs=4)
    assert SimConfig.from_dict(rule.record["sim_config"]) == config and rule.record["backfill"] == "slurm"
    validation = rule.record["validation"]
    workload = load_trace("default", CleaningRules.preset("default"))
    kept = scores(workload, config, "bsld", validation["starts"], validation["jobs"], rule.coefficients)
    assert validation["score"] == pytest.approx(float(sum(kept) / len(kept)))


@pytest.mark.parametrize(("args", "message"), [
    (["--trace", "default", "--bf-interval", "5"], "error: --bf-interval applies only to --backfill slurm"),
    (["--trace", "default", "--backfill", "easy", "--node-procs", "4"],
     "error: --node-procs applies only to --backfill slurm"),
    (["--trace", "default", "--backfill", "slurm", "--slurm-config", "MISSING"],
     "error: --slurm-config MISSING: cannot read it"),
    (["--trace", "default", "--backfill", "slurm", "--bf-window", "0"], "error: --bf-window must be >= 1, got 0"),
    (["--scenario", "default", "--bf-interval", "5"],
     "error: --bf-interval applies only to --backfill slurm; scenario default backfills none"),
])
def test_tuned_fits_bad_slurm_options_are_one_line_errors(capsys, tmp_path, args, message):
    status, _, err = cli(capsys, "tuned", "fit", *args, "--budget", "1s", "--out", str(tmp_path / "rule.json"))
    assert status == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("schedrl tuned: error:") and message in lines[0], err
    assert not (tmp_path / "rule.json").exists()


def test_a_scenario_refuses_slurm_options_its_backfilling_would_ignore(capsys):
    status, _, err = cli(capsys, "compare", "--scenario", "default", "--policies", "f1", "--node-procs", "2")
    assert status == 2
    assert err.strip() == ("schedrl compare: error: --node-procs applies only to --backfill slurm; scenario default "
                           "backfills none")
