"""The job table the discrete-time cluster samples from: RLSchert's VASP jobs, or a seeded synthetic stand-in.

The VASP file (`../shared/data/rlschert-vasp-jobs.csv.gz`, see that folder's SOURCES.md) has one row
per job: `id`, `real` (true run time in 5-minute steps), `prerun_prediction` (the pre-run estimate,
the paper's len_param), `cores`, and `running_predictions`: the predictor's re-estimates of the
total run time, one per elapsed step while the job runs (space-separated; value k is the estimate
after k + 1 steps). Times are rounded to whole steps: the source stores them as float32, so a
10-step job reads 10.000003814697266.
"""

from __future__ import annotations

import csv
import gzip
import io
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

VASP_FILENAME = "rlschert-vasp-jobs.csv.gz"
COLUMNS = ("id", "real", "prerun_prediction", "cores", "running_predictions")
# RLSchert §4.1.1: "the job's requested resource was divided by 10"; rounded up so a 1-core job needs a unit
CORES_PER_UNIT = 10


class JobDataError(ValueError):
    """A job file that cannot be read; the message names the file and the 1-based line."""


def shared_data_dir() -> Path:
    """`../shared/data` beside the repository (or `$SCHEDRL_SHARED_DIR/data`, a relative one taken relative to where
    the process started: `schedrl.paths`), where the VASP job file lives (absent in a plain clone)."""
    from schedrl import paths

    shared = paths.env_path(paths.SHARED_DIR)
    return (shared or Path(__file__).resolve().parents[2].parent / "shared") / "data"


def find_vasp_jobs() -> Path | None:
    """The VASP job file in the first directory of `$SCHEDRL_DATA_PATH` that holds one, else in `shared_data_dir()`;
    None when none does."""
    from schedrl import paths

    for directory in [*paths.env_paths(paths.DATA_PATH), shared_data_dir()]:
        if (directory / VASP_FILENAME).is_file():
            return directory / VASP_FILENAME
    return None


def vasp_jobs_path() -> Path:
    """The VASP job file (`find_vasp_jobs`); FileNotFoundError saying where it was looked for."""
    path = find_vasp_jobs()
    if path is None:
        raise FileNotFoundError(f"{shared_data_dir() / VASP_FILENAME} not found (nor in $SCHEDRL_DATA_PATH): "
                                "RLSchert's VASP jobs live in ../shared/data beside the repository (see SOURCES.md "
                                "there); pass --jobs FILE or use synthetic jobs")
    return path


