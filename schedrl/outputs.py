"""Where a command's output goes: written atomically, never over its own inputs or over files it did not write.

`atomic_write(path, data)` writes a temporary file beside `path` and renames it over `path`, so an interrupted
write leaves the old file or none, never half of one.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def atomic_write(path: str | Path, data: bytes | str) -> Path:
    """Write `data` (text is UTF-8) to `path` through a temporary file in the same directory, then rename it."""
    path = Path(path)
    raw = data.encode() if isinstance(data, str) else bytes(data)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass
        raise
    return path
