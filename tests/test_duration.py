"""The one duration parser (`schedrl.duration`) against references written here: the three parsers it replaced
(`duration.parse_duration` as it was, `workload/slurm.py`'s Slurm grammar, and `cli/slurm.py`'s `_duration`), on
hand-picked and generated inputs. Every input they accepted is accepted with the same value; every input they
refused is refused with a one-line ValueError; the one deliberate difference is named below."""

from __future__ import annotations

import argparse
import math
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedrl.duration import SLURM_NO_LIMIT, parse_duration, parse_duration_or_off, parse_slurm_duration

# ---------------------------------------------------------------- the references (the code as it was)

_REF_UNITS = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*")
_REF_SLURM = re.compile(r"^(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?(?:\.(\d+))?$")


def reference_units(value: str, bare_seconds: bool = False) -> float:
    """`parse_duration` on a string, as written before the parsers were merged."""
    m = _REF_UNITS.fullmatch(value)
    if not m or float(m.group(1)) <= 0:
        raise ValueError("refused")
    if not m.group(2) and not bare_seconds:
        raise ValueError("no unit")
    return float(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)]


def reference_slurm(text: str) -> float:
    """`schedrl.workload.slurm.parse_duration`, as written before the parsers were merged."""
    m = _REF_SLURM.match(text.strip())
    if not m:
        raise ValueError("refused")
    days, first, second, third, fraction = m.groups()
    parts = [int(p) for p in (first, second, third) if p is not None]
    if days is not None:
        hours, minutes, seconds = (parts + [0, 0])[:3]
    elif len(parts) == 3:
        hours, minutes, seconds = parts
    else:
        hours, minutes, seconds = 0, parts[0], parts[1] if len(parts) == 2 else 0
    if fraction is not None and (len(parts) < 2 or (days is not None and len(parts) < 3)):
        raise ValueError("refused")
    frac = float("0." + fraction) if fraction else 0.0
    return ((int(days or 0) * 24 + hours) * 60 + minutes) * 60 + seconds + frac


def reference_cli_slurm(text: str) -> float:
    """`schedrl.cli.slurm._duration`, as written before the parsers were merged: days through float()."""
    text = text.strip()
    if text.endswith("d"):
        days = float(text[:-1])
        if days <= 0:
            raise ValueError("refused")
        return days * 86400.0
    return reference_units(text)


def _float_only_days(text: str) -> bool:
    """The deliberate difference: the old `schedrl slurm` option read `<number>d` with float(), so it also took
    spellings no other duration option takes (`1e3d`, `+2d`, `.5d`, `1_0d`, and `nand`/`infd`, which made the
    interval NaN or infinite). The one parser reads every option's days as it reads its hours."""
    text = text.strip()
    return text.endswith("d") and not re.fullmatch(r"\d+(?:\.\d+)?\s*", text[:-1])


def _outcome(function, *args):
    try:
        return function(*args)
    except ValueError as e:
        message = str(e)
        assert message and "\n" not in message, f"{args!r}: the refusal is not one line: {message!r}"
        return "refused"


def _same(a, b) -> bool:
    return a == b or (isinstance(a, float) and isinstance(b, float) and math.isclose(a, b, rel_tol=0, abs_tol=0))


# ---------------------------------------------------------------- inputs

SLURM_FORMATS = [
    ("05:30", 330),                  # MM:SS
    ("00:05:30", 330),               # HH:MM:SS
    ("26:00:00", 93600),             # hours past a day, as written
    ("7", 420),                      # MM (a bare number is minutes)
    ("1-02:03:04", 93784),           # D-HH:MM:SS
    ("2-00", 172800),                # D-HH
    ("1-02:03", 93780),              # D-HH:MM
    ("01:02.345", 62.345),           # MM:SS.mmm (TotalCPU)
    ("1:02:03.5", 3723.5),           # HH:MM:SS.fraction
    ("365-00:00:00", 31536000),      # what sacct shows for an unlimited job while it runs
    (" 1-0 ", 86400),                # surrounding blanks
]
NOT_SLURM = ["UNLIMITED", "INFINITE", "Partition_Limit", "NOT_SET", "N/A", "INVALID", "", "1:2:3:4", "1-", "-5", "5.5",
             "1-02.5", "1h", "10m", "1-02:03.5"]
CLI_FORMS = [("90s", 90), ("10m", 600), ("20m", 1200), ("1.5h", 5400), ("2d", 172800), (" 3 h ", 10800), ("0.5d", 43200)]
NOT_CLI = ["1h30m", "5", "0s", "0d", "-5m", "soon", "1:00", "", "d", "1.d", "1e3s", "2w"]

