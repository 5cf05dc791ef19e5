"""The inspector's training options of issue 55: `--no-ppo` (the teacher's student is the policy: one iteration at
learning rate 0), `--anchor` (PPO with a KL to the frozen student), `--reject-where`, the teacher's capped fit
(`--teacher-fit-decisions`), its line per DAgger round, and the warm-start log the driver prints as it comes."""

from __future__ import annotations

import contextlib
import io
from types import SimpleNamespace

import numpy as np
import pytest

from schedrl.agents.inspector import teacher
from schedrl.cli.main import build_parser, explicit_dests
from schedrl.cli.train import build_plan


def plan_of(*argv: str):
    """The plan of `train inspector ARGV` (nothing trained)."""
    argv = ["train", "inspector", "--out", "x", *argv]
    parser = build_parser("train")
    args = parser.parse_args(argv)
    args.argv, args.explicit = argv[1:], explicit_dests(parser, argv)
    with contextlib.redirect_stderr(io.StringIO()):
        return build_plan(args).spec


def test_no_ppo_stops_after_one_iteration_on_the_smallest_batch():
    spec = plan_of("--teacher", "hindsight", "--no-ppo")
    assert spec.settings.ppo is False and spec.settings.only_iterations == 1
    assert spec.stop.iterations == 1
    assert spec.settings.train_batch_size_per_learner == 256 and spec.settings.num_epochs == 1
    assert spec.env.reject_where == "any"  # the training default, as before the option
    plain = plan_of("--teacher", "hindsight", "--iterations", "2", "--reject-where", "pays")
    assert plain.settings.ppo is True and plain.settings.only_iterations is None and plain.stop.iterations == 2
    assert plain.env.reject_where == "pays" and plain.settings.teacher_fit_decisions == 16384


def test_no_ppo_runs_ppo_at_learning_rate_0_and_the_anchor_swaps_the_learner():
    pytest.importorskip("ray")
    from schedrl.agents import get_agent
    from schedrl.agents.inspector.anchored import ANCHOR_KEY, AnchoredPPOLearner

    agent = get_agent("inspector")
    spec = plan_of("--teacher", "hindsight", "--no-ppo")
    config = agent.algorithm_config(spec.env, spec.settings)
    assert config.lr == 0.0 and config.learner_config_dict[ANCHOR_KEY] == 0.0
    spec = plan_of("--teacher", "hindsight", "--anchor", "0.5", "--iterations", "1")
    config = agent.algorithm_config(spec.env, spec.settings)
    assert config.lr == spec.settings.lr > 0 and config.learner_class is AnchoredPPOLearner
    assert config.learner_config_dict[ANCHOR_KEY] == 0.5


def test_the_anchor_is_the_kl_from_the_student():
    torch = pytest.importorskip("torch")
    pytest.importorskip("ray")
    from schedrl.agents.inspector.anchored import anchor_kl, freeze
    from schedrl.agents.masking import mask_logits

    student = torch.tensor([[0.0, 0.0], [2.0, -1.0]])
    assert torch.allclose(anchor_kl(student, student), torch.zeros(2))
    p, q = torch.tensor([0.5, 0.5]), torch.softmax(torch.tensor([1.0, 0.0]), -1)
    assert float(anchor_kl(student[:1], torch.tensor([[1.0, 0.0]]))[0]) == pytest.approx(float((p * (p / q).log()).sum()))
    # a masked rejection: probability 0 under both, nothing added
    masked = mask_logits(torch.tensor([[0.3, 5.0]]), torch.tensor([[1.0, 0.0]]))
    assert float(anchor_kl(masked, mask_logits(torch.tensor([[-2.0, 1.0]]), torch.tensor([[1.0, 0.0]])))[0]) == 0.0
    module = torch.nn.Module()
    module.pi = torch.nn.Linear(3, 2)
    frozen = freeze(module)
    assert not any(p.requires_grad for p in frozen.parameters()) and frozen is not module.pi


@pytest.mark.parametrize("argv, message", [
    (["--no-ppo"], "--no-ppo needs --teacher"),
    (["--teacher", "hindsight", "--no-ppo", "--anchor", "0.1"], "cannot go with --no-ppo"),
    (["--anchor", "0.1", "--iterations", "1"], "--anchor keeps PPO near the teacher's student: it needs --teacher"),
    (["--teacher", "hindsight", "--no-ppo", "--iterations", "3"], "--iterations 3: this run trains nothing"),
    (["--teacher", "hindsight", "--teacher-fit-decisions", "-1", "--iterations", "1"], "--teacher-fit-decisions must be >= 0, got -1"),
    (["--teacher", "hindsight", "--anchor", "-1", "--iterations", "1"], "anchor=-1.0 must be >= 0"),
])
def test_bad_training_options_are_one_error_line(argv, message, capsys, tmp_path):
    from schedrl.cli.main import main

    assert main(["train", "inspector", *argv, "--out", str(tmp_path / "run")]) == 2
    assert not (tmp_path / "run").exists()
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "error:" in err[0] and message in err[0], err


def test_the_fit_draws_uniformly_from_everything_gathered_up_to_its_cap():
    rng = np.random.default_rng(0)
    assert list(teacher.fit_sample(10, 0, rng)) == list(range(10))  # no cap
    assert list(teacher.fit_sample(10, 20, rng)) == list(range(10))  # under it
    rows = teacher.fit_sample(1000, 500, rng)
    assert len(rows) == 500 == len(set(rows.tolist())) and (np.diff(rows) > 0).all()
    # every round in proportion: the first and the last 300 decisions each hold about 30% of the draw
    assert 110 < (rows < 300).sum() < 190 and 110 < (rows >= 700).sum() < 190


