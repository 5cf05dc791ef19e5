"""`Workload`: an immutable, columnar set of jobs plus the machine they ran on."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Mapping

import numpy as np

from schedrl.workload.fields import FIELD_NAMES, SWF_FIELDS
from schedrl.workload.header import SwfHeader

if TYPE_CHECKING:
    import pandas as pd

    from schedrl.workload.cleaning import CleaningReport


def _frozen(array: np.ndarray) -> np.ndarray:
    view = array.view()
    view.flags.writeable = False
    return view


@dataclass(frozen=True, eq=False)
class Workload:
    """Jobs as one read-only numpy array per SWF field, plus the machine size.

    Slicing (`wl[100:1124]`) gives a sequence that shares memory with the parent; fancy indexing
    (`wl[np.array([...])]`) copies. Columns are read-only: derive new workloads with
    `with_columns` / `with_resources` instead of editing arrays in place.
    """

    columns: Mapping[str, np.ndarray]
    """The 18 SWF fields by name (see `schedrl.workload.fields.SWF_FIELDS`)."""
    max_procs: int
    """Processors in the machine (header MaxProcs, else MaxNodes, else inferred)."""
    max_nodes: int
    """Nodes in the machine (header MaxNodes, else MaxProcs)."""
    name: str = "workload"
    """Short name used in tables and logs."""
    header: SwfHeader = field(default_factory=SwfHeader)
    """The parsed SWF header."""
    resources: Mapping[str, np.ndarray] = field(default_factory=dict)
    """Extra per-job resource requests beyond processors (e.g. `bb` burst buffer GB, `power` W)."""
    capacity: Mapping[str, float] = field(default_factory=dict)
    """Machine capacity of each extra resource in `resources`."""
    report: "CleaningReport | None" = None
    """What cleaning dropped or repaired to produce this workload (None if not cleaned)."""
    sha256: str | None = None
    """sha256 of the uncompressed source file, for reproducibility records."""
    extras: Mapping[str, np.ndarray] = field(default_factory=dict)
    """Trailing columns after the 18 SWF fields, by name (e.g. `priority`, DRAS's flag in CQGym's Theta trace)."""

    def __post_init__(self) -> None:
        missing = [n for n in FIELD_NAMES if n not in self.columns]
        if missing:
            raise ValueError(f"Workload is missing SWF columns: {', '.join(missing)}")
        n = len(self.columns["job_id"])
        cols = {}
        for f in SWF_FIELDS:
            col = np.asarray(self.columns[f.name], dtype=f.dtype)
            if col.shape != (n,):
                raise ValueError(f"column {f.name!r} has shape {col.shape}, expected ({n},)")
            cols[f.name] = _frozen(col)
        res = {}
        for key, col in self.resources.items():
            col = np.asarray(col, dtype=np.float64)
            if col.shape != (n,):
                raise ValueError(f"resource {key!r} has shape {col.shape}, expected ({n},)")
            if key not in self.capacity:
                raise ValueError(f"resource {key!r} has no machine capacity in `capacity`")
            res[key] = _frozen(col)
        extras = {}
        for key, col in self.extras.items():
            col = np.asarray(col, dtype=np.float64)
            if col.shape != (n,):
                raise ValueError(f"extra column {key!r} has shape {col.shape}, expected ({n},)")
            if key in cols or key in res:
                raise ValueError(f"extra column {key!r} has the name of an SWF field or a resource")
            extras[key] = _frozen(col)
        if self.max_procs <= 0 or self.max_nodes <= 0:
            raise ValueError(f"machine size must be positive, got {self.max_procs} procs / {self.max_nodes} nodes")
        object.__setattr__(self, "columns", MappingProxyType(cols))
        object.__setattr__(self, "resources", MappingProxyType(res))
        object.__setattr__(self, "capacity", MappingProxyType(dict(self.capacity)))
        object.__setattr__(self, "extras", MappingProxyType(extras))

    def __len__(self) -> int:
        return len(self.columns["job_id"])

    def __getitem__(self, index) -> "Workload":
        if isinstance(index, (int, np.integer)):
            raise TypeError("index a Workload with a slice or an index array; use to_pandas().iloc for one job")
        return replace(
            self,
            columns={k: v[index] for k, v in self.columns.items()},
            resources={k: v[index] for k, v in self.resources.items()},
            extras={k: v[index] for k, v in self.extras.items()},
        )

    def __repr__(self) -> str:
        extra = f", resources={sorted(self.resources)}" if self.resources else ""
        extra += f", extras={list(self.extras)}" if self.extras else ""
        return f"Workload({self.name!r}, jobs={len(self)}, procs={self.max_procs}, nodes={self.max_nodes}{extra})"

    @property
    def procs_per_node(self) -> int:
        """Processors per node (1 when the header gives only one of MaxNodes/MaxProcs)."""
        return max(1, self.max_procs // self.max_nodes)

    def with_columns(self, **columns: np.ndarray) -> "Workload":
        """A copy with some SWF columns replaced (e.g. re-timed `submit`)."""
        unknown = set(columns) - set(FIELD_NAMES)
        if unknown:
            raise ValueError(f"unknown SWF columns: {', '.join(sorted(unknown))}")
        return replace(self, columns={**self.columns, **columns})

    def with_resources(self, resources: Mapping[str, np.ndarray], capacity: Mapping[str, float]) -> "Workload":
        """A copy with extra resource columns added (or replaced) and their machine capacity."""
        return replace(self, resources={**self.resources, **resources}, capacity={**self.capacity, **capacity})

    def with_extras(self, **extras: np.ndarray) -> "Workload":
        """A copy with extra columns added or replaced (written back by `write_swf` after the 18 fields)."""
        return replace(self, extras={**self.extras, **extras})

    def to_pandas(self) -> "pd.DataFrame":
        """One row per job, one column per SWF field, extra resource and extra column."""
        import pandas as pd

        data = {k: np.asarray(v) for k, v in self.columns.items()}
        data.update({k: np.asarray(v) for k, v in self.resources.items()})
        data.update({k: np.asarray(v) for k, v in self.extras.items()})
        return pd.DataFrame(data)


def _column_property(name: str, doc: str) -> property:
    return property(lambda self: self.columns[name], doc=doc)


for _f in SWF_FIELDS:
    setattr(Workload, _f.name, _column_property(_f.name, _f.description))
del _f
