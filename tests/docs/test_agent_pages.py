"""The per-agent pages (docs/agents/): every option of `schedrl train AGENT --help` is documented, the commands use a
standard scenario where one exists, the summary tables link to experiment-log entries that exist, every relative
link of the agent pages and the experiment logs resolves (file and anchor), and no page cites a numbered issue.

They are a manual, not a lab notebook: each at most about 2,000 words, with no run log (dated runs, run times, the
machine's load) anywhere outside docs/experiments/, and their "Where it stands today" rendered from the committed
leaderboard."""
from __future__ import annotations

import argparse
import re
import unicodedata
from pathlib import Path

import pytest

from schedrl.cli.main import build_parser

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"

PAGES = sorted(p.name for p in (DOCS / "agents").glob("*.md"))
LOGS = {name for name in PAGES if (DOCS / "experiments" / name).is_file()}  # pages with an experiment log


def subparser(parser: argparse.ArgumentParser, *names: str) -> argparse.ArgumentParser:
    for name in names:
        action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = action.choices[name]
    return parser


def options(parser: argparse.ArgumentParser) -> set[str]:
    return {o for a in parser._actions for o in a.option_strings if o.startswith("--") and o != "--help"}


TRAIN = build_parser("train")
TUNED = build_parser("tuned")
AGENTS = sorted(next(a for a in subparser(TRAIN, "train")._actions
                     if isinstance(a, argparse._SubParsersAction)).choices)


def code(text: str) -> str:
    return "\n".join(text.split("```")[1::2]).replace("\\\n", " ")


def pages_of(agent: str) -> list[str]:
    """The agent pages whose commands train `agent`: that is how a page says which agents it documents."""
    return [page for page in PAGES
            if re.search(rf"(?m)\bschedrl train {re.escape(agent)}(?=\s|$)", code((DOCS / "agents" / page).read_text()))]


@pytest.mark.parametrize("agent", AGENTS)
def test_every_agent_has_a_page(agent):
    assert pages_of(agent), f"no page under docs/agents/ shows `schedrl train {agent}` (every agent needs its page)"


@pytest.mark.parametrize("agent", AGENTS)
def test_the_page_lists_every_option_of_train_help(agent):
    for page in pages_of(agent):
        text = (DOCS / "agents" / page).read_text()
        missing = sorted(o for o in options(subparser(TRAIN, "train", agent)) if f"`{o}" not in text)
        assert not missing, f"docs/agents/{page} does not document {missing} of `schedrl train {agent} --help`"


@pytest.mark.parametrize("command", ["fit", "evaluate"])
def test_the_tuned_rule_page_lists_every_option(command):
    text = (DOCS / "agents" / "tuned-rule.md").read_text()
    missing = sorted(o for o in options(subparser(TUNED, "tuned", command)) if o not in text)
    assert not missing, f"docs/agents/tuned-rule.md does not document {missing} of `schedrl tuned {command}`"


@pytest.mark.parametrize("agent", AGENTS)
def test_commands_use_a_standard_scenario_where_one_exists(agent):
    from schedrl.scenarios.registry import standard

    names = {name for name, scenario in standard().items() if agent in scenario.agents}
    if not names:
        pytest.skip(f"no standard scenario for {agent}")
    for page in pages_of(agent):
        used = set(re.findall(r"--scenario\s+(\S+)", code((DOCS / "agents" / page).read_text())))
        assert used & names, f"docs/agents/{page}: no command uses --scenario with one of {sorted(names)}"
        assert used <= set(standard()), f"docs/agents/{page}: unknown scenarios {sorted(used - set(standard()))}"


@pytest.mark.parametrize("page", PAGES)
def test_the_page_has_the_sections_a_reader_looks_for(page):
    text = (DOCS / "agents" / page).read_text()
    headings = set(re.findall(r"^## (.+)$", text, re.M))
    assert {"Options", "Zoo policies", "What it reproduces"} <= headings, headings
    table = text.split("## What it reproduces", 1)[1]
    header = "| result | paper | ours | protocol | budget | seeds | verdict | log |"
    assert header in table, f"docs/agents/{page}: no summary table with the columns {header}"
    rows = [r for r in table.split(header, 1)[1].splitlines()[1:] if r.startswith("|") and not re.fullmatch(r"[|:\- ]+", r)]
    assert rows
    if page in LOGS:
        for row in rows:
            tested = [t for t in re.findall(r"`(tests/[\w/.-]+\.py)`", row) if (REPO / t).is_file()]
            assert f"](../experiments/{page}#" in row or tested, \
                f"docs/agents/{page}: a row without its log entry (or the test that checks it): {row[:80]}"


