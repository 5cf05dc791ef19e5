"""Where a command's output goes: checked before any work, never over the command's own inputs or over files it did
not write, written atomically.

Every `schedrl` command that writes (`traces import`/`generate --out`, `export --out`, `train --out`, `tune --out`,
`tuned fit --out`, `leaderboard --out/--plot/--publish`, `simulate/compare/evaluate --plot`, `slurm run
--log/--state-dir`) names its outputs and inputs to `claim` first, which refuses, in one line and before anything is
computed:

- an output that is one of the command's inputs (`traces import --slurm log.txt --out log.txt`), or a directory
  output that holds an input among the files it writes, with or without `--force`. The inputs are those the command
  names and, so that none is forgotten, every existing path any other argument of the command line names
  (`reading`, which `schedrl.cli.main` wraps each command in: `inspector score --policies f1,tuned:fit.json --json
  fit.json` is refused, although the rule is named inside a list), compared by resolved path and by inode;
- the wrong kind of path: a directory where a file goes or a file where a directory goes, a missing parent directory
  (a file output) or a parent that is a file (a directory output), a plot format matplotlib cannot write;
- continuing what is not the command's own, with or without `--force`: an output the command appends to or keeps
  state in (`slurm run --log`, `--state-dir`) that exists and is not what the command writes there (`continues`);
- replacing what schedrl did not write, unless `--force`: an existing file the directory's ownership marker does not
  list with its current checksum, or a non-empty directory without the marker of this command (or, for outputs
  written before the marker, the file that proves whose it is: `signature`).

The marker, `.schedrl-outputs.json` in a directory, says what schedrl owns there: the command a directory output
belongs to (`train --resume`, `tune --resume`, `export` again into its own directory keep working) and every file a
command wrote with the sha256 it wrote (a rerun replaces its own unchanged file; a file edited since is foreign).
`atomic_write` and `save_figure` (every figure schedrl saves) write through a temporary file in the same directory,
then rename it, so an interrupted command leaves the old file or none (`Claim.write` also records the file);
`writing(...)` removes the directories a command created when it fails before
it has anything worth keeping (a `train` run with no checkpoint), so a failed run does not block the next one.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

MARKER = ".schedrl-outputs.json"
"""The ownership marker of a directory (see the module's docstring)."""


class OutputError(ValueError):
    """An output path that cannot be used; one line naming the option and the path."""


def _named(error: OSError, path: Path) -> OSError:
    """`error` naming `path`, the file the user asked for, not the temporary file it was written through."""
    return type(error)(error.errno, error.strerror, str(path)) if error.errno else error


def atomic_write(path: str | Path, data: bytes | str) -> Path:
    """Write `data` (text is UTF-8) to `path` through a temporary file in the same directory, then rename it (an
    OSError names `path`, never the temporary file)."""
    path = Path(path)
    raw = data.encode() if isinstance(data, str) else bytes(data)
    try:
        fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    except OSError as e:
        raise _named(e, path) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException as e:
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass
        if isinstance(e, OSError):
            raise _named(e, path) from None
        raise
    return path


def save_figure(fig, path: str | Path, **kwargs) -> Path:
    """`fig.savefig(path)` through a temporary file in the same directory, then renamed (its format from the
    suffix, as matplotlib chooses it)."""
    path = Path(path)
    try:
        fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=path.suffix or ".png", dir=path.parent)
    except OSError as e:
        raise _named(e, path) from None
    os.close(fd)
    try:
        fig.savefig(temporary, **({"format": path.suffix[1:]} if path.suffix else {}), **kwargs)
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException as e:
        Path(temporary).unlink(missing_ok=True)
        if isinstance(e, OSError):
            raise _named(e, path) from None
        raise
    return path


def plot_formats() -> dict[str, str]:
    """The file formats matplotlib writes (suffix without the dot -> description)."""
    from matplotlib.backend_bases import FigureCanvasBase

    return dict(FigureCanvasBase.get_supported_filetypes())


