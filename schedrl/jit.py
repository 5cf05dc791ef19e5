"""`njit`: numba compilation with an on-disk cache that cannot go stale across modules.

numba's cache checks only the source file of the compiled function, so a function inlining code
from another module keeps stale machine code when only that other module changes (wrong results,
even crashes). Here every compiled module shares one stamp: a digest of all their sources. When it
changes, the whole cache is dropped once, before anything is loaded from it.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from numba import njit as _numba_njit

_PACKAGE = Path(__file__).resolve().parent
# every module that defines compiled functions
_COMPILED_SOURCES = ("workload/scan.py", "sim/state.py", "sim/queues.py", "sim/backfill.py", "sim/engine.py",
                     "heuristics/keys.py", "agents/rlscheduler/job_rows.py")
_STAMP = _PACKAGE / "__pycache__" / "numba_sources.sha256"


def _sources_digest() -> str:
    digest = hashlib.sha256()
    for rel in _COMPILED_SOURCES:
        path = _PACKAGE / rel
        digest.update(rel.encode())
        digest.update(path.read_bytes() if path.exists() else b"")
    return digest.hexdigest()


def _drop_stale_cache() -> None:
    digest = _sources_digest()
    try:
        if _STAMP.exists() and _STAMP.read_text() == digest:
            return
        for pattern in ("*.nbi", "*.nbc"):
            for path in _PACKAGE.rglob(f"__pycache__/{pattern}"):
                path.unlink(missing_ok=True)
        _STAMP.parent.mkdir(exist_ok=True)
        tmp = _STAMP.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(digest)
        os.replace(tmp, _STAMP)
    except OSError:
        pass  # read-only install: numba then caches per user and keys entries by source file


_drop_stale_cache()


def njit(function=None, **options):
    """`numba.njit(cache=True)`; use as `@njit`."""
    options.setdefault("cache", True)
    if function is None:
        return lambda f: _numba_njit(**options)(f)
    return _numba_njit(**options)(function)
