"""`schedrl inspector harm`: the do-no-harm checks of issue 55 on a real trace (NASA-iPSC, small windows): a network
that never rejects is its base rule and passes; one that rejects wherever it may (the mask of runs before issue 55)
makes a lightly loaded machine's jobs wait and misses; the same network under `reject_where="pays"` is its base rule
wherever no two jobs compete. Bad input is one error line."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from cli_process import run_cli
from shared_traces import shared_trace

from schedrl.agents.inspector.config import InspectorEnvConfig
from schedrl.agents.inspector.policy import InspectorPolicy
from schedrl.eval.inspector_harm import harm, misses, real_traces, to_markdown
from schedrl.sim import SimConfig


def network(accept: float, reject: float, reject_where: str = "any") -> InspectorPolicy:
    """An inspector whose network's logits are these whatever it sees, as a trained policy with a run record."""
    import torch

    module = torch.nn.Module()
    module.pi = torch.nn.Linear(21, 2)
    with torch.no_grad():
        module.pi.weight.zero_()
        module.pi.bias.copy_(torch.tensor([accept, reject]))
    cfg = InspectorEnvConfig(trace="default", norm={"time_scale": 10_000.0}, reject_where=reject_where).to_dict()
    policy = InspectorPolicy(module, cfg)
    policy.record = SimpleNamespace(agent="inspector", env_config=cfg, sim_config=SimConfig(), settings={})
    return policy


def check(policy) -> dict:
    shared_trace("NASA-iPSC-1993-3.1-cln.swf.gz")
    return harm(policy, ["NASA-iPSC"], ["rlscheduler"], windows=6, jobs=256, seed=97)


def test_the_base_rule_itself_does_no_harm():
    r = check(network(10.0, 0.0))
    (row,) = r["rows"]
    assert row["means"]["policy"] == row["means"]["f1"] and row["light"]["windows"] >= 1
    assert row["light"]["difference_pct"] == 0.0 and row["users"]["compared"] > 0
    assert r["passes"] == (row["best"] == "f1" or row["paired"]["ci95_pct"][1] <= 10.0)
    assert "| NASA-iPSC | rlscheduler |" in to_markdown(r)


def test_rejecting_wherever_it_may_harms_a_lightly_loaded_machine_and_the_pays_mask_prevents_it():
    (row,) = check(network(0.0, 10.0, "any"))["rows"]
    assert row["light"]["difference_pct"] > 1.0 and "light" in misses(row)
    (masked,) = check(network(0.0, 10.0, "pays"))["rows"]
    assert masked["light"]["difference_pct"] <= row["light"]["difference_pct"]
    assert abs(masked["light"]["difference_pct"]) < abs(row["light"]["difference_pct"])


def test_the_traces_default_to_the_real_ones_on_disk_less_the_training_trace():
    shared_trace("NASA-iPSC-1993-3.1-cln.swf.gz")
    names = real_traces({"sdsc-sp2"})
    assert "NASA-iPSC" in names and "SDSC-SP2" not in names
    assert not any(n.lower().startswith("lublin") or n == "default" for n in names)


@pytest.mark.parametrize("argv, message", [
    (["zoo:inspector-lublin1-s0", "--presets", "nosuch"], "--presets must name presets among"),
    (["zoo:inspector-lublin1-s0", "--windows", "0"], "--windows must be >= 1"),
    (["zoo:inspector-lublin1-s0", "--traces", ","], "--traces names no trace"),
    (["zoo:inspector-lublin1-s0", "--traces", "lublin_256"], "which the policy trained on"),
    (["fcfs"], "is not a trained policy of the event simulator"),
    (["checkpoint:/no/such/run"], "error:"),
])
def test_bad_input_is_one_error_line(argv, message):
    done = run_cli("inspector", "harm", *argv)
    err = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(err) == 1 and "error:" in err[0] and message in err[0], done.stderr


