"""`python -m schedrl ARGS` run in this process, for the fast tier.

A command's output, exit status and one-line errors are the same whether `schedrl.cli.main.main` runs in a new
interpreter or in this one, but a new interpreter costs seconds (Python, numpy, numba) and is a subprocess, which
the fast tier refuses (CONTRIBUTING.md). `run_cli` gives tests a `subprocess.CompletedProcess` as
`subprocess.run([sys.executable, "-m", ENTRY, *args], env=..., cwd=..., capture_output=True, text=True)` would: the
environment replaced by `env` for the call, the working directory `cwd`, stdout and stderr captured, an uncaught
exception printed as a traceback with exit status 1 (what the interpreter would do). The entry point itself
(`python -m schedrl`) is run as a real subprocess by the integration tier (tests/cli/test_entry_points.py).
"""

from __future__ import annotations

import contextlib
import importlib
import io
import os
import subprocess
import sys
import traceback
from collections.abc import Mapping
from pathlib import Path


@contextlib.contextmanager
def _environment(env: Mapping[str, str] | None):
    if env is None:
        yield
        return
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def run_cli(*args: str, env: Mapping[str, str] | None = None, cwd: Path | str | None = None,
            entry: str = "schedrl.cli.main", stdin: str = "") -> subprocess.CompletedProcess:
    """`python -m ENTRY ARGS` as a CompletedProcess, in this process (`ENTRY.main(argv)`)."""
    main = importlib.import_module(entry).main
    out, err = io.StringIO(), io.StringIO()
    old_cwd = Path.cwd()
    old_stdin = sys.stdin
    code: int
    with _environment(env), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            sys.stdin = io.StringIO(stdin)
            if cwd is not None:
                os.chdir(cwd)
            try:
                result = main(list(map(str, args)))
                code = int(result or 0)
            except SystemExit as exited:  # argparse, sys.exit(...)
                if exited.code is None or isinstance(exited.code, int):
                    code = exited.code or 0
                else:  # sys.exit("message"): printed to stderr, status 1
                    print(exited.code, file=sys.stderr)
                    code = 1
            except Exception:  # noqa: BLE001 - what the interpreter prints for an uncaught exception
                traceback.print_exc()
                code = 1
        finally:
            sys.stdin = old_stdin
            os.chdir(old_cwd)
    return subprocess.CompletedProcess([sys.executable, "-m", entry, *map(str, args)], code, out.getvalue(),
                                       err.getvalue())


def cli(capsys, *args: str) -> tuple[int, str, str]:
    """`schedrl ARGS` through `schedrl.cli.main.main` in this process, output read from pytest's `capsys`: (exit
    status, stdout, stderr); argparse's own rejections exit through SystemExit, whose code is the status."""
    from schedrl.cli.main import main

    try:
        status = main(list(args))
    except SystemExit as e:
        status = e.code
    out, err = capsys.readouterr()
    return status, out, err
