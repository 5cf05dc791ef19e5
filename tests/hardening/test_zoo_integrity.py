"""Issue 47 class 2: the zoo is what its manifest says.

A small zoo (two shipped policies and one tuned rule, copied) is broken in a generated way — a field of a manifest
entry, of a policy.json or of its card deleted or given another value, a checksum zeroed, a byte of the weights
flipped (with or without a policy.json that records the flipped file's checksum), a name given to a policy and a
rule at once, a key written twice — and then listed, shown and loaded. Each run succeeds, or is refused with one
`error:` line that names the entry; a change to any file the manifest checksums never loads.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path

import pytest
from harness import assert_clean_outcome, run_cli
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from schedrl.zoo import fields as shapes
from schedrl.zoo import manifest
from schedrl.zoo.store import ZooError

EXAMPLES = 120
POLICIES = ("linear-default-s0", "rlscheduler-default-s0")
RULE = "tuned-lublin1-s0"
SHIPPED = json.loads((manifest.ZOO_DIR / manifest.MANIFEST_FILE).read_text())


def small_zoo(root: Path) -> Path:
    """Two shipped policies and one rule, with their manifest entries, in `root`; the manifest's path."""
    for name in POLICIES:
        shutil.copytree(manifest.ZOO_DIR / "policies" / name, root / "policies" / name)
    (root / "rules").mkdir()
    shutil.copy2(manifest.ZOO_DIR / SHIPPED["rules"][RULE]["file"], root / "rules" / f"{RULE}.json")
    data = {"format": SHIPPED["format"], "policies": {n: SHIPPED["policies"][n] for n in POLICIES},
            "rules": {RULE: SHIPPED["rules"][RULE]}}
    (root / manifest.MANIFEST_FILE).write_text(json.dumps(data, indent=2))
    return root / manifest.MANIFEST_FILE


@contextmanager
def zoo_dir(root: Path):
    before = os.environ.get(manifest.ZOO_DIR_ENV)
    os.environ[manifest.ZOO_DIR_ENV] = str(root)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(manifest.ZOO_DIR_ENV, None)
        else:
            os.environ[manifest.ZOO_DIR_ENV] = before


def paths(value, prefix=()) -> list[tuple]:
    """Every key path inside a JSON object (lists' items by index)."""
    out = []
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        out.append((*prefix, key))
        out += paths(item, (*prefix, key))
    return out


def apply(data, path: tuple, value, delete: bool):
    target = data
    for key in path[:-1]:
        target = target[key]
    if delete:
        del target[path[-1]]
    else:
        target[path[-1]] = value


JSON_VALUES = st.one_of(st.none(), st.booleans(), st.integers(-3, 10**6), st.floats(allow_nan=False),
                        st.sampled_from(["", "x", "0" * 64, "../../etc", "/abs", "none", "fp16", "weights.pt"]),
                        st.just([]), st.just({}), st.just({"name": 1}))


@st.composite
def breakage(draw):
    """(kind, details) of one change to the small zoo."""
    kind = draw(st.sampled_from(["manifest-field", "policy-field", "zero-checksum", "flip-weights",
                                 "flip-weights-matching-policy", "shared-name", "duplicate-key", "untouched"]))
    name = draw(st.sampled_from(POLICIES))
    if kind == "manifest-field":
        section, entry = draw(st.sampled_from([("policies", n) for n in POLICIES] + [("rules", RULE)]))
        path = draw(st.sampled_from(paths(SHIPPED[section][entry])))
        return kind, (section, entry, path, draw(JSON_VALUES), draw(st.booleans()))
    if kind == "policy-field":
        policy = json.loads((manifest.ZOO_DIR / "policies" / name / "policy.json").read_text())
        path = draw(st.sampled_from([p for p in paths(policy) if p[0] != "record" or len(p) < 3]))
        return kind, (name, path, draw(JSON_VALUES), draw(st.booleans()))
    if kind in ("flip-weights", "flip-weights-matching-policy"):
        return kind, (name, draw(st.integers(0, 10**6)))
    if kind == "zero-checksum":
        return kind, (name, draw(st.sampled_from(["weights", "policy_sha256"])))
    return kind, (name,)


def break_zoo(path: Path, kind: str, details: tuple) -> str:
    """Apply the change; the entry it touches."""
    root = path.parent
    data = json.loads(path.read_text())
    if kind == "manifest-field":
        section, entry, key_path, value, delete = details
        apply(data[section][entry], key_path, value, delete)
        path.write_text(json.dumps(data))
        return entry
    name = details[0]
    policy_file = root / "policies" / name / "policy.json"
    if kind == "policy-field":
        _, key_path, value, delete = details
        policy = json.loads(policy_file.read_text())
        apply(policy, key_path, value, delete)
        policy_file.write_text(json.dumps(policy, indent=2))
    elif kind.startswith("flip-weights"):
        policy = json.loads(policy_file.read_text())
        weights = root / "policies" / name / policy["weights"]["file"]
        raw = bytearray(weights.read_bytes())
        raw[details[1] % len(raw)] ^= 0xFF
        weights.write_bytes(bytes(raw))
        if kind == "flip-weights-matching-policy":
            import hashlib

            policy["weights"]["sha256"] = hashlib.sha256(bytes(raw)).hexdigest()
            policy_file.write_text(json.dumps(policy, indent=2))
    elif kind == "zero-checksum":
        if details[1] == "weights":
            data["policies"][name]["weights"]["sha256"] = "0" * 64
        else:
            data["policies"][name]["policy_sha256"] = "0" * 64
        path.write_text(json.dumps(data))
    elif kind == "shared-name":  # `export --add --name tuned-lublin1-s0` before this issue
        data["policies"][RULE] = data["policies"].pop(name)
        path.write_text(json.dumps(data))
        return RULE
    elif kind == "duplicate-key":
        text = json.dumps(data, indent=2)
        path.write_text(text.replace(f'"{name}": {{', f'"{name}": {{"agent": "x", ', 1))
    return name