def _readonly(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


@dataclass(frozen=True)
class JobTable:
    """Columnar, immutable job data: one entry per job, times in steps (arrays are read-only)."""

    id: np.ndarray
    """Job id from the source (int64)."""
    real: np.ndarray
    """True run time, steps, >= 1 (int32)."""
    prerun: np.ndarray
    """Run time predicted before the job starts, steps, >= 1 (RLSchert's len_param; int32)."""
    cores: np.ndarray
    """Cores requested (int32)."""
    units: np.ndarray
    """Resource units requested: ceil(cores / 10) (RLSchert §4.1.1; int32)."""
    pred_values: np.ndarray
    """Running re-estimates of the total run time of every job, concatenated, steps, >= 1 (int32)."""
    pred_offsets: np.ndarray
    """Job i's re-estimates are pred_values[pred_offsets[i]:pred_offsets[i + 1]] (int64, len(self) + 1 entries)."""
    source: str = ""
    """Where the jobs came from (a path, or a description of the generator)."""

    def __post_init__(self) -> None:
        n = len(self.id)
        for name in ("real", "prerun", "cores", "units"):
            if len(getattr(self, name)) != n:
                raise ValueError(f"JobTable.{name} has {len(getattr(self, name))} entries, id has {n}")
        if len(self.pred_offsets) != n + 1 or self.pred_offsets[-1] != len(self.pred_values):
            raise ValueError("JobTable.pred_offsets must have len(id) + 1 entries ending at len(pred_values)")
        for name in ("id", "real", "prerun", "cores", "units", "pred_values", "pred_offsets"):
            _readonly(getattr(self, name))

    def __len__(self) -> int:
        return len(self.id)

    def predictions(self, i: int) -> np.ndarray:
        """Job i's running re-estimates of its total run time (value k: after k + 1 elapsed steps)."""
        return self.pred_values[self.pred_offsets[i]:self.pred_offsets[i + 1]]


def _steps(value: float) -> int:
    return int(np.floor(value + 0.5))


def _open_text(path: Path):
    with open(path, "rb") as f:
        magic = f.read(2)
    if magic == b"\x1f\x8b":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", newline="")
    return open(path, encoding="utf-8", newline="")


def _lines(path: Path):
    """The file's lines; a corrupt gzip stream or bad encoding becomes a JobDataError at the line it hit."""
    line = 0
    try:
        with _open_text(path) as f:
            for text in f:
                line += 1
                yield line, text
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as exc:
        raise JobDataError(f"{path}:{line + 1}: unreadable ({type(exc).__name__}: {exc}); "
                           "is the file truncated or corrupt?") from None


def _number(path: Path, line: int, column: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise JobDataError(f"{path}:{line}: {column} is not a number: {text!r}") from None
    if not np.isfinite(value):
        raise JobDataError(f"{path}:{line}: {column} must be finite, got {text!r}")
    return value


def load_jobs(path: str | Path) -> JobTable:
    """Read a VASP job CSV (gzip or plain, detected from its content) into a JobTable."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such job file")
    ids, real, prerun, cores = [], [], [], []
    values: list[int] = []
    offsets = [0]
    lines = _lines(path)
    header_line, header_text = next(lines, (1, ""))
    header = next(csv.reader([header_text]), [])
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        raise JobDataError(f"{path}:{header_line}: header lacks column(s) {', '.join(missing)}; "
                           f"expected {','.join(COLUMNS)}")
    where = [header.index(c) for c in COLUMNS]
    for line, text in lines:
        if not text.strip():
            continue
        row = next(csv.reader([text]))
        if len(row) != len(header):
            raise JobDataError(f"{path}:{line}: {len(row)} fields, the header has {len(header)}")
        job_id, r, p, c, preds = (row[i] for i in where)
        try:
            ids.append(int(job_id))
        except ValueError:
            raise JobDataError(f"{path}:{line}: id is not an integer: {job_id!r}") from None
        r_v = _number(path, line, "real", r)
        p_v = _number(path, line, "prerun_prediction", p)
        c_v = _number(path, line, "cores", c)
        if r_v < 0.5:
            raise JobDataError(f"{path}:{line}: real must be at least one step, got {r}")
        if p_v < 0.5:
            raise JobDataError(f"{path}:{line}: prerun_prediction must be at least one step, got {p}")
        if c_v < 1 or c_v != int(c_v):
            raise JobDataError(f"{path}:{line}: cores must be a positive integer, got {c}")
        for token in preds.split():
            v = _number(path, line, "running_predictions", token)
            if v < 0:
                raise JobDataError(f"{path}:{line}: running_predictions holds a negative estimate {token}")
            values.append(max(_steps(v), 1))
        offsets.append(len(values))
        real.append(_steps(r_v))
        prerun.append(_steps(p_v))
        cores.append(int(c_v))
    if not ids:
        raise JobDataError(f"{path}:{header_line + 1}: no jobs after the header")
    cores_a = np.array(cores, dtype=np.int32)
    return JobTable(id=np.array(ids, dtype=np.int64), real=np.array(real, dtype=np.int32),
                    prerun=np.array(prerun, dtype=np.int32), cores=cores_a,
                    units=(-(-cores_a // CORES_PER_UNIT)).astype(np.int32),
                    pred_values=np.array(values, dtype=np.int32), pred_offsets=np.array(offsets, dtype=np.int64),
                    source=str(path))


def synthetic_jobs(n: int = 1000, seed: int = 0) -> JobTable:
    """A seeded VASP-like table for tests and demos when the real file is absent.

    Shaped after SOURCES.md's summary of the real data, not fitted to it: 70 % short jobs of 1-12
    steps, 30 % long ones of 12-59 (RLSchert §4.1.1; mean about 15 steps as in the real data);
    mostly 3 units (21-30 cores); a pre-run
    prediction off by up to ~40 %; re-estimates moving from the pre-run value to the truth as the job runs.
    """
    if n < 1:
        raise ValueError(f"synthetic_jobs needs n >= 1, got {n}")
    rng = np.random.default_rng(seed)
    short = rng.random(n) < 0.7
    real = np.where(short, rng.integers(1, 13, n), rng.integers(12, 60, n)).astype(np.int32)
    cores = rng.choice([6, 16, 24, 48, 64, 96], size=n, p=[0.03, 0.02, 0.8, 0.1, 0.03, 0.02]).astype(np.int32)
    prerun = np.maximum(1, np.rint(real * rng.uniform(0.6, 1.4, n))).astype(np.int32)
    values, offsets = [], [0]
    for r, p in zip(real.tolist(), prerun.tolist()):
        elapsed = np.arange(1, r)
        progress = elapsed / r
        values.extend(np.maximum(1, np.rint(p + (r - p) * progress)).astype(np.int64).tolist())
        offsets.append(len(values))
    return JobTable(id=np.arange(1, n + 1, dtype=np.int64), real=real, prerun=prerun, cores=cores,
                    units=(-(-cores // CORES_PER_UNIT)).astype(np.int32),
                    pred_values=np.array(values, dtype=np.int32), pred_offsets=np.array(offsets, dtype=np.int64),
                    source=f"synthetic_jobs(n={n}, seed={seed})")
