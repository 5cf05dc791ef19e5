"""The zoo: exported policies shipped in the package (`schedrl/zoo/policies/NAME/`), listed in `manifest.json`.

A name is looked up in the manifest (`find`; an unknown one gets a "did you mean"); `add` copies an exported policy
in under a name and records it. Each manifest entry repeats what choosing a policy needs (agent, scenario and its
hash, seed, command, budget, training trace and its checksum, machine size, validation score, schedrl version and
commit, weights file size and checksum, the checksum of its policy.json), so `schedrl zoo list` reads one file.

The manifest is what the zoo is: every entry's fields are checked when it is read (`schedrl.zoo.fields`; a
malformed one is one ZooError naming it), a name is one policy or one rule, never both, and every load checks the
files against the manifest's checksums (`find`, `rule_file`) before reading them.
"""

from __future__ import annotations

import difflib
import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from schedrl import paths
from schedrl.zoo import fields as shapes
from schedrl.zoo.card import markdown
from schedrl.zoo.store import (CARD_FILE, FORMAT, LEGACY_WEIGHTS_FILE, POLICY_FILE, Exported, ZooError, check_fields,
                               check_file, file_sha256, load_json, parse, read)

ZOO_DIR = Path(__file__).resolve().parent
"""The zoo shipped in the package: `manifest.json` and `policies/NAME/`."""
MANIFEST_FILE = "manifest.json"
ZOO_DIR_ENV = paths.ZOO_DIR
"""Another zoo directory in place of the package's (tests; a private collection)."""
NAME_PATTERN = re.compile(r"[a-z0-9][a-z0-9._-]*")
"""Zoo names: lowercase letters, digits, `.`, `_`, `-` (a directory name on every platform, and `zoo:NAME` on a
command line)."""


@dataclass(frozen=True)
class Entry:
    """One policy of the manifest."""

    name: str
    fields: dict[str, Any]
    """directory (relative to the manifest's), agent, model, scenario, seed, command, budget, trace, machine, metric,
    validation_score, schedrl_version, git_commit, weights (file, bytes, sha256, precision, parameters)."""
    root: Path
    """The manifest's directory."""

    @property
    def directory(self) -> Path:
        return self.root / self.fields["directory"]


def manifest_path(adding: bool = False) -> Path:
    """The zoo's manifest: `$SCHEDRL_ZOO_DIR/manifest.json` (a relative one taken relative to where the process
    started: `schedrl.paths`), else the package's. The variable must name a directory, and one that exists unless
    `adding` (a policy or rule added to a new zoo creates it): a typo never reads as an empty zoo
    (`schedrl.paths.PathVariableError`)."""
    return (paths.env_path(ZOO_DIR_ENV, must_exist=not adding) or ZOO_DIR) / MANIFEST_FILE


MANIFEST_FORMATS = (1, 2)
"""Manifest formats read: 1 (weights.pt, no policy_sha256) and 2 (FORMAT: safetensors, policy_sha256 required)."""


def _read_manifest(path: Path) -> dict[str, Any]:
    """The manifest at `path`, every entry checked (ZooError naming the entry and its field); an absent file is an
    empty zoo."""
    from schedrl.bounded import TooLarge, read_bounded

    try:
        text = read_bounded(path, "a zoo manifest")
    except TooLarge as e:
        raise ZooError(str(e)) from None
    except (FileNotFoundError, NotADirectoryError):
        return {"format": FORMAT, "policies": {}}
    except IsADirectoryError:
        raise ZooError(f"{path}: a directory, not a zoo manifest") from None
    data = load_json(text, path)
    if not isinstance(data, dict) or not isinstance(data.get("policies"), dict):
        raise ZooError(f"{path}: not a zoo manifest (no `policies` object)")
    if data.get("format") not in MANIFEST_FORMATS:
        raise ZooError(f"{path}: format {data.get('format')!r}; this schedrl reads manifest formats "
                       f"{', '.join(map(str, MANIFEST_FORMATS))}")
    if not isinstance(data.get("rules", {}), dict):
        raise ZooError(f"{path}: rules is not an object of tuned rules by name")
    entry_spec = dict(shapes.POLICY_ENTRY)
    if data["format"] >= 2:
        entry_spec["policy_sha256"] = shapes.SHA256
    for key, spec in (("policies", entry_spec), ("rules", shapes.RULE_ENTRY)):
        for name, fields in (data.get(key) or {}).items():
            if not NAME_PATTERN.fullmatch(name):
                raise ZooError(f"{path}: {key}.{name}: not a zoo name (lowercase letters, digits, '.', '_', '-')")
            check_fields(fields, spec, str(path), f"{key}.{name}")
    both = sorted(set(data["policies"]) & set(data.get("rules") or {}))
    if both:
        raise ZooError(f"{path}: {both[0]} is both a policy and a tuned rule; a zoo name is one or the other "
                       "(rename one)")
    return data