@dataclass(frozen=True)
class Out:
    """One output of a command: the option that names it, its path, and what it is."""

    option: str
    path: Path
    kind: str = "file"
    """`file` or `dir`."""
    plot: bool = False
    """A figure: its suffix must be a format matplotlib writes."""
    writes: tuple[str, ...] = ()
    """A directory output: the files the command writes into it (an input among them is refused)."""
    signature: tuple[str, ...] = ()
    """A directory output: a file whose presence shows the directory is this command's, written before the marker."""
    mark: bool = True
    """Write the ownership marker (a `--publish` checkout keeps none)."""
    shown: str = ""
    """The path as the user gave it (for messages; `claim` fills it)."""
    continues: Callable[[Path], bool] | None = None
    """An output the command continues rather than replaces (`slurm run --log` appends to its cycle log, `--state-dir`
    keeps its lock, lease and audit log): an existing path for which this says True is the command's own; anything
    else there is refused, with or without --force (appending to a foreign file is never what was meant)."""
    continues_what: str = ""
    """What `continues` accepts, for the refusal (\"a schedrl cycle log\")."""


@dataclass(frozen=True)
class In:
    """One input of a command (a file or directory it reads)."""

    option: str
    path: Path


_ARGUMENTS: ContextVar[tuple[In, ...]] = ContextVar("schedrl_argument_paths", default=())
"""The existing paths the running command's arguments name (`reading`); every `claim` counts them as inputs."""


@contextmanager
def reading(inputs: Iterable[In]) -> Iterator[None]:
    """Run a command with `inputs` (every existing path its arguments name, by option) counted as inputs of each
    `claim` it makes, except those given to the output's own option (`--json FILE` names its own output)."""
    token = _ARGUMENTS.set(tuple(inputs))
    try:
        yield
    finally:
        _ARGUMENTS.reset(token)


def named_paths(option: str, value: Any) -> list[In]:
    """The existing files and directories an argument's value names: the value itself, each item of a comma-separated
    list, and what follows a `prefix:` or a `key=` in each (`tuned:rule.json`, `checkpoint:DIR`, `plan:f1:x=FILE`)."""
    values = value if isinstance(value, (list, tuple)) else [value]
    found: list[In] = []
    for item in values:
        if not isinstance(item, (str, Path)) or not str(item):
            continue
        for piece in str(item).split(","):
            candidates = {piece, *(piece[i + 1:] for i, c in enumerate(piece) if c in ":=")}
            for candidate in candidates:
                if not candidate or len(candidate) > 4096:
                    continue
                try:
                    if os.path.exists(os.path.expanduser(candidate)):
                        found.append(In(option, Path(candidate)))
                except (OSError, ValueError, RuntimeError):  # a NUL byte, an unknown ~user
                    continue
    return found


def argv_paths(argv: Iterable[str]) -> list[In]:
    """`named_paths` of every token of a command line parsed elsewhere (a forwarded subcommand's own parser), each
    by the option before it (`--opt=value` split)."""
    found: list[In] = []
    option = "ARGUMENT"
    for token in argv:
        if token.startswith("-") and len(token) > 1 and not token[1:2].isdigit():
            option, _, value = token.partition("=")
            if value:
                found += named_paths(option, value)
            continue
        found += named_paths(option, token)
    return found


def _own(out: Out, item: In) -> bool:
    """Whether the argument `item` is the value of `out`'s own option (or an abbreviation of it, as argparse takes)."""
    return item.option == out.option or (item.option.startswith("--") and out.option.startswith(item.option))


def _resolved(path: str | Path) -> Path:
    return Path(os.path.abspath(Path(path).expanduser()))


def _same(a: Path, b: Path) -> bool:
    try:
        return a == b or (a.exists() and b.exists() and os.path.samefile(a, b))
    except OSError:
        return False