def test_user_facing_pages_cite_no_numbered_issue():
    cited = []
    for path in sorted([*(DOCS / "agents").rglob("*.md"), DOCS / "architecture.md"]):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"\bissues?\b", line, re.I) or re.search(r"(?<![\w(/#])#\d+\b", line):
                cited.append(f"{path.relative_to(REPO)}:{number}: {line.strip()[:100]}")
    assert not cited, "\n".join(cited)


def slug(title: str) -> str:
    """Python-Markdown's toc slug (what MkDocs uses for heading anchors)."""
    title = re.sub(r"`|\*\*|\\", "", title)
    title = re.sub(r"\[([^]]*)\]\([^)]*\)", r"\1", title)
    title = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    title = re.sub(r"[^\w\s-]", "", title).strip().lower()
    return re.sub(r"[-\s]+", "-", title)


def anchors(path: Path) -> set[str]:
    found, seen = set(), {}
    fence = False
    for line in path.read_text().splitlines():
        if line.lstrip().startswith("```"):
            fence = not fence
        match = None if fence else re.match(r"^#{1,6} (.+?)\s*#*\s*$", line)
        if match:
            base = slug(match.group(1))
            name = base if base not in seen else f"{base}_{seen[base]}"
            seen[base] = seen.get(base, 0) + 1
            found.add(name)
    return found


LINKED = sorted([*(DOCS / "agents").rglob("*.md"), *(DOCS / "experiments").glob("*.md")])


@pytest.mark.parametrize("page", LINKED, ids=[str(p.relative_to(DOCS)) for p in LINKED])
def test_every_relative_link_resolves(page):
    text = "\n".join(page.read_text().split("```")[0::2])
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+://|mailto:", target):
            continue
        file, _, anchor = target.partition("#")
        path = (page.parent / file).resolve() if file else page
        if DOCS.resolve() not in path.parents and path != DOCS.resolve():
            broken.append(f"{target}: outside docs/")
        elif not path.is_file():
            broken.append(f"{target}: no such file")
        elif anchor and path.suffix == ".md" and anchor not in anchors(path):
            broken.append(f"{target}: no heading with that anchor")
    assert not broken, f"{page.relative_to(REPO)}:\n" + "\n".join(broken)


# ---------------------------------------------------------------------------------------------- a manual

WORDS = 2100
"""An agent page's length: "about 2,000 words" (the implementation in detail has its own page, the runs their log)."""


@pytest.mark.parametrize("page", PAGES)
def test_an_agent_page_is_about_2000_words_at_most(page):
    from schedrl.eval.pages import BLOCK

    # what the page says; its standing is rendered from the board and grows with it (transfer rows)
    words = len(BLOCK.sub("", (DOCS / "agents" / page).read_text()).split())
    assert words <= WORDS, (f"docs/agents/{page}: {words} words; move the implementation detail to "
                            f"docs/agents/details/ and dated runs to docs/experiments/")


RUN_LOG = re.compile(r"\b20\d\d-\d\d-\d\d\b|\bUTC\b|load average|\b2-core\b|shared 2 cores|\bnice -n\b|loaded machine"
                     r"|\bbeside (?:one|two|three|another|other|the)\b[^.|]{0,40}\b(?:trainings?|runs?|fits?)\b", re.I)
"""What a run log says and a manual does not: a date, a clock time, the machine's load, what else was running."""

MANUAL = sorted([*(DOCS / "agents").rglob("*.md"), *(DOCS / "guides").glob("*.md"), DOCS / "zoo.md", DOCS / "index.md",
                 DOCS / "architecture.md", REPO / "README.md"])


