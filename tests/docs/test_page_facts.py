"""A fact two pages state is stated once, where it is owned: an agent page's zoo table quotes each policy's weights
as the zoo's manifest records them (docs/zoo.md and `schedrl zoo show` print the manifest)."""

from __future__ import annotations

import json
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MANIFEST = json.loads((REPO / "schedrl" / "zoo" / "manifest.json").read_text())["policies"]


def test_the_agent_pages_quote_the_manifest_s_weights():
    found = 0
    for page in sorted((REPO / "docs" / "agents").glob("*.md")):
        for name, size, precision in re.findall(r"(?m)^\| `([a-z0-9.-]+)` \|.*\| ([\d,]+) B, (fp16|fp32)", page.read_text()):
            weights = MANIFEST[name]["weights"]
            assert (int(size.replace(",", "")), precision) == (weights["bytes"], weights["precision"]), \
                f"docs/agents/{page.name}: {name} is {size} B {precision}; the manifest says {weights['bytes']:,} B " \
                f"{weights['precision']}"
            found += 1
    assert found >= 2, "the agent pages' zoo tables were not found"


def test_a_card_names_a_network_only_where_the_agent_has_several():
    from schedrl.zoo import card, manifest

    for name in ("inspector-lublin1-s0", "rlscheduler-default-s0"):
        text = card.markdown(manifest.find(name))
        assert "network None" not in text
        assert (name == "rlscheduler-default-s0") == ("(network kernel)" in text), name
        assert text == (REPO / "schedrl" / "zoo" / MANIFEST[name]["directory"] / "README.md").read_text()
