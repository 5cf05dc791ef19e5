"""Every `schedrl ...` command the README and the guides show is a command today's CLI takes, and the ones that can
run here do.

What is checked:

* **Parsed**: every command of a code block in `DOCS` goes through the real argparse parser
  (`schedrl.cli.main.build_parser`), so an unknown option or a bad value fails the test. Inline code spans
  (`` `schedrl tune FILE.yaml` `` in prose) are often partial, so for them the subcommands must exist (`a/b` and
  `a|b` are alternatives, upper-case words placeholders) and every `--option` must be one of that subcommand's.
* **Run**: every code-block command that is not in `EXEMPT` runs, in document order, in one scratch directory
  shared by the whole module, so a file one command writes (`rule.json`, `my-policy/`) is there for the next. They
  run in this process through `schedrl.cli.main.main` (what the `schedrl` script calls), except the main job, which
  starts Ray and runs as a process of its own.
  `CKPT` and `RUN` in the guides stand for a checkpoint and a run directory; here they are the README main job's
  run, trained at a tiny size first (`main_job`). Sizes are shrunk where a command would take minutes, by
  appending options (argparse keeps the last value): `OVERRIDES` lists each with the reason. A command is run
  once however many pages show it.
* **Exempt** from running (still parsed): `EXEMPT`, each with its reason (a download, a Slurm cluster, training
  runs of minutes whose code paths run at tiny sizes elsewhere).
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from schedrl.cli.main import SUBCOMMANDS, build_parser
from shared_traces import SHARED_DATA, shared_trace

REPO = Path(__file__).resolve().parents[2]
DOCS = ["README.md", "docs/index.md", *sorted(f"docs/guides/{p.name}" for p in (REPO / "docs/guides").glob("*.md")),
        "docs/scenarios.md", "docs/reference/troubleshooting.md", "docs/reference/cli.md"]
"""The pages checked here. docs/cluster.md (commands inside `ray job submit`) is checked by tests/test_readme_usage.py,
docs/slurm.md by tests/slurm/test_slurm_guide.py, the agent pages by tests/docs/test_agent_pages.py."""

MAIN_JOB = "<!-- main-job -->"
TINY_TRAINING = ["--iterations", "1", "--batch-size", "128", "--epochs", "1", "--sequence-length", "32",
                 "--eval-sequences", "1", "--eval-jobs", "64", "--filter-iterations", "1"]
"""The README main job's budget here: one iteration of 128 steps, a one-sequence final table (about a minute)."""

EXEMPT = {  # a regular expression matching the command's start -> why it does not run here (it is still parsed)
    "traces fetch SDSC-SP2$": "downloads from the Parallel Workloads Archive (the --from variant runs)",
    "train ": "trains for 10-30 minutes; the README main job runs the same driver at a tiny size here, and every agent "
              "trains at tiny sizes in tests/agents",
    "tune tune_configs/linear_example.yaml --out": "trains a two-trial sweep; tests/agents/linear runs this file",
    "slurm ": "needs a Slurm cluster; tests/slurm runs it on a private one",
    "leaderboard$": "every standard scenario with every zoo policy, networks deciding in a Python loop: minutes, and "
                    "more as the zoo grows (the slow test of tests/eval/test_leaderboard_published.py and "
                    "benchmarks/bench_leaderboard.py run it); the same code runs here on --scenarios default,lublin1",
}

OVERRIDES = {  # a regular expression matching the command's start -> options appended here, and why
    "distill ": (["--rounds", "1", "--windows", "1"], "one DAgger round of one window: the guide's six of sixteen take "
                 "half a minute; tests/zoo/test_zoo_commands.py reproduces the shipped tree in full"),
    "tuned fit": (["--budget", "5s", "--windows", "2", "--window-jobs", "256", "--validation-sequences", "2"],
                  "a 2-minute CMA-ES search; 5 s on small windows runs the same fit and writes the same file"),
    "select": (["--sequences", "2", "--jobs", "256"], "rescoring every checkpoint on 20 sequences of 1,024 jobs"),
    "export": (["--check-jobs", "64"], "the two extra check episodes of 1,024 jobs"),
    "evaluate|leaderboard": (["--sequences", "3"], "a trained network decides in a Python loop: 3 sequences of each "
                                                   "table instead of 10 or 30 (the table's code is the same)"),
}