def entries(path: Path | None = None, replacing: str | None = None) -> list[Entry]:
    """The zoo's policies, by name, each entry (but the one `replacing` names, about to be replaced) checked against
    its policy.json (`agrees`: what the manifest copies of it must equal it)."""
    path = path or manifest_path()
    found = [Entry(name, dict(fields), path.parent) for name, fields in sorted(_read_manifest(path)["policies"].items())]
    for entry in found:
        if entry.name != replacing:
            agrees(entry, _policy(entry))
    return found


def rules(path: Path | None = None, replacing: str | None = None) -> list[Entry]:
    """The zoo's tuned rules (`schedrl tuned fit` files, `rules/NAME.json`), by name. Their fields: file (relative to
    the manifest's directory), agent (`tuned`), scenario, seed, command, budget, trace, metric, validation_score,
    schedrl_version, bytes, sha256. Each (but the one `replacing` names) checked against its file (`_rule_agrees`)."""
    path = path or manifest_path()
    found = [Entry(name, dict(fields), path.parent)
             for name, fields in sorted((_read_manifest(path).get("rules") or {}).items())]
    for entry in found:
        if entry.name != replacing:
            _rule_agrees(entry)
    return found


def rule_file(name: str, path: Path | None = None) -> Path | None:
    """The file of the zoo's tuned rule `name`, checked against its sha256 (ZooError, one line, when it is missing or
    changed); None when `name` is not a tuned rule of the zoo."""
    from schedrl.zoo.store import check_file

    entry = next((e for e in rules(path) if e.name == name), None)
    if entry is None:
        return None
    file = entry.root / entry.fields["file"]
    check_file(file, entry.fields["sha256"], f"the manifest's rules.{name}",
               f"zoo:{name} is a tuned rule listed in {entry.root / MANIFEST_FILE}", "copy it again")
    return file


def find(name: str, path: Path | None = None) -> Exported:
    """The zoo policy `name` (ZooError with the closest names for an unknown one)."""
    known = {e.name: e for e in entries(path)}
    if name not in known:
        tuned = {r.name for r in rules(path)}
        if name in tuned:
            raise ZooError(f"zoo:{name} is a tuned rule, not a trained network: use it where a policy name is taken "
                           f"(`schedrl compare --policies f1,zoo:{name}`, `simulate --policy`, the leaderboard)")
        known = [*known, *tuned]
        close = difflib.get_close_matches(name, list(known), n=3, cutoff=0.5)
        close += [n for n in known if name.lower() in n and n not in close][: 3 - len(close)]
        hint = f"did you mean {', '.join(close)}?" if close else \
            ("the zoo is empty" if not known else f"known: {', '.join(sorted(known))}")
        raise ZooError(f"zoo:{name}: no such policy in the zoo ({hint}; `schedrl zoo list` shows them)")
    return checked(known[name])


def _policy(entry: Entry) -> Exported:
    """The policy.json of a manifest entry, checked against the manifest's `policy_sha256` (format 2)."""
    where = f"the manifest's policies.{entry.name}"
    policy = entry.directory / POLICY_FILE
    missing = f"zoo:{entry.name} is listed in {entry.root / MANIFEST_FILE}"
    expected = entry.fields.get("policy_sha256")
    try:
        if expected is not None:
            text = check_file(policy, expected, where, missing, "copy it again or re-add it (`schedrl export --add`)")
        elif policy.is_file():
            text = policy.read_bytes()
        else:
            raise ZooError(f"{policy}: missing ({missing})")
        return Exported(entry.directory.resolve(), parse(text, policy))
    except ZooError as e:
        raise ZooError(str(e) if f"{entry.name}" in str(e) else f"zoo:{entry.name}: {e}") from None


