"""Paths that schedrl reads from environment variables, each taken relative to the directory the process started in.

A relative entry (`SCHEDRL_TRACE_PATH=../shared/traces`) means a directory from where the command was started. Ray's
workers do not run there: Tune moves each trial actor into its trial directory, so a value read relative to the
working directory of the moment finds nothing there, or (a cache directory) silently makes a second one. So every
variable of `VARIABLES` is read through this module: a relative entry is taken relative to `START_DIR`, a leading `~`
is expanded, and the variable is rewritten with the absolute value, here at import (`import schedrl` imports this
module first) and again at each read, so the processes started after (Ray's workers, subprocesses) inherit values
that mean the same wherever they run. A value that is already absolute is left exactly as it was given.

Each value is checked here, at the read (`env_path`, `env_paths`), never at import (importing schedrl never fails on
the environment): a `~user` that names no user, an entry that exists and is not a directory, and, where the reader
needs it (`must_exist`: the zoo's directory), a directory that does not exist are `PathVariableError`, one line naming
the variable and its value.
"""

from __future__ import annotations

import os
from pathlib import Path

TRACE_PATH = "SCHEDRL_TRACE_PATH"
"""Extra directories searched for catalog traces, `os.pathsep`-separated (`schedrl.workload.catalog`)."""
TRACES_DIR = "SCHEDRL_TRACES_DIR"
"""The repository's `traces/` directory, for a non-editable install (`schedrl.workload.catalog.traces_dir`)."""
CACHE_DIR = "SCHEDRL_CACHE_DIR"
"""The cache of parsed traces and fetched logs (`schedrl.workload.cache.cache_dir`)."""
SCENARIO_PATH = "SCHEDRL_SCENARIO_PATH"
"""Directories searched for `NAME.yaml` scenario files, `os.pathsep`-separated (`schedrl.scenarios.registry`)."""
DATA_PATH = "SCHEDRL_DATA_PATH"
"""Directories searched for RLSchert's job files, `os.pathsep`-separated (`schedrl.agents.rlschert.config`)."""
SHARED_DIR = "SCHEDRL_SHARED_DIR"
"""Stands in for `../shared` beside the repository, whose `data/` holds the VASP jobs (`schedrl.dtsim.jobs`)."""
ZOO_DIR = "SCHEDRL_ZOO_DIR"
"""A zoo of one's own in place of the package's (`schedrl.zoo.manifest`)."""

VARIABLES: dict[str, bool] = {TRACE_PATH: True, TRACES_DIR: False, CACHE_DIR: False, SCENARIO_PATH: True,
                              DATA_PATH: True, SHARED_DIR: False, ZOO_DIR: False}
"""Every environment variable of schedrl that holds a path, and whether it is a list (`os.pathsep`-separated) or
one directory. Nothing else in schedrl reads a `SCHEDRL_*` path from the environment (tests/test_paths.py checks)."""


class PathVariableError(ValueError):
    """A `SCHEDRL_*` path variable that cannot be used: one line naming the variable, its value and what to do."""


def _working_dir() -> Path | None:
    try:
        return Path.cwd()
    except OSError:  # the directory was removed
        return None


START_DIR = _working_dir()
"""The working directory when schedrl was first imported, i.e. where the command started: the base of a relative
entry, wherever the process is later. None where that directory no longer existed (relative entries then stay as
given)."""


def absolute(path: str | Path) -> Path:
    """`path` with `~` expanded, under `START_DIR` unless absolute, `..` folded as `os.path.abspath` does (symbolic
    links are kept: the value names what the user wrote)."""
    path = Path(path).expanduser()
    return path if path.is_absolute() or START_DIR is None else Path(os.path.normpath(START_DIR / path))


def _checked(name: str, value: str, entry: str, must_exist: bool = False) -> Path:
    """The entry `entry` of the variable `name` (whose whole value is `value`), absolute and checked
    (PathVariableError: no such user, not a directory, or missing where `must_exist`)."""
    shown = f"{name}={value}"
    try:
        path = absolute(entry)
    except RuntimeError:  # pathlib: "Could not determine home directory."
        user = entry.split("/", 1)[0]
        raise PathVariableError(f"{shown}: {user} names no user whose home directory is known; give the directory "
                                "itself, or unset the variable") from None
    try:
        exists, is_dir = path.exists(), path.is_dir()
    except OSError as e:
        raise PathVariableError(f"{shown}: {path} cannot be read ({e.strerror or type(e).__name__})") from None
    if exists and not is_dir:
        raise PathVariableError(f"{shown}: {path} is a file, not a directory; give a directory, or unset the variable")
    if must_exist and not exists:
        raise PathVariableError(f"{shown}: no such directory; create it, correct the value, or unset the variable")
    return path


def env_paths(name: str) -> list[Path]:
    """The entries of the `os.pathsep`-separated variable `name`, each absolute (`absolute`) and checked (none may be a
    file: PathVariableError; a missing one adds nothing to the search); empty entries are skipped. When one was not
    already absolute (relative, or `~`), the variable is rewritten with the absolute entries, so processes started
    from now on inherit them."""
    value = os.environ.get(name, "")
    entries = [d for d in value.split(os.pathsep) if d]
    dirs = [_checked(name, value, d) for d in entries]
    if not all(Path(d).is_absolute() for d in entries):
        os.environ[name] = os.pathsep.join(str(d) for d in dirs)
    return dirs


def env_path(name: str, must_exist: bool = False) -> Path | None:
    """The one path variable `name` holds, absolute (`absolute`, rewritten in the environment as `env_paths` does)
    and checked (not a file; an existing directory where `must_exist`: PathVariableError); None when it is unset or
    empty."""
    value = os.environ.get(name, "")
    if not value:
        return None
    path = _checked(name, value, value, must_exist)
    if not Path(value).is_absolute():
        os.environ[name] = str(path)
    return path


def absolutize_environment() -> None:
    """Rewrite every variable of `VARIABLES` that is set with its absolute value (`env_paths`, `env_path`); a value
    that cannot be used is left as given, for the command that reads it to refuse (`PathVariableError`)."""
    for name, is_list in VARIABLES.items():
        try:
            env_paths(name) if is_list else env_path(name)
        except PathVariableError:
            continue


absolutize_environment()  # at import, before Ray or any subprocess starts: what they inherit is already absolute