TRACES = [  # a command mentioning the pattern needs these files of ../shared (skipped without them, failed on CI)
    (r"SDSC-SP2|dras-sdsc-sp2|mrsch", ["traces/SDSC-SP2-1998-4.2-cln.swf.gz"]),
    (r"lublin_256|lublin1", ["traces/lublin_256.swf.gz"]),
    (r"^scenarios check$", ["traces/SDSC-SP2-1998-4.2-cln.swf.gz", "traces/lublin_256.swf.gz",
                                          "traces/HPC2N-2002-2.2-cln.swf.gz", "traces/SDSC-BLUE-2000-4.2-cln.swf.gz",
                                          "data/theta-cqgym/train.swf.gz", "data/rlschert-vasp-jobs.csv.gz"]),
]

OUTSIDE_POLICY = '''\
from schedrl.heuristics import get_heuristic


def make(scenario):
    """The leaderboard guide's outside policy: SJF on trace scenarios, nothing on the discrete-time one."""
    return None if scenario.generated else get_heuristic("sjf")
'''


def fenced_and_prose(text: str) -> tuple[list[str], list[str]]:
    """The code blocks' lines (continuations joined) and the prose between them."""
    parts = re.split(r"^```[^\n]*\n(.*?)^```", text, flags=re.S | re.M)
    return "\n".join(parts[1::2]).replace("\\\n", " ").splitlines(), parts[0::2]


def block_commands(doc: str) -> list[str]:
    """`schedrl ...` commands of a page's code blocks: at a line's start or after `&& .venv/bin/`; output lines
    (`schedrl simulate: error: ...`) are not commands."""
    lines, _ = fenced_and_prose((REPO / doc).read_text())
    found = []
    for line in lines:
        match = re.search(r"(?:^|&&\s*(?:\.venv/bin/)?)schedrl\s+(.*)$", line.strip())
        if match and not re.match(r"[\w-]*:", match.group(1)):
            found.append(match.group(1).split(" #")[0].strip())
    return found


def inline_commands(doc: str) -> list[str]:
    _, prose = fenced_and_prose((REPO / doc).read_text())
    return [m.group(1).strip() for part in prose for m in re.finditer(r"`schedrl ([^`]*)`", part)
            if "error:" not in m.group(1)]


BLOCKS = list(dict.fromkeys(c for doc in DOCS for c in block_commands(doc)))
"""Every distinct code-block command, in page order."""
INLINE = list(dict.fromkeys((doc, c) for doc in DOCS for c in inline_commands(doc)))


def argv(command: str) -> tuple[list[str], str | None]:
    """The command's arguments, and the file a `> FILE` redirection writes."""
    command, _, redirect = command.partition(" > ")
    return shlex.split(command), redirect.strip() or None