def _contradiction(name: str, key: str, listed: Any, own: Any, source: Path) -> str | None:
    if listed == own:
        return None
    shown = lambda v: json.dumps(v, sort_keys=True)  # noqa: E731
    return (f"zoo:{name}: the manifest's {key} is {shown(listed)}, {source.name} says {shown(own)} ({source}); the "
            f"policy's own file is what it is: re-add it, or correct the manifest")


def agrees(entry: Entry, exported: Exported) -> Exported:
    """`exported`, or ZooError naming both values where the manifest's copy of a field of its policy.json (agent,
    scenario, score, ...: `entry_fields`) says otherwise: policy.json is the source of what the policy is."""
    own = entry_fields(exported, entry.fields["directory"])
    for key, value in own.items():
        if key == "directory" or (key == "policy_sha256" and "policy_sha256" not in entry.fields):
            continue
        problem = _contradiction(entry.name, key, entry.fields.get(key), value, exported.policy_file)
        if problem:
            raise ZooError(problem)
    return exported


def _rule_agrees(entry: Entry) -> None:
    """ZooError naming both values where the manifest's copy of a tuned rule's fields (scenario, seed, trace, metric,
    validation score) differs from the rule file's own (read only where its checksum matches: `rule_file`)."""
    file = entry.root / entry.fields["file"]
    if not file.is_file() or file_sha256(file) != entry.fields["sha256"]:
        return  # refused where it is used (`rule_file`), with the checksum's message
    try:
        record = json.loads(file.read_text())
    except (OSError, ValueError):
        return
    if not isinstance(record, dict):
        return
    scenario = record.get("scenario") if isinstance(record.get("scenario"), dict) else {}
    validation = record.get("validation") if isinstance(record.get("validation"), dict) else {}
    own = {"scenario": {"name": scenario.get("name"), "sha256": scenario.get("sha256")}, "seed": record.get("seed"),
           "trace": record.get("trace"), "metric": record.get("metric"), "validation_score": validation.get("score")}
    for key, value in own.items():
        problem = _contradiction(entry.name, key, entry.fields.get(key), value, file)
        if problem:
            raise ZooError(problem)


def checked(entry: Entry) -> Exported:
    """The exported policy of a manifest entry, its files checked against the manifest's checksums: policy.json
    (`policy_sha256`, format 2) and the weights (`weights.sha256`, as policy.json must record it too), and the
    manifest's copies of its fields against policy.json (`agrees`); the weights' bytes are checked again when read
    (`Exported.tensors`)."""
    where = f"the manifest's policies.{entry.name}"
    missing = f"zoo:{entry.name} is listed in {entry.root / MANIFEST_FILE}"
    exported = _policy(entry)
    policy = exported.policy_file
    recorded, own = entry.fields["weights"], exported.data["weights"]
    if (own["file"], own["sha256"]) != (recorded["file"], recorded["sha256"]):
        raise ZooError(f"{policy}: records weights {own['file']} sha256 {own['sha256'][:12]}..., {where} records "
                       f"{recorded['file']} sha256 {recorded['sha256'][:12]}...: the policy was changed; copy it "
                       "again or re-add it")
    check_file(exported.weights_file, recorded["sha256"], where, missing, "copy it again or re-add it")
    if exported.name != entry.name:
        raise ZooError(f"{policy}: names itself {exported.name!r}, the manifest lists it as {entry.name!r}")
    return agrees(entry, exported)


