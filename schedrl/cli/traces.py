"""`schedrl traces`: list the catalog, inspect a trace, fetch a log, import a site's log, generate a synthetic trace."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

import numpy as np

from schedrl.cli.main import UsageError
from schedrl.cli.options import add_augment_options
from schedrl.outputs import In, Out, add_force, claim
from schedrl.scenarios.workload import CLEANING_PRESETS

GENERATORS = ("lublin",)


def add_parser(subparsers, name: str, help_text: str) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(name, help=help_text, description=help_text)
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)

    p = actions.add_parser("list", help="the trace catalog and where each trace is available")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")

    p = actions.add_parser("info", help="header, machine size, cleaning report and statistics of a trace")
    p.add_argument("trace", metavar="NAME|PATH", help="catalog name or SWF file (.swf or .swf.gz)")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.add_argument("--cleaning", choices=CLEANING_PRESETS, default="default", help="cleaning preset (default: default)")
    add_augment_options(p)

    p = actions.add_parser("fetch", help="download a catalog trace into the user cache, verifying its checksum")
    p.add_argument("name", metavar="NAME", help="catalog name (see `schedrl traces list`)")
    p.add_argument("--from", dest="from_file", metavar="FILE", help="import a local copy instead of downloading")
    p.add_argument("--dest", metavar="DIR", help="directory to store it in (default: the user cache)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")

    p = actions.add_parser("import", help="convert a site's accounting log to an SWF trace, with names replaced by "
                                          "ids (docs/slurm.md)")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--slurm", metavar="FILE", help="`sacct --parsable2` output (the command: docs/slurm.md)")
    p.add_argument("--out", required=True, metavar="FILE", help="output SWF file (.swf or .swf.gz)")
    p.add_argument("--salt", metavar="SECRET", help="ids are a keyed hash of the names: the same salt gives the same "
                                                    "ids in every import; keep it secret")
    p.add_argument("--id-map", metavar="FILE", help="or number names through this JSON map the site keeps "
                                                    "(created if absent, extended with new names)")
    p.add_argument("--procs", type=int, help="CPUs in the machine (overrides --sinfo)")
    p.add_argument("--nodes", type=int, help="nodes in the machine (overrides --sinfo)")
    p.add_argument("--sinfo", metavar="FILE", help="machine size and partition time limits from the output of "
                                                   "`sinfo --all --Node --format='%%N|%%P|%%c|%%l'`")
    p.add_argument("--timezone", metavar="ZONE", help="IANA time zone sacct printed its times in, e.g. Europe/Berlin "
                                                      "(default: this machine's)")
    p.add_argument("--arrival", choices=("submit", "eligible"), default="submit",
                   help="SWF submit time: sacct's Submit, or Eligible (when the job could first start) (default: submit)")
    p.add_argument("--node-columns", action="store_true",
                   help="add ReqNodes and AllocNodes as extra columns nodes_req and nodes_alloc")
    p.add_argument("--cleaning", choices=CLEANING_PRESETS, default="default", help="cleaning preset (default: default)")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    add_force(p, "--out")

    p = actions.add_parser("generate", help="write a synthetic trace")
    p.add_argument("model", choices=GENERATORS, help="workload model")
    p.add_argument("--jobs", type=int, required=True, help="number of jobs")
    p.add_argument("--nodes", type=int, default=256, help="machine size in nodes (default: 256)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    p.add_argument("--out", required=True, metavar="FILE", help="output SWF file (.swf or .swf.gz)")
    add_force(p, "--out")

    parser.set_defaults(run=run)
    return parser


def run(args: argparse.Namespace) -> int:
    action = {"list": _list, "info": _info, "fetch": _fetch, "import": _import, "generate": _generate}[args.action]
    return action(args)


def _list(args: argparse.Namespace) -> int:
    from schedrl.workload.catalog import load_catalog, locate

    rows = []
    for entry in load_catalog().values():
        path = locate(entry)
        rows.append({**asdict(entry), "path": str(path) if path else None,
                     "available": path is not None, "get": None if path else entry.how_to_get()})
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    header = ("name", "jobs", "procs", "nodes", "sha256", "where")
    table = [header]
    for r in rows:
        table.append((r["name"], _num(r["jobs"]), _num(r["procs"]), _num(r["nodes"]),
                      r["sha256"][:12] or "unknown", r["path"] or f"not local: {r['get']}"))
    widths = [max(len(row[i]) for row in table) for i in range(len(header) - 1)]
    for row in table:
        cells = [c.rjust(w) if i in (1, 2, 3) else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))]
        print("  ".join(cells + [row[-1]]))
    return 0


def _num(value) -> str:
    return "-" if value is None else str(value)


def trace_statistics(workload) -> dict[str, float | int | None]:
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


def _info(args: argparse.Namespace) -> int:
    from schedrl.workload.catalog import find_entry, load_catalog, load_trace, resolve_trace
    from schedrl.workload.cleaning import CleaningRules

    path = resolve_trace(args.trace)
    from schedrl.cli.options import augmented

    workload = augmented(load_trace(args.trace, CleaningRules.preset(args.cleaning)), args)
    by_name = find_entry(str(args.trace)) if not Path(args.trace).expanduser().is_file() else None
    entry = by_name or next((e for e in load_catalog().values() if e.sha256 == workload.sha256), None)
    report, header = workload.report, workload.header
    stats = trace_statistics(workload)
    info = {
        "name": entry.name if entry else workload.name,
        "path": str(path),
        "sha256": workload.sha256,
        "catalog": entry.name if entry else None,
        "checksum_verified": bool(entry and entry.sha256 and entry.sha256 == workload.sha256),
        "header": header.to_dict(),
        "jobs_read": report.jobs_in,
        "jobs": len(workload),
        "machine": {"procs": workload.max_procs, "nodes": workload.max_nodes},
        "extras": {name: _extra_summary(col) for name, col in workload.extras.items()},
        "resources": {name: {"capacity": float(workload.capacity[name]), **_extra_summary(col)}
                      for name, col in workload.resources.items()},
        "augment": getattr(args, "augment", None),
        "cleaning": args.cleaning,
        "report": report.to_dict(),
        "stats": stats,
    }
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    if entry is None:
        catalog = "not in the catalog"
    else:
        catalog = entry.name + (" (checksum verified)" if info["checksum_verified"] else " (no catalog checksum)")
    lines = [
        f"{info['name']}  {path}",
        f"  catalog        {catalog}",
        f"  sha256         {workload.sha256}",
        f"  version        {header.version or '-'}",
        f"  computer       {header.computer or '-'}",
        f"  installation   {header.installation or '-'}",
        f"  acknowledge    {header.acknowledge or '-'}",
        f"  MaxJobs        {_num(header.max_jobs)}    MaxRecords {_num(header.max_records)}",
        f"  MaxNodes       {header.get_raw('MaxNodes') or '-'}",
        f"  MaxProcs       {header.get_raw('MaxProcs') or '-'}",
        f"  machine        {workload.max_procs} processors, {workload.max_nodes} nodes",
        f"  jobs           {report.jobs_in} read, {len(workload)} kept (cleaning: {args.cleaning})",
        *(f"  extra column   {name}: {s['distinct']} distinct values in [{s['min']:g}, {s['max']:g}], "
          f"{s['nonzero']} jobs non-zero" for name, s in info["extras"].items()),
        *(f"  resource       {name}: capacity {s['capacity']:g}, requests in [{s['min']:g}, {s['max']:g}], "
          f"{s['nonzero']} jobs request it" for name, s in info["resources"].items()),
        *([f"  augmentation   MRSch {args.augment} (seed {args.augment_seed}), scaled from Theta (4,360 nodes, "
           f"1.26 PB, 500 kW) to {workload.max_nodes} nodes: burst buffer and power budget x "
           f"{workload.max_nodes / 4360:.4g}; power is the headroom above 60 W per idle node"]
          if getattr(args, "augment", None) else []),
        "",
        report.summary(),
        "",
        f"statistics over the {len(workload)} kept jobs",
        f"  span                 {_fmt(stats['span_s'], 86400, 'days')}",
        f"  mean inter-arrival   {_fmt(stats['mean_interarrival_s'], 1, 's')}",
        f"  run time             mean {_fmt(stats['mean_runtime_s'], 1, 's')}, median {_fmt(stats['median_runtime_s'], 1, 's')}",
        f"  requested time       mean {_fmt(stats['mean_requested_s'], 1, 's')}, median {_fmt(stats['median_requested_s'], 1, 's')}",
        f"  size                 mean {_fmt(stats['mean_size_procs'], 1, 'procs')}, median {_fmt(stats['median_size_procs'], 1, 'procs')}",
        f"  estimate accuracy    {_fmt(stats['estimate_accuracy'], 1, '')} (mean run / requested time)".rstrip(),
    ]
    print("\n".join(lines))
    return 0


def _extra_summary(column: np.ndarray) -> dict:
    """What an extra column holds, over the kept jobs."""
    if not column.size:
        return {"min": 0.0, "max": 0.0, "distinct": 0, "nonzero": 0}
    return {"min": float(column.min()), "max": float(column.max()), "distinct": int(np.unique(column).size),
            "nonzero": int(np.count_nonzero(column))}


def _fmt(value, scale: float, unit: str) -> str:
    if value is None:
        return "-"
    return f"{value / scale:.3g} {unit}".rstrip() if abs(value / scale) < 1000 else f"{value / scale:.0f} {unit}".rstrip()


def _fetch(args: argparse.Namespace) -> int:
    from schedrl.workload.catalog import fetch, find_entry, load_catalog, recorded_sha256, traces_dir

    entry = find_entry(args.name, load_catalog())
    path = fetch(entry or args.name, dest_dir=args.dest, from_file=args.from_file, progress=not args.quiet)
    sha = recorded_sha256(path)
    if entry.sha256:
        print(f"{entry.name}: {path} (sha256 {sha} verified)")
    else:
        print(f"{entry.name}: {path}")
        print(f"warning: sha256 {sha} is UNVERIFIED: the catalog has no checksum for {entry.name}; "
              f"record it as sha256 = \"{sha}\" in {traces_dir() / 'catalog.toml'}", file=sys.stderr)
    return 0


def _import(args: argparse.Namespace) -> int:
    from schedrl.workload.catalog import content_sha256
    from schedrl.workload.cleaning import CleaningRules
    from schedrl.workload.errors import TraceError
    from schedrl.workload.slurm import NameIds, SlurmImport, local_timezone, read_sacct, read_sinfo
    from schedrl.workload.swf import write_swf

    out = Path(args.out).expanduser()
    outputs = claim("traces import", [Out("--out", out)], [In("--slurm", args.slurm and Path(args.slurm)),
                                                          In("--sinfo", args.sinfo and Path(args.sinfo)),
                                                          In("--id-map", args.id_map and Path(args.id_map))],
                    force=args.force)
    if (args.salt is None) == (args.id_map is None):
        raise UsageError("give one of --salt SECRET (ids are a keyed hash of the names) or --id-map FILE (the site's "
                         "name -> id map), so that the trace holds no names")
    if args.salt is not None and not args.salt:
        raise UsageError("--salt must not be empty: anyone could recompute ids from a list of likely names")
    machine = read_sinfo(Path(args.sinfo).expanduser()) if args.sinfo else None
    procs = args.procs if args.procs is not None else machine.procs if machine else None
    nodes = args.nodes if args.nodes is not None else machine.nodes if machine else None
    if procs is None:
        raise UsageError("give the machine size: --procs N (CPUs, and --nodes N) or --sinfo FILE")
    ids = NameIds(salt=args.salt.encode()) if args.salt is not None else NameIds.load(Path(args.id_map).expanduser())
    try:
        options = SlurmImport(procs=procs, nodes=nodes, timezone=args.timezone or local_timezone(),
                              partition_limits=machine.partition_limits if machine else {},
                              arrival=args.arrival, node_columns=args.node_columns)
        workload = read_sacct(Path(args.slurm).expanduser(), ids, options, CleaningRules.preset(args.cleaning),
                              name=out.name.split(".")[0])
    except TraceError:
        raise
    except ValueError as e:
        raise UsageError(str(e)) from None
    write_swf(workload, out)
    outputs.record(out)
    if args.id_map:
        ids.save(Path(args.id_map).expanduser())
    sha = content_sha256(out)
    added = ", ".join(f"{n} {kind}" for kind, n in sorted(ids.added.items()))
    if args.json:
        print(json.dumps({"source": args.slurm, "out": str(out), "sha256": sha, "jobs": len(workload),
                          "machine": {"procs": workload.max_procs, "nodes": options.nodes},
                          "timezone": options.timezone, "id_map": args.id_map, "id_map_added": ids.added,
                          "header": workload.header.to_dict(), "report": workload.report.to_dict()}, indent=2))
        return 0
    print(f"read {workload.report.jobs_in} sacct records from {args.slurm} (times in {options.timezone}; "
          "example lines are lines of that file)")
    print(workload.report.summary())
    if args.id_map:
        print(f"id map {args.id_map}: {'new names: ' + added if added else 'no new names'}")
    nodes = f", {options.nodes} nodes" if options.nodes else ""
    print(f"wrote {len(workload)} jobs ({workload.max_procs} CPUs{nodes}) to {out}, sha256 {sha}")
    return 0


def _generate(args: argparse.Namespace) -> int:
    if args.jobs <= 0:
        raise UsageError(f"--jobs must be a positive number of jobs, got {args.jobs}")
    if args.nodes <= 0:
        raise UsageError(f"--nodes must be a positive number of nodes, got {args.nodes}")
    out = Path(args.out).expanduser()
    outputs = claim("traces generate", [Out("--out", out)], force=args.force)
    from schedrl.workload.catalog import content_sha256
    from schedrl.workload.swf import write_swf

    try:
        from schedrl.workload.lublin import generate_lublin
    except ImportError as e:
        raise UsageError(f"the Lublin generator is not available in this installation ({e})") from None
    try:
        workload = generate_lublin(args.jobs, args.nodes, seed=args.seed)
    except ValueError as e:  # a machine too small for the model's job sizes
        raise UsageError(f"--nodes {args.nodes}: {e}") from None
    write_swf(workload, out)
    outputs.record(out)
    print(f"wrote {len(workload)} jobs ({workload.max_procs} processors) to {out}, sha256 {content_sha256(out)}")
    return 0
