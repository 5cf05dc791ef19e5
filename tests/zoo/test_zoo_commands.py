"""Issue 45 item 4 (the zoo's part): every command the manifest records reproduces its policy as a user types it.

Each policy's `command` is parsed by `schedrl train`'s own parser and options (`cli/train.py:build_spec`, the
scenario's options applied as a run applies them, nothing trained) on the scenario definition its run recorded (a
standard scenario's definition may have changed since: `default` trains on its first 60% today, 70% when
`rlscheduler-default-s0` was trained) and must give the env config, settings and network its run record holds; no
argument is an absolute path of the machine it ran on. A tuned rule's command is
`schedrl tuned fit` with the scenario, seed and budget its file records. (The inspector's command once left out the
`--starvation-wait 0` it was trained with: today's default, 24 h, would train another policy.)
"""

from __future__ import annotations

import contextlib
import io
import json
import shlex
from pathlib import PurePosixPath, PureWindowsPath

import pytest

from schedrl.zoo import manifest

SHIPPED = manifest.ZOO_DIR / manifest.MANIFEST_FILE
POLICIES = manifest.entries(SHIPPED)
FILLED_BY_TRAINING = {"norm"}
"""Env-config fields a run fills from its training data (normalisation), which no command gives; beside an env
config class's own `DERIVED_FIELDS` (RLScheduler's trajectory filtering)."""
PREDATES = {"linear-default-s0": {"train_fraction": (0.7, 1.0)}}
"""(typed, trained) env fields of a policy trained before its agent followed what its recorded command gives:
`linear` trained on the whole trace until 2026-11-28, when `train linear --scenario` began to train on the scenario's
training part (its board rows say "not held out")."""


def _absolute(arg: str) -> bool:
    value = arg.split("=", 1)[-1]
    return PurePosixPath(value).is_absolute() or PureWindowsPath(value).drive != ""


@pytest.mark.parametrize("entry", POLICIES + manifest.rules(SHIPPED), ids=lambda e: e.name)
def test_no_recorded_command_holds_an_absolute_path(entry):
    argv = shlex.split(entry.fields["command"])
    assert argv[0] == "schedrl" and not [a for a in argv if _absolute(a)], entry.fields["command"]
    if entry in POLICIES:
        card = json.loads((entry.directory / "policy.json").read_text())["card"]
        assert card["command"] == entry.fields["command"]


TRAINED = [e for e in POLICIES if not e.fields["command"].startswith("schedrl distill ")]
DISTILLED = [e for e in POLICIES if e.fields["command"].startswith("schedrl distill ")]
"""Zoo policies trained by `schedrl train`, and trees distilled from another zoo policy by `schedrl distill`."""


@pytest.mark.parametrize("entry", DISTILLED, ids=lambda e: e.name)
def test_a_distilled_tree_names_a_zoo_policy_its_record_and_depth_follow(entry):
    from schedrl.cli.main import build_parser

    argv = shlex.split(entry.fields["command"])[1:]
    args = build_parser("distill").parse_args(argv)
    source = manifest.entries(SHIPPED)
    assert args.policy.startswith("zoo:") and args.policy[4:] in {e.name for e in source}
    data = json.loads((entry.directory / "policy.json").read_text())
    parent = json.loads((manifest.ZOO_DIR / "policies" / args.policy[4:] / "policy.json").read_text())["record"]
    assert data["record"]["env_config"] == parent["env_config"]  # the tree runs under its policy's config
    trees = {"inspector": ("tree", "inspector-tree"), "rlscheduler": ("kernel-tree", "kernel-tree")}
    model, network = trees[data["record"]["agent"]]  # what each agent's `schedrl distill` writes
    assert data["record"]["model"] == f"{model}-d{args.depth}" and data["architecture"]["network"] == network


@pytest.mark.integration
@pytest.mark.parametrize("entry", DISTILLED, ids=lambda e: e.name)
def test_the_recorded_distill_command_reproduces_the_shipped_tree(entry, capsys):
    """The recorded command (without --out/--add) prints the shipped tree, threshold for threshold."""
    from schedrl.cli.main import main
    from schedrl.agents import get_agent
    from schedrl.zoo.store import read

    argv = shlex.split(entry.fields["command"])[1:]
    cut = argv.index("--out")
    argv = argv[:cut] + [a for a in argv[cut + 2:] if a != "--add"]
    try:
        assert main(argv) == 0
    except SystemExit:
        raise
    out = capsys.readouterr()
    if "not available locally" in out.err:
        pytest.skip("the policy's training trace is in ../shared (or $SCHEDRL_TRACE_PATH)")
    exported = read(entry.directory)
    shipped = get_agent(exported.record["agent"]).distilled_text(exported).split("```")[1].strip()
    assert shipped in out.out


@pytest.mark.parametrize("entry", TRAINED, ids=lambda e: e.name)
def test_the_recorded_command_trains_the_recorded_policy(entry, tmp_path):
    from schedrl.agents import get_agent
    from schedrl.cli.main import build_parser, explicit_dests
    from schedrl.cli.train import build_spec
    from schedrl.workload.errors import TraceError

    argv = shlex.split(entry.fields["command"])[1:]
    assert argv[0] == "train", entry.fields["command"]
    record = json.loads((entry.directory / "policy.json").read_text())["record"]
    if "--scenario" in argv:  # the definition the run recorded, under its name (JSON is YAML)
        definition = tmp_path / "scenario.yaml"
        definition.write_text(json.dumps(record["scenario"]["definition"]))
        argv[argv.index("--scenario") + 1] = str(definition)
    parser = build_parser("train")
    args = parser.parse_args(argv)
    args.argv, args.explicit = argv[1:], explicit_dests(parser, argv)  # as `schedrl.cli.main.main` sets them
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            spec = build_spec(args)
    except TraceError as e:  # a scenario's pinned starts read its trace
        pytest.skip(f"{e} (the real traces: ../shared or $SCHEDRL_TRACE_PATH)")
    agent = get_agent(record["agent"])
    trained = agent.env_config_class.from_dict(dict(record["env_config"])).to_dict()
    typed = spec.env.to_dict()
    filled = FILLED_BY_TRAINING | set(getattr(agent.env_config_class, "DERIVED_FIELDS", ()))
    differ = {k: (typed.get(k), trained.get(k)) for k in set(typed) | set(trained)
              if k not in filled and typed.get(k) != trained.get(k)}
    assert differ == PREDATES.get(entry.name, {}), f"{entry.name}: the command gives (typed, trained) {differ}"
    settings = {k: v for k, v in json.loads(json.dumps(spec.settings.__dict__, default=str)).items()}
    recorded = record["settings"]
    differ = {k: (settings.get(k), recorded[k]) for k in recorded if settings.get(k) != recorded[k]}
    assert not differ, f"{entry.name}: the command gives settings (typed, trained) {differ}"
    assert (spec.model or None) == (record.get("model") or None) or spec.model == agent.models[0]
