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