_slurm_piece = st.one_of(st.integers(0, 400).map(str), st.sampled_from(["00", "07", "59", "60", "99", "001"]))


@st.composite
def slurm_like(draw) -> str:
    """Strings built from Slurm's grammar, its near misses and the words it prints for no limit."""
    kind = draw(st.integers(0, 3))
    if kind == 3:
        return draw(st.sampled_from([*SLURM_NO_LIMIT, "infinite", "Partition_Limit", "n/a", "INVALID"]))
    text = ":".join(draw(st.lists(_slurm_piece, min_size=1, max_size=4)))
    if draw(st.booleans()):
        text = draw(_slurm_piece) + "-" + text
    if draw(st.booleans()):
        text += "." + draw(st.sampled_from(["5", "345", "0", "", "x"]))
    return draw(st.sampled_from(["", " "])) + text + draw(st.sampled_from(["", " ", "\t"]))


_number = st.one_of(st.integers(0, 10 ** 6).map(str), st.floats(0, 1e6, allow_nan=False).map(lambda x: f"{x:.3f}"),
                    st.sampled_from(["1e3", "+2", ".5", "2.", "1_0", "nan", "inf", "-1", "0", "00", "0.0"]))


@st.composite
def cli_like(draw) -> str:
    """A number (plain or float()-only spellings) and a unit, with blanks around either."""
    blank = st.sampled_from(["", " ", "  "])
    return (draw(blank) + draw(_number) + draw(blank) + draw(st.sampled_from(["", "s", "m", "h", "d", "w", "ms"]))
            + draw(blank))


TEXT = st.text(alphabet="0123456789-:. dhmsUNLIMITED_", max_size=12)

# ---------------------------------------------------------------- the Slurm grammar


@pytest.mark.parametrize("text, seconds", SLURM_FORMATS)
def test_every_slurm_duration_format(text, seconds):
    assert parse_slurm_duration(text) == pytest.approx(seconds) == reference_slurm(text)


@pytest.mark.parametrize("text", NOT_SLURM)
def test_what_is_not_a_slurm_duration(text):
    with pytest.raises(ValueError, match="not a Slurm duration"):
        parse_slurm_duration(text)


@settings(max_examples=400, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(slurm_like(), TEXT))
def test_the_slurm_grammar_agrees_with_the_reference(text):
    assert _same(_outcome(parse_slurm_duration, text), _outcome(reference_slurm, text))


# ---------------------------------------------------------------- the forms people write


@pytest.mark.parametrize("text, seconds", CLI_FORMS)
def test_every_command_line_form(text, seconds):
    assert parse_duration(text) == seconds == reference_units(text)


@pytest.mark.parametrize("text", NOT_CLI)
def test_what_is_not_a_command_line_duration(text):
    with pytest.raises(ValueError, match=r"must look like|has no unit"):
        parse_duration(text, "--time-budget")


@settings(max_examples=400, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(cli_like(), TEXT), st.booleans())
def test_the_command_line_forms_agree_with_the_reference(text, bare_seconds):
    ours = _outcome(lambda t: parse_duration(t, "--x", bare_seconds=bare_seconds), text)
    assert _same(ours, _outcome(reference_units, text, bare_seconds))


@settings(max_examples=400, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(cli_like(), TEXT))
def test_the_slurm_commands_options_agree_with_the_reference(text):
    """`schedrl slurm run --interval/--lease/...` read their durations through the one parser."""
    from schedrl.cli.slurm import _duration

    try:
        ours = _duration(text)
    except argparse.ArgumentTypeError as e:
        assert "\n" not in str(e)
        ours = "refused"
    old = _outcome(reference_cli_slurm, text)
    if ours == "refused" and old != "refused":
        from schedrl.cli.slurm import MAX_DURATION_S

        # the deliberate differences: float spellings of days, and durations past ten years (issue 57: a typo)
        assert _float_only_days(text) or old > MAX_DURATION_S, f"{text!r} was {old} and is refused now"
    else:
        assert _same(ours, old)


def test_the_deliberate_difference_is_only_float_spellings_of_days():
    from schedrl.cli.slurm import _duration

    for text in ("1e3d", "+2d", ".5d", "1_0d", "nand", "infd"):
        assert _outcome(reference_cli_slurm, text) != "refused"
        with pytest.raises(argparse.ArgumentTypeError, match="must look like 90s, 20m or 1.5h"):
            _duration(text)
    assert _duration("2d") == _duration("48h") == reference_cli_slurm("2d") == 172800


def test_off_and_zero():
    assert parse_duration_or_off("off") == parse_duration_or_off("0m") == parse_duration_or_off(0) == 0.0
    assert parse_duration_or_off("24h") == 86400