@pytest.mark.parametrize("page", MANUAL, ids=[str(p.relative_to(REPO)) for p in MANUAL])
def test_no_run_log_outside_the_experiment_logs(page):
    found = []
    fence = False
    for number, line in enumerate(page.read_text().splitlines(), 1):
        if line.lstrip().startswith("```"):
            fence = not fence
            continue
        prose = re.sub(r"\]\([^)]*\)", "]()", line)  # a link's target may name an entry's date
        if not fence and RUN_LOG.search(prose):
            found.append(f"{page.relative_to(REPO)}:{number}: {line.strip()[:120]}")
    assert not found, "run logs belong in docs/experiments/ (dated entries):\n" + "\n".join(found)


def test_the_run_log_check_catches_a_run_log():
    for line in ("Run on 2026-11-26 from 15:12 UTC", "at a load average of about 11", "beside three trainings",
                 "on the shared 2-core machine", "10 min, shared 2 cores"):
        assert RUN_LOG.search(line), line
    for line in ("one env runner per two cores", "[log](../experiments/dras.md#2026-11-23-speed)", "the base runs"):
        assert not RUN_LOG.search(re.sub(r"\]\([^)]*\)", "]()", line)), line


@pytest.mark.parametrize("page", PAGES)
def test_where_it_stands_is_rendered_from_the_committed_leaderboard(page):
    import json

    from schedrl.eval.pages import BLOCK, render

    text = (DOCS / "agents" / page).read_text()
    assert "\n## Where it stands today\n" in text, f"docs/agents/{page}: no 'Where it stands today' section"
    section = text.split("\n## Where it stands today\n", 1)[1].split("\n## ", 1)[0]
    assert BLOCK.search(section), f"docs/agents/{page}: its standing is not between leaderboard markers"
    board = json.loads((DOCS / "leaderboard.json").read_text())
    assert render(text, board) == text, (f"docs/agents/{page} does not show docs/leaderboard.json: run "
                                         "`python -m schedrl.eval.pages` (or `schedrl leaderboard --publish .`)")


def test_every_zoo_policy_stands_on_its_agents_page():
    """Each zoo policy on the board appears in the block of the page of the agent that made it."""
    import json

    from schedrl.eval.pages import BLOCK
    from schedrl.zoo.manifest import entries, rules

    blocks = {}
    for page in PAGES:
        for match in BLOCK.finditer((DOCS / "agents" / page).read_text()):
            for agent in match.group("agents").split(","):
                blocks[agent] = match.group(0)
    board = json.loads((DOCS / "leaderboard.json").read_text())
    on_board = {r["method"] for b in board["scenarios"] for r in b["rows"]}
    for e in [*entries(), *rules()]:
        if e.name in on_board:
            assert e.fields["agent"] in blocks, f"no agent page has a leaderboard block for {e.fields['agent']}"
            assert f"`{e.name}`" in blocks[e.fields["agent"]], e.name


def test_the_readme_answers_do_the_learned_schedulers_win_from_the_board():
    """One sentence above the results table, rendered from docs/leaderboard.json, so a republish keeps it true."""
    import json

    from schedrl.eval.pages import README_ANSWER, answer, render_answer

    text = (REPO / "README.md").read_text()
    start, end = README_ANSWER
    assert start in text and end in text, "README: no answer block above the results"
    assert text.index(end) < text.index("<!-- leaderboard:start -->"), "README: the answer comes above the table"
    board = json.loads((DOCS / "leaderboard.json").read_text())
    assert render_answer(text, board) == text, "README's answer is not docs/leaderboard.json's: run `python -m schedrl.eval.pages`"
    assert answer(board).startswith("**Do the learned schedulers win?** ")


def test_the_answer_names_a_significant_win():
    from schedrl.eval.pages import answer

    row = {"method": "p", "kind": "zoo", "ratio_to_reference": 0.8, "trained": "transfer",
           "vs_reference": {"verdict": "better", "verdict_holm": "better"}}
    board = {"scenarios": [{"scenario": "s", "reference": "F1", "rows": [row]}]}
    assert "`p` (transfer) on `s` (0.800x F1)" in answer(board)
    row["vs_reference"]["verdict_holm"] = "not distinguishable"
    assert answer(board).startswith("**Do the learned schedulers win?** Not yet")
