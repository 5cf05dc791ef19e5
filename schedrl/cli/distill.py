"""`schedrl distill POLICY`: a trained policy as a model an admin can read (the inspector's accept/reject or the
RLScheduler kernel's job priority as a decision tree), printed
and, with --out, exported as a zoo policy. Through the agent's `Distillable` capability (`schedrl.agents.base`)."""

from __future__ import annotations

import argparse

from schedrl.outputs import add_force


def add_parser(subparsers, name: str, help_text: str) -> argparse.ArgumentParser:
    p = subparsers.add_parser(name, help=help_text, description=help_text + ". DAgger on the policy's training zone: "
                              "the policy labels the decisions (accept or reject its base rule's proposal) at the "
                              "states the tree visits, and a tree of at most --depth levels is fitted (CART, Gini); for an "
                              "RLScheduler kernel, every visible job is labelled with the kernel's score (or its rank) "
                              "and a regression tree (CART, variance) gives each job its priority. "
                              "Prints the tree as if/else lines in the features' units; with --out, exports it as a "
                              "policy (policy.json holds the readable tree, weights.safetensors its numbers), which "
                              "runs wherever the policy does: `zoo:NAME` with --add. docs/guides/distill.md.")
    p.add_argument("policy", metavar="POLICY", help="the inspector or RLScheduler policy to distil: zoo:NAME, an "
                                                    "exported policy's directory or a checkpoint")
    p.add_argument("--depth", type=int, default=6, help="the tree's largest depth, 1-12 (default 6)")
    p.add_argument("--rounds", type=int, default=4, help="DAgger rounds, 1-50: 1 labels the policy's own states only "
                                                         "(default 4)")
    p.add_argument("--windows", type=int, default=8, help="training windows scheduled per round, 1-1000 (default 8)")
    p.add_argument("--jobs", type=int, default=None, help="jobs per window (default: the policy's training episodes' "
                                                          "length)")
    p.add_argument("--seed", type=int, default=0, help="seed of the windows' draw (default 0)")
    p.add_argument("--teacher", choices=("policy", "hindsight"), default="policy",
                   help="who labels the decisions: the policy (default) or the hindsight teacher (the policy frames)")
    p.add_argument("--teacher-depth", type=int, default=1, help="with --teacher hindsight: rejections in a row it "
                                                                "tries, 1-8 (default 1)")
    p.add_argument("--starvation-wait", metavar="DUR", default=None,
                   help="replace the policy's starvation guard: a proposal waiting this long is accepted (24h; 0: off)")
    p.add_argument("--queue-guard", metavar="DUR", default=None,
                   help="no rejection while any waiting job has waited this long (e.g. 12h; 0: off; default: the policy's)")
    p.add_argument("--base", metavar="NAME|tuned:FILE", default=None,
                   help="the rule whose proposals the tree judges (a heuristic or tuned:FILE; default: the policy's)")
    p.add_argument("--refit-windows", type=int, default=0, metavar="N",
                   help="choose each test's threshold by the tree's mean on N fresh training windows (0: as fitted)")
    p.add_argument("--features", metavar="NAME,NAME", default=None,
                   help="the only features the tree may test (default: all; docs/guides/distill.md lists them)")
    p.add_argument("--reject-where", choices=("any", "pays", "cheap"), default=None,
                   help="replace where the policy may reject (docs/agents/inspector.md)")
    p.add_argument("--target", choices=("score", "centred", "rank"), default=None,
                   help="an RLScheduler kernel's tree predicts its score of a job (default), less the mean, or a rank")
    p.add_argument("--out", metavar="DIR", help="export the tree as a policy to DIR")
    p.add_argument("--name", help="the exported policy's name (default: the --out directory's name)")
    p.add_argument("--add", action="store_true", help="with --out: also add it to the zoo as zoo:NAME")
    p.add_argument("--replace", action="store_true", help="with --add: replace a zoo policy of the same name")
    add_force(p, "--out's files")
    from schedrl.cli.options import needs

    exported = "the tree is added to the zoo from where --out exports it: --add, --name and --replace need --out DIR"
    needs(p, "--add", "--out", exported)
    needs(p, "--name", "--out", exported)
    needs(p, "--replace", "--add", "it replaces a zoo policy of the same name when adding")
    needs(p, "--force", "--out", "it lets --out replace files schedrl did not write")
    p.set_defaults(run=run)
    return p