def _sha256(path: Path) -> str | None:
    try:
        digest = hashlib.sha256()
        with open(path, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
        return digest.hexdigest()
    except OSError:
        return None


def read_marker(directory: Path) -> dict[str, Any]:
    """A directory's ownership marker ({} when it has none or it is unreadable: then nothing there is schedrl's)."""
    try:
        data = json.loads((directory / MARKER).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) and isinstance(data.get("files", {}), dict) else {}


def _update_marker(directory: Path, change: Callable[[dict[str, Any]], None]) -> None:
    data = read_marker(directory)
    data.setdefault("schedrl", 1)
    data.setdefault("files", {})
    change(data)
    atomic_write(directory / MARKER, json.dumps(data, indent=1, sort_keys=True) + "\n")


def owns_file(path: Path) -> bool:
    """Whether schedrl wrote the file at `path` and it is unchanged since (its directory's marker says so)."""
    entry = read_marker(path.parent).get("files", {}).get(path.name)
    return isinstance(entry, dict) and entry.get("sha256") == _sha256(path)


def owner(directory: Path) -> str | None:
    """The command a directory output belongs to, by its marker (None: no marker)."""
    value = read_marker(directory).get("directory")
    return value if isinstance(value, str) else None


@dataclass
class Claim:
    """A command's outputs, checked (`claim`); `prepare` creates the directories, `write` and `savefig` write files
    atomically and record them as the command's."""

    command: str
    outs: list[Out]
    force: bool = False
    created: list[Path] = field(default_factory=list)

    def out(self, option: str) -> Out:
        return next(o for o in self.outs if o.option == option)

    def prepare(self) -> None:
        """Create the directory outputs (and missing parents), each with its marker."""
        for out in self.outs:
            if out.kind != "dir":
                continue
            missing = [p for p in [out.path, *out.path.parents] if not p.exists()]
            out.path.mkdir(parents=True, exist_ok=True)
            self.created += [p for p in reversed(missing)][:1]  # the topmost created: removed on failure
            if out.mark:
                _update_marker(out.path, lambda d, c=self.command: d.__setitem__("directory", d.get("directory") or c))

    def record(self, path: str | Path) -> None:
        """Mark the file at `path` (just written) as this command's, with its checksum."""
        path = _resolved(path)
        sha = _sha256(path)
        _update_marker(path.parent, lambda d: d["files"].__setitem__(path.name, {"command": self.command,
                                                                                  "sha256": sha}))

    def write(self, path: str | Path, data: bytes | str) -> Path:
        """Write a file (atomically) and record it."""
        path = atomic_write(_resolved(path), data)
        self.record(path)
        return path

    def abandon(self, keep: Callable[[Path], bool] | None = None) -> None:
        """Remove the directories this claim created, unless `keep(directory)` (something worth resuming)."""
        for directory in self.created:
            if directory.is_dir() and not (keep and keep(directory)):
                shutil.rmtree(directory, ignore_errors=True)


def claim(command: str, outs: Iterable[Out], inputs: Iterable[In] = (), force: bool = False) -> Claim:
    """Check every output of `command` before it does any work (OutputError, one line, on the first problem)."""
    outs = [replace(o, path=_resolved(o.path), shown=o.shown or str(o.path)) for o in outs]
    inputs = [In(i.option, _resolved(i.path)) for i in inputs if i.path is not None and str(i.path) != ""]
    arguments = [In(i.option, _resolved(i.path)) for i in _ARGUMENTS.get()]
    for out in outs:
        _check_overlap(out, inputs + [i for i in arguments if not _own(out, i)])
        _check_kind(out)
        if out.continues is not None:
            _check_continued(out)
        elif not force:
            _check_foreign(command, out)
    seen: dict[Path, str] = {}
    for out in outs:
        if out.path in seen:
            raise OutputError(f"{out.option} {out.shown} is also {seen[out.path]}: give each output its own path")
        seen[out.path] = out.option
    return Claim(command, outs, force)


def _check_overlap(out: Out, inputs: list[In]) -> None:
    for item in inputs:
        if _same(out.path, item.path):
            raise OutputError(f"{out.option} {out.shown} is also {item.option}: writing it would replace the command's "
                              "own input; choose another output path")
        if out.kind == "dir" and any(_same(out.path / name, item.path) for name in out.writes):
            raise OutputError(f"{out.option} {out.shown} would replace {item.path.name}, which is {item.option}; "
                              "choose another directory")


def _check_kind(out: Out) -> None:
    path = out.path
    if out.kind == "file":
        if path.is_dir():
            raise OutputError(f"{out.option} {out.shown} is a directory; give a file name")
        if path.exists() and not path.is_file():
            raise OutputError(f"{out.option} {out.shown} exists and is not a regular file")
        if not path.parent.is_dir():
            raise OutputError(f"{out.option} {out.shown}: directory {Path(out.shown).parent} does not exist"
                              if not path.parent.exists() else f"{out.option} {out.shown}: {Path(out.shown).parent} is not a directory")
        if not os.access(path.parent, os.W_OK):
            raise OutputError(f"{out.option} {out.shown}: directory {Path(out.shown).parent} is not writable")
        if out.plot:
            suffix = path.suffix[1:].lower()
            formats = plot_formats()
            if suffix and suffix not in formats:
                raise OutputError(f"{out.option} {out.shown}: matplotlib cannot write .{suffix} figures (formats: "
                                  f"{', '.join(sorted(formats))})")
        return
    if path.exists() and not path.is_dir():
        raise OutputError(f"{out.option} {out.shown} exists and is a file; give a directory")
    ancestor = next((p for p in path.parents if p.exists()), None)
    if ancestor is not None and not ancestor.is_dir():
        raise OutputError(f"{out.option} {out.shown}: {ancestor} is a file, not a directory")
    if ancestor is not None and not path.exists() and not os.access(ancestor, os.W_OK):
        raise OutputError(f"{out.option} {out.shown}: directory {ancestor} is not writable")
    if path.is_dir() and not os.access(path, os.W_OK | os.X_OK):
        raise OutputError(f"{out.option} {out.shown}: the directory is not writable")


def _check_continued(out: Out) -> None:
    if out.path.exists() and not out.continues(out.path):
        what = out.continues_what or "the command's own output"
        how = "appended to" if out.kind == "file" else "written into"
        raise OutputError(f"{out.option} {out.shown} exists and is not {what}: it would be {how}, never replaced; "
                          "choose another path")


def _check_foreign(command: str, out: Out) -> None:
    path = out.path
    if out.kind == "file":
        if path.exists() and not owns_file(path):
            raise OutputError(f"{out.option} {out.shown} exists and schedrl did not write it (or it changed since): "
                              "choose another path, or add --force to replace it")
        return
    if not path.is_dir():
        return
    if owner(path) == command or any((path / name).exists() for name in out.signature):
        return
    foreign = sorted(p.name for p in path.iterdir() if p.name != MARKER)
    if foreign:
        whose = f" (it is a `schedrl {owner(path)}` output)" if owner(path) else ""
        shown = ", ".join(foreign[:3]) + (f" and {len(foreign) - 3} more" if len(foreign) > 3 else "")
        raise OutputError(f"{out.option} {out.shown} holds files `schedrl {command}` did not write ({shown}){whose}: "
                          "choose another directory, or add --force to write there")


@contextmanager
def writing(command: str, outs: Iterable[Out], inputs: Iterable[In] = (), force: bool = False,
            keep: Callable[[Path], bool] | None = None) -> Iterator[Claim]:
    """`claim` the outputs, create the directories, and run the command's work; when it fails, remove the
    directories it created (unless `keep`)."""
    done = claim(command, outs, inputs, force)
    done.prepare()
    try:
        yield done
    except BaseException:
        done.abandon(keep)
        raise


def has_checkpoint(directory: Path) -> bool:
    """Whether a training output holds a checkpoint (something `--resume` continues from): kept when the run fails."""
    return next(iter(directory.rglob("checkpoint_*")), None) is not None


def add_force(parser, what: str = "its output files") -> None:
    """The `--force` option of a command that writes."""
    parser.add_argument("--force", action="store_true",
                        help=f"replace {what} even where schedrl did not write them (never the command's own inputs)")
