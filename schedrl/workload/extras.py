"""Trailing extra columns of an SWF file: how they are named.

Some traces carry columns after the 18 SWF fields: the DRAS authors' Theta trace (CQGym) has a
19th column, a priority flag. Every job line must have the same number of them. A file names its
extra columns in a header comment,

    ; ExtraColumns: priority partition_class

(one name per extra column, in order, separated by spaces or commas); `read_swf(...,
extra_names=[...])` names them for a file without that line. Unnamed, column 19 is `priority`
(the one convention in use) and later ones `extra_20`, `extra_21`, ...
"""

from __future__ import annotations

import re
from typing import Sequence

from schedrl.workload.fields import FIELD_NAMES, N_FIELDS

EXTRA_COLUMNS_KEY = "ExtraColumns"
"""Header key that names the extra columns (`; ExtraColumns: priority`)."""
DEFAULT_FIRST_EXTRA = "priority"
"""Name of column 19 when nothing names it (CQGym's Theta trace: DRAS's priority flag)."""
MAX_EXTRA_COLUMNS = 16
"""More trailing columns than this is not an SWF variant but another format."""

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def default_extra_names(count: int) -> tuple[str, ...]:
    """`priority`, then `extra_20`, `extra_21`, ... (named by 1-based column number)."""
    return tuple(DEFAULT_FIRST_EXTRA if k == 0 else f"extra_{N_FIELDS + k + 1}" for k in range(count))


def split_names(text: str) -> tuple[str, ...]:
    """Names from an `ExtraColumns:` header value (spaces and/or commas between them)."""
    return tuple(t for t in re.split(r"[\s,]+", text.strip()) if t)


def check_extra_names(names: Sequence[str], count: int, where: str) -> tuple[str, ...]:
    """`names` validated against `count` extra columns; ValueError names the problem and `where` they came from."""
    names = tuple(names)
    if len(names) != count:
        found = f"{count} extra column{'s' if count != 1 else ''}" if count else "no extra columns"
        raise ValueError(f"{where} names {len(names)} extra column{'s' if len(names) != 1 else ''} "
                         f"({', '.join(names) or 'none'}), but the job lines have {found}")
    for name in names:
        if not _NAME.match(name):
            raise ValueError(f"{where}: extra column name {name!r} must be letters, digits and _ (not starting with a digit)")
        if name in FIELD_NAMES:
            raise ValueError(f"{where}: extra column name {name!r} is already an SWF field name")
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"{where}: extra column name {', '.join(dupes)} is given twice")
    return names
