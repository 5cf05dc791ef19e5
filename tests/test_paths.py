"""Path variables (`schedrl/paths.py`): a relative entry is relative to where the process started, not to where it is
when it looks (Tune moves each trial actor into its trial directory), and is written back absolute so that Ray's
workers and subprocesses inherit a value that means the same wherever they run."""

from __future__ import annotations

import ast
import gzip
import os
import shutil
from pathlib import Path

import pytest

from schedrl import paths


@pytest.fixture
def tiny_gz(tmp_path) -> Path:
    """A five-job SWF trace, gzipped."""
    path = tmp_path / "src" / "tiny.swf.gz"
    path.parent.mkdir()
    swf = "; MaxNodes: 8\n" + "".join(f"{i} {10 * i} 0 50 2 -1 -1 2 60 -1 1 1 1 1 1 1 -1 -1\n" for i in range(1, 6))
    path.write_bytes(gzip.compress(swf.encode(), mtime=0))
    return path


def _vasp(directory: Path) -> Path:
    """A two-job VASP job file (`schedrl.dtsim.jobs.COLUMNS`) in `directory`."""
    from schedrl.dtsim.jobs import VASP_FILENAME, load_jobs

    directory.mkdir(parents=True, exist_ok=True)
    path = directory / VASP_FILENAME
    with gzip.open(path, "wt") as out:
        out.write("id,real,prerun_prediction,cores,running_predictions\n1,3,4,10,3 3 3\n2,2,2,20,2 2\n")
    assert len(load_jobs(path)) == 2
    return path


def _catalog_trace(directory: Path, tiny_gz: Path) -> Path:
    """RICC's catalog file name holding a tiny trace, in `directory`."""
    from schedrl.workload.catalog import load_catalog

    directory.mkdir(parents=True, exist_ok=True)
    path = directory / load_catalog()["RICC"].file
    shutil.copy(tiny_gz, path)
    return path


# Each variable: what to put under the directory it names (`make(tmp, tiny_gz)` -> the thing to find, and the value
# to give, relative to `tmp`), and how schedrl finds that thing (`find()`), from the modules that read the variable.
def _trace_path(tmp, tiny_gz):
    return _catalog_trace(tmp / "traces", tiny_gz), "traces"


def _find_trace():
    from schedrl.workload.catalog import resolve_trace

    return resolve_trace("RICC")


def _traces_dir(tmp, tiny_gz):
    from schedrl.workload.catalog import traces_dir

    (tmp / "repo-traces").mkdir()
    shutil.copy(traces_dir() / "catalog.toml", tmp / "repo-traces" / "catalog.toml")
    return _catalog_trace(tmp / "repo-traces", tiny_gz), "repo-traces"


def _cache_dir(tmp, tiny_gz):
    return _catalog_trace(tmp / "cache" / "traces", tiny_gz), "cache"


def _scenario_path(tmp, tiny_gz):
    import yaml

    from schedrl.scenarios.registry import standard

    definition = standard()["default"].to_dict()
    definition.pop("name")
    (tmp / "scenarios").mkdir()
    path = tmp / "scenarios" / "mysite.yaml"
    path.write_text(yaml.safe_dump(definition))
    return path, "scenarios"


def _find_scenario():
    from schedrl.scenarios.registry import get_scenario, user_files

    assert get_scenario("mysite").name == "mysite"
    return user_files()["mysite"]


def _data_path(tmp, tiny_gz):
    return _vasp(tmp / "data"), "data"


def _find_jobs():
    from schedrl.agents.rlschert.config import RLSchertEnvConfig

    return RLSchertEnvConfig().jobs_path()


def _shared_dir(tmp, tiny_gz):
    return _vasp(tmp / "shared" / "data"), "shared"


def _find_shared_jobs():
    from schedrl.dtsim.jobs import vasp_jobs_path

    return vasp_jobs_path()


def _zoo_dir(tmp, tiny_gz):
    from schedrl.zoo.manifest import MANIFEST_FILE

    (tmp / "zoo").mkdir()
    path = tmp / "zoo" / MANIFEST_FILE
    path.write_text('{"format": 2, "policies": {}}\n')
    return path, "zoo"


def _find_zoo():
    from schedrl.zoo.manifest import manifest_path

    return manifest_path()


CASES = {
    paths.TRACE_PATH: (_trace_path, _find_trace),
    paths.TRACES_DIR: (_traces_dir, _find_trace),
    paths.CACHE_DIR: (_cache_dir, _find_trace),
    paths.SCENARIO_PATH: (_scenario_path, _find_scenario),
    paths.DATA_PATH: (_data_path, _find_jobs),
    paths.SHARED_DIR: (_shared_dir, _find_shared_jobs),
    paths.ZOO_DIR: (_zoo_dir, _find_zoo),
}


def test_every_path_variable_has_a_case():
    assert set(CASES) == set(paths.VARIABLES)


@pytest.fixture
def isolated(monkeypatch, tmp_path):
    """None of the path variables set (the cache in tmp_path, as every test keeps it out of the home directory)."""
    for name in paths.VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(paths.CACHE_DIR, str(tmp_path / "unused-cache"))
    monkeypatch.setenv(paths.SHARED_DIR, str(tmp_path / "no-shared"))  # ../shared's VASP file must not answer
    return tmp_path