def _distillable(policy, spec: str):
    """The agent of `policy` with the `Distillable` capability, or UsageError saying why it cannot be distilled."""
    from schedrl.agents import get_agent
    from schedrl.agents.base import Distillable
    from schedrl.cli.main import UsageError

    record = getattr(policy, "record", None)
    if record is None:
        raise UsageError(f"{spec} is not a trained policy: only a trained inspector or RLScheduler policy can be "
                         "distilled into a tree")
    agent = get_agent(record.agent)
    if isinstance(agent, Distillable):
        return agent
    if record.sim_config is None:
        raise UsageError(f"{spec} ({record.agent}) schedules the discrete-time cluster: its decisions are slots of a "
                         "canvas, not accept/reject of a proposal nor a job's priority; only an inspector or RLScheduler "
                         "policy can be distilled into a tree")
    raise UsageError(f"{spec} is a {record.agent} policy: only an inspector's accept/reject or an RLScheduler "
                     "kernel's job scores can be distilled into a tree")


def run(args: argparse.Namespace) -> int:
    import sys
    from pathlib import Path

    from schedrl.agents.checkpoint import CheckpointError, load_policy
    from schedrl.cli.main import UsageError
    from schedrl.outputs import In, Out, writing
    from schedrl.zoo import manifest
    from schedrl.zoo.store import CARD_FILE, POLICY_FILE, WEIGHTS_FILE, ZooError

    if args.jobs is not None and args.jobs < 2:
        raise UsageError(f"--jobs must be >= 2; got {args.jobs}")
    name = args.name or (Path(args.out).expanduser().resolve().name if args.out else None)
    log = lambda text: print(f"schedrl {text}", file=sys.stderr, flush=True)  # noqa: E731
    try:
        if args.add:
            if not manifest.NAME_PATTERN.fullmatch(name):
                raise UsageError(f"--name {name!r}: a zoo name is lowercase letters, digits, '.', '_' and '-'")
            manifest.check_new(name, replace=args.replace)
        policy = load_policy(args.policy)
        agent = _distillable(policy, args.policy)
        guard = {}
        if args.starvation_wait is not None:
            from schedrl.duration import parse_duration_or_off

            guard["starvation_wait"] = parse_duration_or_off(args.starvation_wait, "--starvation-wait")
        if args.queue_guard is not None:
            from schedrl.duration import parse_duration_or_off

            guard["queue_starvation_wait"] = parse_duration_or_off(args.queue_guard, "--queue-guard")
        if args.reject_where is not None:
            guard["reject_where"] = args.reject_where
        # options only some agents take: passed only where given (the others refuse them in one line)
        given = {"base": args.base} if args.base is not None else {}
        if args.refit_windows:
            given["refit_windows"] = args.refit_windows
        if args.target is not None:
            import inspect

            if "target" not in inspect.signature(agent.distill).parameters:
                raise UsageError(f"--target: {args.policy} ({policy.record.agent}) is not distilled into a score: "
                                 "only an RLScheduler kernel's tree predicts a rank or a score")
            given["target"] = args.target
        distilled = agent.distill(policy, depth=args.depth, rounds=args.rounds, windows=args.windows, jobs=args.jobs,
                                  seed=args.seed, log=log, guard=guard,
                                  allowed=None if args.features is None else [f.strip() for f in args.features.split(",")],
                                  teacher_depth=args.teacher_depth if args.teacher == "hindsight" else 0, **given)
        print(f"# the tree of {args.policy} (depth {distilled.tree.depth}, {distilled.tree.leaves} leaves)\n")
        print(distilled.text())
        if not args.out:
            return 0
        out = Out("--out", Path(args.out), "dir", writes=(POLICY_FILE, WEIGHTS_FILE, CARD_FILE),
                  signature=(POLICY_FILE,))
        inputs = [] if args.policy.startswith("zoo:") else [In("POLICY", Path(args.policy))]
        with writing("distill", [out], inputs, force=args.force):
            exported = agent.export_distilled(distilled, policy, args.out, name,
                                              ["schedrl", "distill", *args.argv], args.policy)
        print(f"\nexported {name} to {exported.directory} ({exported.data['weights']['bytes']:,} bytes of weights)")
        if args.add:
            entry = manifest.add(exported.directory, name, replace=args.replace)
            print(f"added to the zoo as zoo:{name} ({entry.directory})")
    except (CheckpointError, ZooError, ValueError) as e:
        raise UsageError(str(e)) from None
    return 0
