"""Finding scenarios by name: the standard ones (`schedrl.scenarios.standard`) and a user's own files.

`get_scenario(text)` takes a standard name or the path of a YAML file holding one definition (the shape
`schedrl scenarios show NAME --yaml` prints). Directories in `$SCHEDRL_SCENARIO_PATH` are searched for
`NAME.yaml` too, so a site can keep its scenarios beside its traces.
"""

from __future__ import annotations

import difflib
from pathlib import Path

from schedrl import paths
from schedrl.scenarios.scenario import Scenario
from schedrl.scenarios.standard import STANDARD

SCENARIO_PATH_ENV = paths.SCENARIO_PATH
"""os.pathsep-separated directories searched for `NAME.yaml` / `NAME.yml` scenario files (a relative one is taken
relative to where the process started: `schedrl.paths`)."""


def standard() -> dict[str, Scenario]:
    """Every standard scenario by name, in listing order."""
    return {d["name"]: Scenario.from_dict(d, f"standard scenario {d['name']!r}") for d in STANDARD}


def user_dirs() -> list[Path]:
    """The directories of `$SCHEDRL_SCENARIO_PATH`, absolute (`schedrl.paths.env_paths`)."""
    return paths.env_paths(SCENARIO_PATH_ENV)


def user_files() -> dict[str, Path]:
    """Scenario files found in `$SCHEDRL_SCENARIO_PATH`, by file stem."""
    out: dict[str, Path] = {}
    for directory in user_dirs():
        for path in sorted(directory.glob("*.y*ml")) if directory.is_dir() else ():
            out.setdefault(path.stem, path)
    return out


def load_file(path: str | Path, named: bool = False) -> Scenario:
    """One scenario from a YAML file; ValueError naming the file (and the line of a YAML syntax error, or a key
    written twice). `named`: found by its file's name in `$SCHEDRL_SCENARIO_PATH`, where a `name:` other than the
    file's is refused (it would be listed under one name and known by another)."""
    import yaml

    from schedrl import yamlfile

    from schedrl.bounded import read_bounded

    path = Path(path).expanduser()
    try:
        text = read_bounded(path, "a scenario file").decode("utf-8")
    except OSError as e:
        raise ValueError(f"{path}: cannot read the scenario file ({e.strerror or e})") from None
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a scenario file (not UTF-8 text)") from None
    try:
        data = yamlfile.load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise ValueError(f"{where}: not valid YAML ({getattr(e, 'problem', None) or e})") from None
    if isinstance(data, dict) and "name" not in data:
        data = {"name": path.stem, **data}
    if named and isinstance(data, dict) and data.get("name") != path.stem:
        raise ValueError(f"{path}: name {data.get('name')!r} differs from the file's name {path.stem!r}; a scenario is "
                         "found (`scenarios show`, `--scenario`) and listed by its file's name: make them the same")
    return Scenario.from_dict(data, str(path))


def portable_name(text: str) -> str:
    """`text` as `get_scenario` reads it from any working directory: a scenario file's path made absolute (a Ray
    trial runs in its own directory), a standard or `$SCHEDRL_SCENARIO_PATH` name as it is."""
    text = str(text).strip()
    if text in standard():
        return text
    path = Path(text).expanduser()
    try:
        is_file = path.is_file()
    except OSError:
        return text
    return str(path.resolve()) if is_file else text


def get_scenario(text: str) -> Scenario:
    """A standard scenario by name, a scenario file by path, or `NAME` from `$SCHEDRL_SCENARIO_PATH`."""
    if isinstance(text, Scenario):
        return text
    text = str(text).strip()
    found = standard()
    if text in found:
        return found[text]
    path = Path(text).expanduser()
    try:
        is_file = path.is_file()
    except OSError:  # a name too long to be a path is no file
        is_file = False
    if path.suffix in (".yaml", ".yml") or is_file:
        if not is_file:
            raise ValueError(f"scenario file {path} does not exist")
        return load_file(path)
    files = user_files()
    if text in files:
        return load_file(files[text], named=True)
    names = list(found) + list(files)
    close = difflib.get_close_matches(text, names, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    shown = text if len(text) <= 80 else text[:77] + "..."
    raise ValueError(f"unknown scenario {shown!r}{hint} (`schedrl scenarios list` lists them; a path to a YAML file "
                     f"defines your own)")
