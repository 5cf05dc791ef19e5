"""The zoo manifest's three-seed spreads are the experiment logs' numbers, and survive a retrained seed."""

import json
import re
from pathlib import Path

import pytest

from schedrl.zoo import manifest

ROOT = Path(__file__).resolve().parents[2]


def _anchor(heading: str) -> str:
    """The heading's anchor as MkDocs (Python-Markdown's toc) makes it: runs of spaces and hyphens become one '-'."""
    return re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", heading.lower()).strip())


def _section(source: str) -> str:
    path, _, anchor = source.partition("#")
    text = (ROOT / path).read_text()
    parts = re.split(r"^## ", text, flags=re.M)
    for part in parts[1:]:
        if _anchor(part.splitlines()[0]) == anchor:
            return part
    raise AssertionError(f"{path} has no heading #{anchor}")


SPREADS = [e for e in manifest.entries() if e.fields.get("seeds")]


def test_some_entries_record_a_spread():
    assert len(SPREADS) >= 2


@pytest.mark.parametrize("entry", SPREADS, ids=lambda e: e.name)
def test_every_number_of_a_spread_is_in_its_log(entry):
    seeds = entry.fields["seeds"]
    section = _section(seeds["source"])
    for row in seeds["rows"]:
        assert sorted(row["values"]) == ["0", "1", "2"]
        for value in [row["reference_value"], *row["values"].values()]:
            assert f"{value:,.2f}" in section, (entry.name, row["set"], value)
    assert seeds["command"].startswith(("schedrl train ", "schedrl tune "))
    assert len(manifest.seed_rows(entry.fields)) == 1 + len(seeds["rows"]) + bool(seeds.get("note"))


def test_a_retrained_seed_of_the_same_command_keeps_the_spread(tmp_path):
    source = next(e for e in manifest.entries() if e.fields.get("seeds"))
    path = tmp_path / "manifest.json"
    manifest.add(source.directory, "copy", path=path)
    data = json.loads(path.read_text())
    data["policies"]["copy"]["seeds"] = source.fields["seeds"]
    path.write_text(json.dumps(data))
    assert manifest.add(source.directory, "copy", path=path, replace=True).fields["seeds"] == source.fields["seeds"]
    data = json.loads(path.read_text())
    data["policies"]["copy"]["command"] = "schedrl train another --seed 0"
    path.write_text(json.dumps(data))
    assert "seeds" not in manifest.add(source.directory, "copy", path=path, replace=True).fields


def test_same_command_ignores_only_out_and_seed():
    same = manifest._same_command
    assert same("schedrl train x --seed 0 --out a", "schedrl train x --seed 2 --out /b/c")
    assert not same("schedrl train x --lr 1e-3", "schedrl train x --lr 1e-4")
