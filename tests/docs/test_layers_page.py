"""docs/architecture.md shows the layer map of schedrl/layers.py, rendered (`python -m schedrl.layers --write`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedrl import layers

PAGE = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"


def test_the_architecture_page_shows_the_layer_map():
    text = PAGE.read_text(encoding="utf-8")
    assert text == layers.rendered_page(text), "docs/architecture.md's layer map is stale: python -m schedrl.layers --write"
    for layer in layers.LAYERS:
        assert f"| **{layer.name}** |" in text


def test_a_stale_page_is_rewritten_and_a_page_without_markers_refused(tmp_path, capsys):
    page = tmp_path / "architecture.md"
    page.write_text(f"before\n{layers.START}\n| old |\n{layers.END}\nafter\n", encoding="utf-8")
    assert layers.main(["--write", str(page)]) == 0
    text = page.read_text(encoding="utf-8")
    assert text.startswith("before\n") and text.endswith("after\n") and "| old |" not in text
    assert "| 1 | **base** |" in text
    assert layers.main(["--write", str(page)]) == 0 and "already shows" in capsys.readouterr().out
    page.write_text("no markers\n", encoding="utf-8")
    assert layers.main(["--write", str(page)]) == 2
    assert capsys.readouterr().err.startswith("error: ")
    with pytest.raises(ValueError, match="no <!-- layers:start -->"):
        layers.rendered_page("text")