def test_a_round_line_says_what_was_labelled_the_fit_and_the_time():
    row = {"round": 3, "driver": "student", "windows": 16, "decisions": 5210, "labelled_reject": 0.21,
           "taken_reject": 0.08, "vs_base": 0.052, "fitted": 16384, "gathered": 22000, "fit_loss": 0.31234,
           "fit_agreement": 0.912, "label_seconds": 31.2, "fit_seconds": 7.9, "elapsed": 150.4}
    line = teacher.round_line(row, 41)
    assert line.startswith("teacher round 3/40: 5,210 decisions labelled on 16 windows (21.0% reject; student drove, "
                           "-5.2% vs the base there")
    assert "fit on 16,384 of 22,000: loss 0.3123, agreement 91.2%" in line and line.endswith("150 s in all")


def test_the_driver_prints_the_warm_start_log_as_it_grows(tmp_path):
    from schedrl.agents.cloning import progress_log
    from schedrl.agents.trial_keys import WARM_START_LOG
    from schedrl.training.callbacks import ProgressLine

    algorithm = SimpleNamespace(_storage=SimpleNamespace(trial_fs_path=str(tmp_path / "trial")))
    log = progress_log(algorithm, echo=False)
    printed: list[str] = []
    progress = ProgressLine(describe=lambda c: "", metric_of=lambda c: "bsld", single=True, log=printed.append)
    trial = SimpleNamespace(path=str(tmp_path / "trial"), trial_id="t1")
    progress.on_step_end(0, [trial])  # no log yet
    log("teacher round 0/4: ... (−3.1% vs the base)")
    progress.on_step_end(1, [trial])
    with (tmp_path / "trial" / WARM_START_LOG).open("a") as f:
        f.write("teacher round 1/4: half a li")  # being written: printed once whole
    progress.on_step_end(2, [trial])
    with (tmp_path / "trial" / WARM_START_LOG).open("a") as f:
        f.write("ne\n")
    progress.on_step_end(3, [trial])
    progress.on_step_end(4, [trial])
    assert printed == ["teacher round 0/4: ... (−3.1% vs the base)", "teacher round 1/4: half a line"]
    progress_log(SimpleNamespace(), echo=False)("no trial directory: nothing written")  # outside Tune


@pytest.mark.integration
def test_no_ppo_checkpoints_the_teachers_student_unchanged_and_prints_each_round(tmp_path, ray_session, capsys):
    """`--no-ppo`: one iteration, whose checkpoint holds exactly the network the warm start left (its digest), and
    the teacher's line per round reaches the terminal before the iteration's."""
    import json

    from schedrl.agents.checkpoint import load_policy
    from schedrl.cli.main import main

    out = tmp_path / "run"
    code = main(["train", "inspector", "--sequence-length", "64", "--teacher", "hindsight", "--teacher-windows", "1",
                 "--teacher-rounds", "1", "--teacher-epochs", "2", "--teacher-fit-decisions", "40", "--no-ppo",
                 "--validation-sequences", "1", "--validation-jobs", "128", "--eval-sequences", "1", "--eval-jobs",
                 "128", "--trial-cpus", "1", "--out", str(out)])
    assert code == 0
    printed = capsys.readouterr().out
    assert printed.index("teacher round 0/1: ") < printed.index("teacher round 1/1: ") < printed.index("iter    1")
    summary = json.loads((out / "summary.json").read_text())
    warm = summary["warm_start"]
    rounds = list(warm["rounds"].values())  # the result's lists are numbered dicts (`callbacks.loggable`)
    assert len(rounds) == 2 and all(r["fitted"] <= 40 for r in rounds)
    checkpoint = sorted(out.glob("inspector/*/checkpoint_*"))[-1]
    assert teacher.policy_digest(load_policy(checkpoint).module) == warm["policy_digest"]


@pytest.mark.integration
def test_anchored_ppo_trains_from_the_student_with_the_kl_in_its_loss(tmp_path, ray_session):
    """`--anchor`: PPO after the teacher on the anchored learner; its iterations report the KL to the frozen student,
    which starts at 0 (the policy is the student) and the run ends with a checkpoint."""
    import json

    from schedrl.cli.main import main

    out = tmp_path / "run"
    code = main(["train", "inspector", "--sequence-length", "64", "--teacher", "hindsight", "--teacher-windows", "1",
                 "--teacher-rounds", "0", "--teacher-epochs", "2", "--reject-where", "any", "--anchor", "0.5",
                 "--iterations", "2", "--batch-size", "128", "--validation-sequences", "1", "--validation-jobs", "128",
                 "--eval-sequences", "1", "--eval-jobs", "128", "--trial-cpus", "1", "--out", str(out)])
    assert code == 0
    results = [json.loads(line) for line in next(out.glob("inspector/*/result.json")).read_text().splitlines()]
    kl = [r["learners"]["default_policy"]["anchor_kl"] for r in results]
    assert len(kl) == 2 and kl[0] >= 0.0 and all(np.isfinite(kl))
    assert sorted(out.glob("inspector/*/checkpoint_*"))
