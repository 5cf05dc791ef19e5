"""Every "beats / better / wins / outperforms" in the README, docs/index.md and the agent pages is a verdict with its
record (DESIGN.md, principle 9), or the test names the sentence.

A sentence passes where it is rendered from docs/leaderboard.json (between `<!-- leaderboard...:start/end -->`
markers); where it is a row of a results table whose row links its experiment-log entry (`verdict` and `log`
columns); where the word only defines the rule ("lower is better", "better or worse", "better on 7 of 11"); where it
reports what a paper claims ("the paper reports ..."); or where it links the experiment-log entry it restates and
says whether its verdict is corrected for multiple comparisons.
"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PAGES = ["README.md", "docs/index.md", *sorted(f"docs/agents/{p.name}" for p in (REPO / "docs/agents").glob("*.md"))]
CLAIM = re.compile(r"\b(beat|beats|beating|better|wins?|won|winning|outperform\w*)\b", re.I)
GENERATED = re.compile(r"<!-- leaderboard(:[A-Za-z0-9_-]+|):start -->.*?<!-- leaderboard\1:end -->", re.S)
DEFINITIONS = re.compile(
    r"(lower|higher|larger|smaller) is better|\"?better\"? or \"?worse\"?|better(/| on \d+ (of|out of) )|"
    r"better, equal|green better|on how many sequences it was better|better on how many sequences|so that (it|rejecting) is better|"
    r"where (rejecting|it) is better|beat(ing)?[- ]the[- ](best[- ])?heuristic", re.I)
"""Words that name the rule, a count or a page, not a result."""
PAPER = re.compile(r"\bthe paper('s)?\b|\bthe authors\b|\breports?\b", re.I)
RECORD = re.compile(r"\]\((\.\./)?(docs/)?experiments/[a-z0-9-]+\.md#[a-z0-9-]+\)")
CORRECTION = re.compile(r"\b(not corrected|uncorrected|corrected)\b", re.I)


def sentences(text: str) -> list[str]:
    """The prose sentences and the table rows of a page, outside generated blocks and code."""
    text = GENERATED.sub("", text)
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    out: list[str] = []
    for block in re.split(r"\n\s*\n", text):
        lines = block.splitlines()
        if lines and all(line.startswith("|") for line in lines):
            header = lines[0].lower()
            recorded = "verdict" in header and "log" in header
            out += [("RECORDED " if recorded else "") + line for line in lines[2:]]
            continue
        flat = " ".join(block.split())
        out += re.split(r"(?<=[.!?])\s+(?=[A-Z(*`\[])", flat)
    return out


def unsupported(sentence: str) -> bool:
    if not CLAIM.search(DEFINITIONS.sub("", sentence)):
        return False
    if sentence.startswith("RECORDED ") and RECORD.search(sentence):
        return False
    if PAPER.search(sentence):
        return False
    return not (RECORD.search(sentence) and CORRECTION.search(sentence))


def test_the_rule_finds_a_bare_claim_and_passes_a_recorded_one():
    bare = "The inspector beats F1 on default for 3 seeds of 3."
    recorded = ("The inspector is better than F1 on default for 2 seeds of 3, not corrected for multiple comparisons "
                "([the campaign](docs/experiments/inspector-teacher.md#the-campaign)).")
    assert [s for s in sentences(bare + "\n\n" + recorded) if unsupported(s)] == [bare]
    assert not unsupported("Average wait (lower is better); better on 7 of 11 sequences.")
    assert not [s for s in sentences("<!-- leaderboard:x:start -->\nIt wins.\n<!-- leaderboard:x:end -->\n")
                if unsupported(s)]


def test_every_claim_has_its_verdict_and_record():
    found = [f"{page}: {s[:300]}" for page in PAGES for s in sentences((REPO / page).read_text()) if unsupported(s)]
    assert not found, ("claims without a generated source or a linked record and corrected/uncorrected verdict "
                       "(DESIGN.md principle 9):\n" + "\n".join(found))
