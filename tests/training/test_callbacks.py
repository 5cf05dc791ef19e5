"""The training callback's decisions that need no training run: is Tune about to restore this trial?"""

from __future__ import annotations

from types import SimpleNamespace

from pyarrow.fs import LocalFileSystem

from schedrl.training.callbacks import restoring


def _algorithm(trial_dir) -> SimpleNamespace:
    return SimpleNamespace(_storage=SimpleNamespace(storage_filesystem=LocalFileSystem(),
                                                    trial_fs_path=str(trial_dir)))


def test_a_trial_directory_with_checkpoints_is_a_restore(tmp_path):
    # a fresh trial: its directory is missing or holds only logs, so the warm start runs
    assert not restoring(_algorithm(tmp_path / "absent"))
    (tmp_path / "progress.csv").write_text("")
    (tmp_path / "checkpoint_notes.txt").write_text("")  # a file, not a checkpoint directory
    assert not restoring(_algorithm(tmp_path))
    # a resumed or restarted trial: Tune restores its latest checkpoint right after building it
    (tmp_path / "checkpoint_000003").mkdir()
    assert restoring(_algorithm(tmp_path))


def test_outside_tune_nothing_is_restored():
    assert not restoring(SimpleNamespace(_storage=None)) and not restoring(SimpleNamespace())


def test_progress_line_says_dash_when_no_training_episode_ended():
    from schedrl.training.callbacks import TRAIN_METRIC, ProgressLine

    lines = []
    progress = ProgressLine(describe=lambda config: "", metric_of=lambda config: "bsld", single=True, log=lines.append)
    trial = SimpleNamespace(config={}, trial_id="t0")
    base = {"training_iteration": 3, "time_this_iter_s": 2.0, "time_total_s": 6.0}
    progress.on_trial_result(0, [], trial, {**base, "env_runners": {"num_env_steps_sampled": 8192}})
    progress.on_trial_result(0, [], trial, {**base, "env_runners": {"num_env_steps_sampled": 8192,
                                                                      TRAIN_METRIC: 294.156}})
    assert lines[0].startswith("iter    3 |    4096 env steps/s | train bsld          - |")
    assert "nan" not in lines[0]
    assert "train bsld     294.16 |" in lines[1]


def test_a_trial_tune_restarts_is_said_not_silent():
    from schedrl.training.callbacks import ProgressLine

    lines = []
    progress = ProgressLine(describe=lambda config: "", metric_of=lambda config: "bsld", log=lines.append,
                            max_failures=3)
    trial = SimpleNamespace(config={}, trial_id="t0", path="/runs/t0", error_file="/runs/t0/error.txt", num_failures=1)
    progress.on_trial_recover(0, [], trial)
    assert lines == ["t0 failed (failure 1 of at most 3); restarting it from its last checkpoint: see "
                     "/runs/t0/error.txt"]