def entry_fields(exported: Exported, directory: str) -> dict[str, Any]:
    """What the manifest records of an exported policy stored at `directory` (relative to the zoo)."""
    card, weights = exported.card, exported.data["weights"]
    return {"directory": directory, "agent": card["agent"], "model": card["model"], "scenario": card["scenario"],
            "seed": card["seed"], "command": card["command"], "budget": card["budget"], "trace": card["trace"],
            "machine": card["machine"], "metric": card["validation"]["metric"],
            "validation_score": card["validation"]["score"], "schedrl_version": card["schedrl_version"],
            "git_commit": card["git_commit"],
            "weights": {k: weights[k] for k in ("file", "bytes", "sha256", "precision", "parameters")},
            "policy_sha256": file_sha256(exported.policy_file)}


def _same_command(a: str, b: str) -> bool:
    """Two training commands that differ at most in `--out DIR` and `--seed N`."""
    def core(command: str) -> str:
        return re.sub(r"\s--(out|seed)[ =]\S+", "", command).strip()
    return core(a) == core(b)


def seed_rows(fields: dict[str, Any]) -> list[str]:
    """The manifest's `seeds` record of an entry as text lines: the spread over three seeds of the same training
    command that the experiment logs hold (each value is that log's; tests/zoo check them against it)."""
    seeds = fields.get("seeds")
    if not seeds:
        return []
    lines = [f"three seeds of `{seeds['command']}` ({seeds['metric']}; {seeds['source']}):"]
    for row in seeds["rows"]:
        values = row["values"]
        mean = sum(values.values()) / len(values)
        spread = ", ".join(f"seed {k} {v:,.2f}" for k, v in sorted(values.items()))
        lines.append(f"  {row['set']}: {spread}; mean {mean:,.2f}, range {max(values.values()) - min(values.values()):,.2f}"
                     f" ({row['reference']} {row['reference_value']:,.2f})")
    if seeds.get("note"):
        lines.append(f"  {seeds['note']}")
    return lines


def _check_name(name: str, example: str) -> None:
    from schedrl.heuristics import HEURISTICS

    if not NAME_PATTERN.fullmatch(name):
        raise ZooError(f"zoo name {name!r}: use lowercase letters, digits, '.', '_' and '-' (e.g. {example})")
    if name.lower() in HEURISTICS:
        raise ZooError(f"zoo name {name!r} is a heuristic's: choose another (e.g. {example})")


def _write(path: Path, data: dict[str, Any]) -> None:
    """The manifest back to `path` (atomically), its policies and rules sorted by name."""
    from schedrl.outputs import atomic_write

    path.parent.mkdir(parents=True, exist_ok=True)
    data["format"] = FORMAT
    for key in ("policies", "rules"):
        if key in data:
            data[key] = dict(sorted(data[key].items()))
    atomic_write(path, json.dumps(data, indent=2) + "\n")


def add_rule(source: str | Path, name: str, command: str, path: Path | None = None, replace: bool = False) -> Entry:
    """Copy the tuned-rule file `source` (`schedrl tuned fit --scenario ... --out FILE`) into the zoo as `name` and
    record it, with the `command` that fitted it, in the manifest's `rules`."""
    from schedrl.heuristics.tuned import RuleError, load_rule

    path = path or manifest_path(adding=True)
    _check_name(name, "tuned-sdsc-sp2-s0")
    try:
        rule = load_rule(source)
    except RuleError as e:
        raise ZooError(str(e)) from None
    record = rule.record
    scenario = record.get("scenario")
    if not isinstance(scenario, dict) or not scenario.get("name"):
        raise ZooError(f"{source}: fitted without --scenario; the zoo keeps rules of a named scenario "
                       "(`schedrl tuned fit --scenario NAME`), which the leaderboard enters them on")
    data = _read_manifest(path)
    # a manifest that contradicts a policy's own file is not written back as it is (but the rule being replaced)
    entries(path), rules(path, replacing=name if replace else None)
    data.setdefault("rules", {})
    if name in data["rules"] or name in data["policies"]:
        if not replace or name in data["policies"]:
            raise ZooError(f"zoo:{name} exists already ({path}); choose another name")
    target = path.parent / "rules" / f"{name}.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    if Path(source).resolve() != target.resolve():
        shutil.copy2(source, target)
    validation = record.get("validation") or {}
    from schedrl import __version__

    fields = {"file": target.relative_to(path.parent).as_posix(), "agent": "tuned",
              "scenario": {"name": scenario["name"], "sha256": scenario.get("sha256")}, "seed": record.get("seed"),
              "command": command, "budget": {"seconds": record.get("budget_s")}, "trace": dict(rule.trace),
              "metric": record.get("metric"), "validation_score": validation.get("score"),
              "schedrl_version": __version__, "bytes": target.stat().st_size, "sha256": file_sha256(target)}
    data["rules"][name] = fields
    _write(path, data)
    return Entry(name, fields, path.parent)