CHECKSUMMED = ("policy-field", "zero-checksum", "flip-weights", "flip-weights-matching-policy")


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(change=breakage())
def test_a_broken_zoo_is_refused_in_one_line_naming_the_entry(change):
    kind, details = change
    with tempfile.TemporaryDirectory() as tmp:
        path = small_zoo(Path(tmp))
        touched = break_zoo(path, kind, details)
        with zoo_dir(Path(tmp)):
            runs = [("zoo", "list"), ("zoo", "show", touched), ("zoo", "show", RULE)]
            results = [run_cli(*argv) for argv in runs]
            from schedrl.agents.checkpoint import CheckpointError
            from schedrl.eval.policies import resolve_policy

            try:
                resolve_policy(f"zoo:{touched}")
                loaded = None
            except (CheckpointError, ZooError, ValueError) as e:
                loaded = str(e)
    for argv, (status, out, err) in zip(runs, results):
        assert_clean_outcome(status, out, err, argv)
    event(f"{kind}: list exit {results[0][0]}, show exit {results[1][0]}, load {'refused' if loaded else 'ok'}")
    for status, _out, err in results:
        if status == 2:
            assert touched in err, err  # the entry is named (its manifest key or its directory)
    if loaded is not None:
        assert "\n" not in loaded and touched in loaded, loaded
    if kind in CHECKSUMMED or kind in ("shared-name", "duplicate-key"):
        assert loaded is not None, (kind, details)  # a file the manifest checksums was changed: never loads
        assert results[1][0] == 2
    if kind == "untouched":
        assert loaded is None and all(r[0] == 0 for r in results)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(value=st.recursive(JSON_VALUES, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                                 st.dictionaries(st.sampled_from(
                                                                     ["name", "file", "weights", "card", "x"]),
                                                                     inner, max_size=3)), max_leaves=8),
       spec=st.sampled_from([shapes.POLICY_ENTRY, shapes.RULE_ENTRY, shapes.POLICY_FILE, shapes.CARD]))
def test_the_field_checker_answers_every_json_value_in_one_line(value, spec):
    found = shapes.problem(value, spec, "policies.x")
    assert found is None or ("\n" not in found and found.startswith("policies.x"))


def test_every_shipped_policy_is_safetensors_and_checked_against_the_manifest(monkeypatch):
    from schedrl.zoo import store

    checked = []
    original = store.check_file
    monkeypatch.setattr(store, "check_file", lambda path, *a, **k: checked.append(Path(path).name) or original(path, *a, **k))
    monkeypatch.setattr(manifest, "check_file", store.check_file)
    data = json.loads((manifest.ZOO_DIR / manifest.MANIFEST_FILE).read_text())
    assert data["format"] == 2
    for entry in manifest.entries(manifest.ZOO_DIR / manifest.MANIFEST_FILE):
        assert entry.fields["weights"]["file"] == "weights.safetensors"
        assert not (entry.directory / "weights.pt").exists()
        checked.clear()
        exported = manifest.checked(entry)
        exported.weights()
        assert checked == ["policy.json", "weights.safetensors", "weights.safetensors"], (entry.name, checked)


def test_a_format_1_policy_still_loads_with_one_deprecation_line_and_converts_bit_identical(tmp_path, capsys):
    import torch
    from safetensors.torch import load_file

    from schedrl.agents.checkpoint import load_exported
    from schedrl.zoo import store

    source = manifest.ZOO_DIR / "policies" / "rlscheduler-default-s0"
    legacy = tmp_path / "legacy"
    shutil.copytree(source, legacy)
    tensors = load_file(legacy / "weights.safetensors")
    (legacy / "weights.safetensors").unlink()
    torch.save(tensors, legacy / "weights.pt")
    data = json.loads((legacy / "policy.json").read_text())
    data["format"] = 1
    data["weights"].update(file="weights.pt", sha256=store.file_sha256(legacy / "weights.pt"),
                           bytes=(legacy / "weights.pt").stat().st_size)
    (legacy / "policy.json").write_text(json.dumps(data))
    load_exported(legacy)
    load_exported(legacy)
    err = capsys.readouterr().err.splitlines()
    assert len([line for line in err if "read until schedrl 0.2.0" in line]) == 1, err
    status, out, err = run_cli("zoo", "convert", str(legacy))
    assert status == 0, err
    assert "bit-identical" in out and not (legacy / "weights.pt").exists()
    assert store.identical(load_file(legacy / "weights.safetensors"), tensors)
    assert (legacy / "weights.safetensors").read_bytes() == (source / "weights.safetensors").read_bytes()


@pytest.mark.parametrize("name", [RULE, "linear-default-s0"])
def test_a_name_is_one_policy_or_one_rule(tmp_path, name):
    path = small_zoo(tmp_path / "zoo")
    other = "rlscheduler-default-s0" if name == RULE else RULE
    with pytest.raises(ZooError, match=f"zoo:{name}"):
        if name == RULE:  # `export --add --name tuned-lublin1-s0`
            manifest.add(tmp_path / "zoo" / "policies" / other, name, path)
        else:  # `zoo add-rule --name linear-default-s0`
            manifest.add_rule(tmp_path / "zoo" / "rules" / f"{RULE}.json", name, "c", path, replace=True)