def chdir_to_a_trial_dir(base: Path, relative: str, monkeypatch) -> Path:
    """Into a new directory under `base` from which `relative` names nothing, as a Tune trial's working directory
    is (`relative` climbs as many levels as the start is deep: the directory goes deeper than that)."""
    trial = base / "trial"
    trial.mkdir()
    monkeypatch.chdir(trial)
    while Path(relative).exists():
        trial = trial / "d"
        trial.mkdir()
        monkeypatch.chdir(trial)
    return trial


@pytest.mark.parametrize("name", list(CASES))
def test_a_relative_value_finds_the_same_as_the_absolute_one_after_a_chdir(name, isolated, monkeypatch, tiny_gz):
    make, find = CASES[name]
    tmp = isolated / "site"
    tmp.mkdir()
    target, sub = make(tmp, tiny_gz)
    absolute = tmp / sub
    monkeypatch.setenv(name, str(absolute))
    by_absolute = find()
    assert by_absolute is not None and Path(by_absolute).samefile(target)
    assert os.environ[name] == str(absolute)  # an absolute value is left as given

    relative = os.path.relpath(absolute, paths.START_DIR)
    assert not Path(relative).is_absolute()
    monkeypatch.setenv(name, relative)
    chdir_to_a_trial_dir(isolated, relative, monkeypatch)
    by_relative = find()
    assert by_relative == by_absolute
    assert os.environ[name] == str(absolute)  # what Ray's workers and subprocesses started from now on inherit


@pytest.mark.parametrize("name", list(paths.VARIABLES))
def test_absolutize_environment_rewrites_relative_and_home_entries(name, monkeypatch):
    """What `import schedrl` does before anything can start Ray: every set variable made absolute."""
    monkeypatch.setenv(name, "some/dir")
    paths.absolutize_environment()
    assert os.environ[name] == os.path.normpath(paths.START_DIR / "some/dir")
    given = f"~{os.pathsep}rel" if paths.VARIABLES[name] else "~/y"
    monkeypatch.setenv(name, given)
    paths.absolutize_environment()
    expected = (f"{Path.home()}{os.pathsep}{paths.START_DIR / 'rel'}" if paths.VARIABLES[name]
                else str(Path.home() / "y"))
    assert os.environ[name] == expected


def test_a_list_variable_skips_empty_entries_and_keeps_absolute_ones(monkeypatch, tmp_path):
    monkeypatch.setenv(paths.TRACE_PATH, f"{tmp_path}{os.pathsep}{os.pathsep}")
    assert paths.env_paths(paths.TRACE_PATH) == [tmp_path]
    assert os.environ[paths.TRACE_PATH] == f"{tmp_path}{os.pathsep}{os.pathsep}"  # all absolute: untouched
    monkeypatch.setenv(paths.TRACES_DIR, "")
    assert paths.env_path(paths.TRACES_DIR) is None


def test_a_relative_xdg_cache_home_is_ignored(monkeypatch, tmp_path):
    """The XDG specification: a relative XDG_CACHE_HOME is invalid and ignored (it would move with the trial)."""
    from schedrl.workload.cache import cache_dir

    monkeypatch.delenv(paths.CACHE_DIR)
    monkeypatch.setenv("XDG_CACHE_HOME", "rel-cache")
    assert cache_dir() == Path(os.path.expanduser("~")) / ".cache" / "schedrl"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_dir() == tmp_path / "schedrl"


def test_only_paths_py_reads_schedrl_variables_from_the_environment():
    """The class of bug stays fixed: a module reading a `SCHEDRL_*` variable itself would read a relative value
    against the working directory of the moment. Every `os.environ` / `os.getenv` read naming a `SCHEDRL_*` string
    (or a `*_ENV` constant) outside schedrl/paths.py is refused; a new path variable belongs in `paths.VARIABLES`."""
    root = Path(paths.__file__).parent
    found = []
    for file in sorted(root.rglob("*.py")):
        if file.name == "paths.py" and file.parent == root:
            continue
        for node in ast.walk(ast.parse(file.read_text(), str(file))):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            func = ast.unparse(node.func)
            if func not in ("os.environ.get", "os.getenv", "os.environ.setdefault", "environ.get", "getenv"):
                continue
            arg = node.args[0]
            text = arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else ast.unparse(arg)
            if text.startswith("SCHEDRL_") or text.endswith("_ENV"):
                found.append(f"{file.relative_to(root.parent)}:{node.lineno}: {ast.unparse(node)}")
        for node in ast.walk(ast.parse(file.read_text(), str(file))):
            if isinstance(node, ast.Subscript) and ast.unparse(node.value) == "os.environ":
                key = node.slice
                if isinstance(key, ast.Constant) and str(key.value).startswith("SCHEDRL_"):
                    found.append(f"{file.relative_to(root.parent)}:{node.lineno}: {ast.unparse(node)}")
    assert found == []