def check_new(name: str, path: Path | None = None, replace: bool = False) -> dict[str, Any]:
    """The manifest, after checking that a policy may be added as `name` (ZooError: a tuned rule's name, or an
    existing policy's without `replace`); `export --add` asks before it exports."""
    path = path or manifest_path(adding=True)
    _check_name(name, "rlscheduler-sdsc-sp2")
    data = _read_manifest(path)
    # a manifest that contradicts a policy's own file is not written back as it is (but the entry being replaced)
    entries(path, replacing=name if replace else None), rules(path)
    if name in (data.get("rules") or {}):
        raise ZooError(f"zoo:{name} is a tuned rule of the zoo ({path}); a zoo name is one policy or one rule: "
                       "choose another name")
    if name in data["policies"] and not replace:
        raise ZooError(f"zoo:{name} exists already ({path}); remove it from the manifest, or choose another name")
    return data


def add(source: str | Path, name: str, path: Path | None = None, replace: bool = False) -> Entry:
    """Copy the exported policy in `source` into the zoo as `name` and record it in the manifest."""
    path = path or manifest_path(adding=True)
    _check_name(name, "rlscheduler-sdsc-sp2")
    from schedrl.outputs import MARKER as OUTPUTS_MARKER
    from schedrl.outputs import atomic_write
    from schedrl.zoo.store import convert

    exported = read(source)
    exported.check_weights()
    data = check_new(name, path, replace)
    target = path.parent / "policies" / name
    if target.resolve() != exported.directory:
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        shutil.copy2(exported.weights_file, target / exported.weights_file.name)
    # the policy takes its zoo name (the manifest records the checksum of its policy.json as written here)
    (target / OUTPUTS_MARKER).unlink(missing_ok=True)  # `export --out` straight into the zoo: the manifest owns it
    atomic_write(target / POLICY_FILE, json.dumps({**exported.data, "name": name}, indent=2) + "\n")
    copied, _ = convert(target)  # a format-1 policy (weights.pt) enters the zoo as safetensors
    copied.check_weights()
    atomic_write(target / CARD_FILE, markdown(copied))
    fields = entry_fields(copied, target.relative_to(path.parent).as_posix())
    before = data["policies"].get(name, {})
    if "seeds" in before and _same_command(before.get("command", ""), fields["command"]):
        fields["seeds"] = before["seeds"]  # the documented spread of the command stays with a retrained seed
    data["policies"][name] = fields
    _write(path, data)
    return Entry(name, fields, path.parent)


def convert_zoo(path: Path | None = None, log=None) -> list[str]:
    """Convert every format-1 policy of the zoo (`weights.pt`) to safetensors (`schedrl.zoo.store.convert`: the
    tensors bit-identical) and record the new files and checksums in its manifest; the names converted."""
    from schedrl.zoo.store import convert

    path = path or manifest_path()
    data = _read_manifest(path)
    done = []
    for name, fields in data["policies"].items():
        if fields["weights"]["file"] != LEGACY_WEIGHTS_FILE and "policy_sha256" in fields:
            continue  # only what is converted gets new checksums: a changed policy is re-added (`add`), not blessed
        exported, converted = convert(checked(Entry(name, fields, path.parent)).directory)
        new = entry_fields(exported, fields["directory"])
        if "seeds" in fields:
            new["seeds"] = fields["seeds"]
        data["policies"][name] = new
        if converted:
            done.append(name)
            if log:
                log(f"{name}: {fields['weights']['file']} {fields['weights']['bytes']:,} B -> "
                    f"{new['weights']['file']} {new['weights']['bytes']:,} B, tensors bit-identical")
    _write(path, data)
    return done