def test_groups_are_corrected_for_their_number_and_only_worse_counts():
    from schedrl.eval.inspector_harm import benjamini_hochberg, check_groups, paired_p

    assert benjamini_hochberg([0.01, 0.04, 0.03, 0.5]) == pytest.approx([0.04, 0.16 / 3, 0.16 / 3, 0.5])
    assert paired_p(np.zeros(5), 5) == 1.0
    # equal differences have no spread for a t test: the sign test's p, and no evidence at all from one independent
    # window (two overlapping windows hold the same jobs: the harm check once flagged such users at p = 0)
    assert paired_p(np.full(5, 2.0), 5) == pytest.approx(2 * 0.5 ** 5) and paired_p(np.full(8, 2.0), 8) < 0.01
    assert paired_p(np.full(2, 0.5), 1) == 1.0 and paired_p(np.array([0.5, 0.7]), 1) == 1.0
    # ten windows; user 1 always 10% worse under the policy, user 2 always better, user 3 noise around 0
    rng = np.random.default_rng(0)
    windows = [{1: (110.0 + rng.normal(0, 1), 100.0), 2: (90.0, 100.0), 3: (100.0 + rng.normal(0, 5), 100.0)}
               for _ in range(10)]
    out = check_groups(windows, "bsld", lambda m: m)
    assert out["compared"] == 3 and [w["group"] for w in out["worse"]] == [1]
    assert out["worse"][0]["difference_pct"] == pytest.approx(10.0, abs=1.0)
    # one independent window (the windows overlap): no evidence, even where every window's difference is the same
    assert check_groups(windows, "bsld", lambda m: 1)["worse"] == []
    same = [{1: (101.0, 100.0)}, {1: (101.0, 100.0)}]
    assert check_groups(same, "bsld", lambda m: 1)["worse"] == [] and check_groups(same, "bsld", lambda m: m)["worse"] == []


def test_a_row_with_too_few_independent_windows_is_undecided_not_passed_or_failed():
    """A small trace whose drawn windows overlap (2 independent of 20) gives an interval that bounds nothing: the
    row is undecided on (b), neither a pass nor a miss of it, and the policy's verdict rests on the other rows."""
    from schedrl.eval.inspector_harm import misses, to_markdown, verdict

    def row(trace, independent, upper, undecided):
        return {"trace": trace, "preset": "standard", "best": "f1", "independent": independent, "undecided": undecided,
                "paired": {"difference_pct": 0.2, "ci95_pct": [-99.9, upper], "better": 13, "equal": 0, "worse": 7},
                "light": {"ok": True, "difference_pct": None, "windows": 0}, "upper_pct": upper, "base_upper_pct": 0.0,
                "bound_ok": not undecided and upper <= 10.0, "users": {"worse": [], "compared": 9},
                "classes": {"worse": [], "compared": 2}, "groups_ok": True,
                "starve": {"max_wait_mean_ratio": 1.0, "max_wait_max_ratio": 1.0, "utilisation_change": 0.0, "ok": True},
                "passes": not undecided and upper <= 10.0}
    small, big = row("theta-cqgym", 2, 137523.1, True), row("SDSC-SP2", 20, -5.0, False)
    assert misses(small) == [] and verdict(small) == "undecided (2 independent windows)" and verdict(big) == "passes"
    text = to_markdown({"policy": "p", "agent": "inspector", "trained_on": ["x"], "windows": 20, "jobs": 1024,
                        "seed": 97, "presets": ["standard"], "rows": [small, big], "passes": True, "seconds": 1.0})
    assert "1 of 2 trace x semantics rows pass all four checks (1 undecided: under 6 independent windows" in text


def test_the_site_base_is_chosen_on_the_traces_history_and_the_checks_run_on_the_rest():
    """`--site-base 0.4`: the base is the heuristic best on windows of the trace's first 40% (the site's log), the
    policy runs over it, and the checks' windows come from the other 60% only."""
    shared_trace("NASA-iPSC-1993-3.1-cln.swf.gz")
    policy = network(10.0, 0.0)  # never rejects: the policy is its base, whichever that is
    r = harm(policy, ["NASA-iPSC"], ["rlscheduler"], windows=6, jobs=256, seed=97, history=0.4)
    (row,) = r["rows"]
    site = row["site_base"]
    assert row["base"] == site["chosen"] and site["chosen"] == min(site["means"], key=site["means"].get)
    assert row["means"]["policy"] == row["means"][site["chosen"]]
    assert site["history_jobs"] > 0 and site["windows"] == 6
    assert "(the site's log)" in to_markdown(r) and f"(over {site['chosen'].upper()})" in to_markdown(r)
    with pytest.raises(ValueError, match="--site-base must be a share"):
        harm(policy, ["NASA-iPSC"], ["rlscheduler"], windows=2, jobs=64, history=1.5)