def subparser(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser | None:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices.get(name)
    return None


def has_subcommands(parser: argparse.ArgumentParser) -> bool:
    return any(isinstance(a, argparse._SubParsersAction) for a in parser._actions)


def test_the_pages_and_their_commands_are_found():
    assert len(BLOCKS) >= 40 and len(INLINE) >= 30, (len(BLOCKS), len(INLINE))
    assert {doc for doc in DOCS if block_commands(doc)} >= {"README.md", "docs/index.md"} | \
        {f"docs/guides/{n}.md" for n in ("getting-started", "traces", "simulate-and-compare", "train", "sweeps",
                                         "evaluate", "add-an-agent")}
    shown = {argv(c)[0][0] for c in BLOCKS} | {c.split()[0] for _, c in INLINE}
    assert set(SUBCOMMANDS) <= shown, set(SUBCOMMANDS) - shown


@pytest.mark.parametrize("command", BLOCKS, ids=[c[:70] for c in BLOCKS])
def test_every_command_parses(command):
    args, _ = argv(command)
    if "--help" in args:  # argparse prints the help and exits 0
        with pytest.raises(SystemExit) as exited:
            build_parser(args[0]).parse_args(args)
        assert exited.value.code == 0
        return
    parsed = build_parser(args[0]).parse_args(args)  # argparse exits (failing the test) on a stale option or value
    assert parsed.command == args[0]
    for arg in args:
        if arg.startswith("tune_configs/"):
            assert (REPO / arg).is_file(), arg


PLACEHOLDER = re.compile(r"^[A-Z][A-Z_.]*(\.yaml)?$|^\.\.\.$")


@pytest.mark.parametrize(("doc", "command"), INLINE, ids=[f"{d}: {c[:50]}" for d, c in INLINE])
def test_every_inline_command_names_real_subcommands_and_options(doc, command):
    tokens = shlex.split(command)
    parser = build_parser(tokens[0]) if tokens[0] in SUBCOMMANDS else None
    if tokens[0].startswith("-"):  # `schedrl --help`
        assert set(tokens) <= {"--help", "--version"}, command
        return
    if PLACEHOLDER.match(tokens[0]):  # `schedrl COMMAND --help`
        return
    assert parser is not None, f"{doc}: {tokens[0]!r} is not a schedrl command"
    parsers = [parser]
    for token in tokens:
        if token.startswith("-"):
            break
        if not has_subcommands(parsers[0]) or PLACEHOLDER.match(token):
            if PLACEHOLDER.match(token) and token in ("AGENT",):  # `train AGENT --help`: any agent's parser
                parsers = [subparser(parsers[0], name) for name in
                           next(a for a in parsers[0]._actions if isinstance(a, argparse._SubParsersAction)).choices]
            continue
        names = re.split(r"[/|]", token)
        found = [subparser(p, n) for p in parsers for n in names]
        assert all(found), f"{doc}: `schedrl {command}`: {token!r} is not a subcommand there"
        parsers = found
    for token in tokens:
        if token.startswith("--"):
            option = token.split("=")[0]
            for p in parsers:
                assert option in p._option_string_actions, f"{doc}: `schedrl {command}`: no option {option}"


# ------------------------------------------------------------------------------------------------ running them


def exemption(command: str) -> str | None:
    """Why a command does not run here, or None. The main job runs in `main_job`; `--help` always runs."""
    if is_main_job(command) or "--help" in command.split():
        return None
    return next((reason for pattern, reason in EXEMPT.items() if re.match(pattern, command)), None)


def is_main_job(command: str) -> bool:
    readme = (REPO / "README.md").read_text()
    block = re.search(re.escape(MAIN_JOB) + r"\s*```bash\n(.+?)\n```", readme, re.S)
    assert block, "README has no main-job block"
    return command == block.group(1)[block.group(1).index("schedrl ") + len("schedrl "):].strip()


RUNNABLE = [c for c in BLOCKS if exemption(c) is None and not is_main_job(c)]


def run(args: list[str], cwd: Path, timeout: int = 600) -> subprocess.CompletedProcess:
    """`schedrl ARGS` as a process of its own (the main job: it starts Ray)."""
    env = {**os.environ, "RAY_BACKEND_LOG_LEVEL": "fatal"}
    return subprocess.run([sys.executable, "-m", "schedrl", *args], capture_output=True, text=True, timeout=timeout,
                          cwd=cwd, env=env)


def run_here(args: list[str], cwd: Path, monkeypatch, capsys) -> tuple[int, str, str]:
    """`schedrl ARGS` in this process (`schedrl.cli.main.main`), from `cwd`, with `cwd` importable (the outside
    policy `mypkg.rules:make`): the same code as the command without a new interpreter's start each time."""
    from schedrl.cli.main import main

    monkeypatch.chdir(cwd)
    monkeypatch.syspath_prepend(str(cwd))
    capsys.readouterr()
    try:
        code = main(args)
    except SystemExit as exited:  # argparse's exit
        code = exited.code if isinstance(exited.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    """The scratch directory every command of this module runs in, with the leaderboard guide's outside policy."""
    path = tmp_path_factory.mktemp("doc_commands")
    (path / "mypkg").mkdir()
    (path / "mypkg" / "__init__.py").write_text("")
    (path / "mypkg" / "rules.py").write_text(OUTSIDE_POLICY)
    return path


@pytest.fixture(scope="module")
def main_job(workspace) -> tuple[Path, Path]:
    """The README's main-job command, minus the set-up, on a tiny budget (`TINY_TRAINING` appended): its run
    directory and its last checkpoint, which stand for the guides' `RUN` and `CKPT`."""
    command = next(c for c in BLOCKS if is_main_job(c))
    args, _ = argv(command)
    assert args[:2] == ["train", "rlscheduler"]
    proc = run([*args, *TINY_TRAINING], workspace)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert "iter    1" in proc.stdout and "RL" in proc.stdout
    out = workspace / args[args.index("--out") + 1]
    assert (out / "evaluation.md").exists() and (out / "training_curve.png").exists()
    assert (out / "schedrl_run.json").exists()
    checkpoints = sorted(out.glob("rlscheduler/trial_*/checkpoint_*"))
    assert checkpoints, f"no checkpoint under {out}"
    return out, checkpoints[-1]


@pytest.mark.integration  # runs documented commands
def test_the_readme_main_job_runs_on_a_tiny_budget(main_job):
    run_dir, checkpoint = main_job
    assert checkpoint.is_dir() and (run_dir / "evaluation.json").exists()


def test_the_readme_test_command_is_what_ci_runs():
    readme = (REPO / "README.md").read_text()
    block = re.search(r"<!-- test-command -->\s*```bash\n(.+?)\n```", readme, re.S)
    assert block, "README has no test-command block"
    assert block.group(1).strip() in (REPO / ".ci" / "run").read_text()


def needs(command: str) -> None:
    for pattern, files in TRACES:
        if re.search(pattern, command):
            for name in files:
                kind, _, rest = name.partition("/")
                shared_trace(rest, SHARED_DATA if kind == "data" else SHARED_DATA.parent / "traces")


PRODUCERS = {"rule.json": "tuned fit", "my-policy": "export "}
"""Files a later command reads -> the command that writes them, run first when a test is run on its own."""


def prepared(command: str, workspace: Path, main_job) -> list[str]:
    args, _ = argv(command)
    run_dir, checkpoint = main_job if ("CKPT" in args or "RUN" in args or args[0] in ("select", "export")) \
        else (None, None)
    if args[0] == "select":  # README: `select runs/dras` (an exempt run): any run directory shows the command works
        args[1] = str(run_dir)
    args = [str(checkpoint) if a == "CKPT" else str(run_dir) if a == "RUN" else
            str(REPO / a) if a.startswith("tune_configs/") else a for a in args]
    if args[:2] == ["traces", "fetch"] and "--from" in args:  # a local copy: the shared one, stored here
        args[args.index("--from") + 1] = str(shared_trace("SDSC-SP2-1998-4.2-cln.swf.gz"))
        args += ["--dest", str(workspace / "fetched"), "--quiet"]
    for pattern, (extra, _) in OVERRIDES.items():
        if re.match(pattern, command):
            args += extra
    return args


@pytest.mark.integration  # runs documented commands
@pytest.mark.parametrize("command", RUNNABLE, ids=[c[:70] for c in RUNNABLE])
def test_every_runnable_command_runs(command, workspace, request, monkeypatch, capsys):
    needs(command)
    main = request.getfixturevalue("main_job") if re.search(r"\b(CKPT|RUN)\b|^(select|export) ", command) else None
    args, redirect = argv(command)
    for name, producer in PRODUCERS.items():
        if name in args[1:] and not (workspace / name).exists() and not command.startswith(producer):
            source = next(c for c in RUNNABLE if c.startswith(producer))
            code, out, err = run_here(prepared(source, workspace, request.getfixturevalue("main_job")), workspace,
                                      monkeypatch, capsys)
            assert code == 0, f"schedrl {source}\n" + out[-2000:] + err[-3000:]
    code, out, err = run_here(prepared(command, workspace, main), workspace, monkeypatch, capsys)
    assert code == 0, f"schedrl {command}\n" + out[-2000:] + err[-3000:]
    assert out.strip() or err.strip(), "it printed nothing"
    if redirect:
        (workspace / redirect).write_text(out)
    for option in ("--out", "--plot"):
        if option in args:
            assert (workspace / args[args.index(option) + 1]).exists(), option


def test_exempt_commands_are_listed_with_a_reason():
    exempt = [c for c in BLOCKS if exemption(c) is not None]
    assert exempt and all(isinstance(exemption(c), str) and exemption(c) for c in exempt)
    assert len(RUNNABLE) + len(exempt) + 1 == len(BLOCKS)  # + the main job
