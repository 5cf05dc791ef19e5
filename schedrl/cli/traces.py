"""`schedrl traces`: list the catalog, inspect a trace, fetch a log, import a site's log, generate a synthetic trace."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

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
    from schedrl.workload.describe import catalog_rows, catalog_table

    rows = catalog_rows()
    print(json.dumps(rows, indent=2) if args.json else catalog_table(rows))
    return 0


def _info(args: argparse.Namespace) -> int:
    from schedrl.cli.options import augmented
    from schedrl.workload.catalog import load_trace
    from schedrl.workload.cleaning import CleaningRules
    from schedrl.workload.describe import TraceInfo

    workload = augmented(load_trace(args.trace, CleaningRules.preset(args.cleaning)), args)
    info = TraceInfo.of(args.trace, workload, args.cleaning, getattr(args, "augment", None),
                        getattr(args, "augment_seed", 0))
    print(json.dumps(info.to_dict(), indent=2) if args.json else info.text())
    return 0


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
    from schedrl.workload.slurm import import_sacct

    out = Path(args.out).expanduser()
    # the id map is read and extended: an output that continues (a file or nothing), checked with --out up front
    id_map = [Out("--id-map", Path(args.id_map).expanduser(), continues=Path.is_file, continues_what="an id map file")
              ] if args.id_map else []
    outputs = claim("traces import", [Out("--out", out), *id_map], [In("--slurm", args.slurm and Path(args.slurm)),
                                                                    In("--sinfo", args.sinfo and Path(args.sinfo))],
                    force=args.force)
    try:
        imported = import_sacct(args.slurm, out, salt=args.salt, id_map=args.id_map, procs=args.procs,
                                nodes=args.nodes, sinfo=args.sinfo, timezone=args.timezone, arrival=args.arrival,
                                node_columns=args.node_columns, cleaning=args.cleaning, written=outputs.record)
    except ValueError as e:  # options that do not go together; a log that cannot be read (file and line)
        raise UsageError(str(e)) from None
    print(json.dumps(imported.to_dict(), indent=2) if args.json else imported.text())
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
