"""On-disk cache of parsed SWF files, keyed by the sha256 of the uncompressed content.

The cache holds the raw parse (before cleaning), so changing cleaning rules never needs a
re-parse. Location: `$SCHEDRL_CACHE_DIR` (a relative one taken relative to where the process started:
`schedrl.paths`), else `$XDG_CACHE_HOME/schedrl` (where absolute: the XDG specification has a relative one ignored),
else `~/.cache/schedrl`.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np

from schedrl import paths

_FORMAT = "v1"


def cache_dir() -> Path:
    """The user cache directory of schedrl (created on demand by writers)."""
    own = paths.env_path(paths.CACHE_DIR)
    if own is not None:
        return own
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if os.path.isabs(xdg) else Path(os.path.expanduser("~")) / ".cache"
    return base / "schedrl"


def _entry(sha256: str) -> Path:
    return cache_dir() / "parsed" / f"{sha256}.{_FORMAT}.npz"


def load_parsed(sha256: str) -> tuple[np.ndarray, np.ndarray, list[str]] | None:
    """(values, line numbers, header comment lines) for a content hash, or None if not cached."""
    path = _entry(sha256)
    if not path.exists():
        return None
    try:
        with np.load(path, allow_pickle=False) as z:
            return z["values"], z["lines"], [str(s) for s in z["comments"]]
    except (OSError, ValueError, KeyError):
        return None  # a corrupt or partial entry is re-parsed and overwritten


def save_parsed(sha256: str, values: np.ndarray, lines: np.ndarray, comments: list[str]) -> None:
    """Store a parse atomically; silently skipped when the cache directory is not writable."""
    path = _entry(sha256)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp.npz")
        with os.fdopen(fd, "wb") as fh:
            np.savez(fh, values=values, lines=lines, comments=np.array(comments, dtype=str))
        os.replace(tmp, path)
    except OSError:
        pass
