"""What `schedrl traces list` and `schedrl traces info` show, callable from Python: the catalog with where each trace
is (`catalog_rows`, `catalog_table`), a trace's header, machine, cleaning report and statistics (`TraceInfo`:
`to_dict()` for JSON, `text()` for people), and the statistics alone (`trace_statistics`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from schedrl.workload.augment import THETA_NODES
from schedrl.workload.catalog import CatalogEntry, find_entry, load_catalog, locate, resolve_trace
from schedrl.workload.workload import Workload


def catalog_rows() -> list[dict]:
    """Every catalog entry, with `path` (None when it is not on this machine), `available` and `get` (how to get it)."""
    rows = []
    for entry in load_catalog().values():
        path = locate(entry)
        rows.append({**asdict(entry), "path": str(path) if path else None,
                     "available": path is not None, "get": None if path else entry.how_to_get()})
    return rows


def catalog_table(rows: list[dict]) -> str:
    """`catalog_rows()` as the aligned table `schedrl traces list` prints."""
    header = ("name", "jobs", "procs", "nodes", "sha256", "where")
    table = [header]
    for r in rows:
        table.append((r["name"], _num(r["jobs"]), _num(r["procs"]), _num(r["nodes"]),
                      r["sha256"][:12] or "unknown", r["path"] or f"not local: {r['get']}"))
    widths = [max(len(row[i]) for row in table) for i in range(len(header) - 1)]
    lines = []
    for row in table:
        cells = [c.rjust(w) if i in (1, 2, 3) else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))]
        lines.append("  ".join(cells + [row[-1]]))
    return "\n".join(lines)


def trace_statistics(workload: Workload) -> dict[str, float | int | None]:
    """Summary statistics of a workload; each over the jobs where that field is known (>= 0)."""
    submit, run, req = workload.submit, workload.run, workload.time_req
    procs = np.where(workload.procs_req > 0, workload.procs_req, workload.procs_alloc)
    n = len(workload)

    def mean(x):
        return float(np.mean(x)) if x.size else None

    def median(x):
        return float(np.median(x)) if x.size else None

    known_run, known_req, known_procs = run[run >= 0], req[req > 0], procs[procs > 0]
    both = (run >= 0) & (req > 0)
    return {
        "jobs": n,
        "span_s": int(submit.max() - submit.min()) if n else None,
        "mean_interarrival_s": float(submit.max() - submit.min()) / (n - 1) if n > 1 else None,
        "mean_runtime_s": mean(known_run),
        "median_runtime_s": median(known_run),
        "mean_requested_s": mean(known_req),
        "median_requested_s": median(known_req),
        "mean_size_procs": mean(known_procs),
        "median_size_procs": median(known_procs),
        "estimate_accuracy": mean(run[both] / req[both]),
    }


def column_summary(column: np.ndarray) -> dict:
    """What an extra column (or a resource's requests) holds, over the kept jobs."""
    if not column.size:
        return {"min": 0.0, "max": 0.0, "distinct": 0, "nonzero": 0}
    return {"min": float(column.min()), "max": float(column.max()), "distinct": int(np.unique(column).size),
            "nonzero": int(np.count_nonzero(column))}


@dataclass(frozen=True)
class TraceInfo:
    """A loaded trace described: where it came from, its header, machine, cleaning report and statistics."""

    trace: str
    """The name or path the trace was asked for by."""
    path: Path
    workload: Workload
    entry: CatalogEntry | None
    """Its catalog entry, by name or (for a file) by checksum; None when the catalog has none."""
    cleaning: str
    augment: str | None = None
    augment_seed: int = 0

    @classmethod
    def of(cls, trace: str, workload: Workload, cleaning: str, augment: str | None = None,
           augment_seed: int = 0) -> TraceInfo:
        """The info of `workload`, loaded from `trace` (a catalog name or an SWF file) with the preset `cleaning`."""
        by_name = find_entry(str(trace)) if not Path(trace).expanduser().is_file() else None
        entry = by_name or next((e for e in load_catalog().values() if e.sha256 == workload.sha256), None)
        return cls(str(trace), resolve_trace(trace), workload, entry, cleaning, augment, augment_seed)

    @property
    def checksum_verified(self) -> bool:
        return bool(self.entry and self.entry.sha256 and self.entry.sha256 == self.workload.sha256)

    def to_dict(self) -> dict:
        w = self.workload
        return {
            "name": self.entry.name if self.entry else w.name,
            "path": str(self.path),
            "sha256": w.sha256,
            "catalog": self.entry.name if self.entry else None,
            "checksum_verified": self.checksum_verified,
            "header": w.header.to_dict(),
            "jobs_read": w.report.jobs_in,
            "jobs": len(w),
            "machine": {"procs": w.max_procs, "nodes": w.max_nodes},
            "extras": {name: column_summary(col) for name, col in w.extras.items()},
            "resources": {name: {"capacity": float(w.capacity[name]), **column_summary(col)}
                          for name, col in w.resources.items()},
            "augment": self.augment,
            "cleaning": self.cleaning,
            "report": w.report.to_dict(),
            "stats": trace_statistics(w),
        }

    def text(self) -> str:
        info, w = self.to_dict(), self.workload
        report, header, stats = w.report, w.header, info["stats"]
        if self.entry is None:
            catalog = "not in the catalog"
        else:
            catalog = self.entry.name + (" (checksum verified)" if self.checksum_verified else " (no catalog checksum)")
        lines = [
            f"{info['name']}  {self.path}",
            f"  catalog        {catalog}",
            f"  sha256         {w.sha256}",
            f"  version        {header.version or '-'}",
            f"  computer       {header.computer or '-'}",
            f"  installation   {header.installation or '-'}",
            f"  acknowledge    {header.acknowledge or '-'}",
            f"  MaxJobs        {_num(header.max_jobs)}    MaxRecords {_num(header.max_records)}",
            f"  MaxNodes       {header.get_raw('MaxNodes') or '-'}",
            f"  MaxProcs       {header.get_raw('MaxProcs') or '-'}",
            f"  machine        {w.max_procs} processors, {w.max_nodes} nodes",
            f"  jobs           {report.jobs_in} read, {len(w)} kept (cleaning: {self.cleaning})",
            *(f"  extra column   {name}: {s['distinct']} distinct values in [{s['min']:g}, {s['max']:g}], "
              f"{s['nonzero']} jobs non-zero" for name, s in info["extras"].items()),
            *(f"  resource       {name}: capacity {s['capacity']:g}, requests in [{s['min']:g}, {s['max']:g}], "
              f"{s['nonzero']} jobs request it" for name, s in info["resources"].items()),
            *([f"  augmentation   MRSch {self.augment} (seed {self.augment_seed}), scaled from Theta (4,360 nodes, "
               f"1.26 PB, 500 kW) to {w.max_nodes} nodes: burst buffer and power budget x "
               f"{w.max_nodes / THETA_NODES:.4g}; power is the headroom above 60 W per idle node"] if self.augment else []),
            "",
            report.summary(),
            "",
            f"statistics over the {len(w)} kept jobs",
            f"  span                 {_fmt(stats['span_s'], 86400, 'days')}",
            f"  mean inter-arrival   {_fmt(stats['mean_interarrival_s'], 1, 's')}",
            f"  run time             mean {_fmt(stats['mean_runtime_s'], 1, 's')}, "
            f"median {_fmt(stats['median_runtime_s'], 1, 's')}",
            f"  requested time       mean {_fmt(stats['mean_requested_s'], 1, 's')}, "
            f"median {_fmt(stats['median_requested_s'], 1, 's')}",
            f"  size                 mean {_fmt(stats['mean_size_procs'], 1, 'procs')}, "
            f"median {_fmt(stats['median_size_procs'], 1, 'procs')}",
            f"  estimate accuracy    {_fmt(stats['estimate_accuracy'], 1, '')} (mean run / requested time)".rstrip(),
        ]
        return "\n".join(lines)


def _num(value) -> str:
    return "-" if value is None else str(value)


def _fmt(value, scale: float, unit: str) -> str:
    if value is None:
        return "-"
    return f"{value / scale:.3g} {unit}".rstrip() if abs(value / scale) < 1000 else f"{value / scale:.0f} {unit}".rstrip()
