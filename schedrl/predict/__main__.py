"""`schedrl predict train|eval`: the SWF remaining-runtime predictor and its MAPE against the baselines.

    schedrl predict train --trace SDSC-SP2 --out sdsc.pt      # fit on the first 70 %, report on the last 30 %
    schedrl predict eval --model sdsc.pt [--trace SDSC-SP2]   # report again (default: the training trace)

Bad input prints one `error:` line and exits with status 2.
"""

from __future__ import annotations

import argparse
import sys
import time

from schedrl.numbers import finite_options
from schedrl.predict.baselines import LastTwoMean, RequestedTime
from schedrl.predict.evaluation import TRAIN_FRACTION, format_table, mape_table, split


def _load(trace: str):
    from schedrl.workload.catalog import load_trace

    return load_trace(trace)


def _report(trace: str, workload, predictor, first_test: int) -> None:
    rows = mape_table(workload, [RequestedTime(), LastTwoMean(), predictor], first_test,
                      history=predictor.settings.history, min_remaining=predictor.settings.min_remaining)
    print(f"{trace}: {len(workload)} jobs; test = jobs [{first_test}, {len(workload)})")
    print(format_table(trace, rows))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="schedrl predict", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train", help="fit the MLP predictor on a trace's first part and report MAPE on the rest")
    t.add_argument("--trace", required=True, help="catalog name or SWF path")
    t.add_argument("--out", required=True, help="file for the trained predictor (torch)")
    t.add_argument("--train-fraction", type=float, default=TRAIN_FRACTION, help="training share (default 0.7)")
    t.add_argument("--epochs", type=int, default=10)
    t.add_argument("--history", type=int, default=4, help="the user's last k run times as features (default 4)")
    t.add_argument("--seed", type=int, default=0)
    e = sub.add_parser("eval", help="MAPE of a trained predictor and the baselines on a trace's test part")
    e.add_argument("--model", required=True, help="file written by train")
    e.add_argument("--trace", default=None, help="catalog name or SWF path (default: the training trace)")
    e.add_argument("--train-fraction", type=float, default=None, help="test on the jobs after this share (default: as trained)")
    args = finite_options(parser).parse_args(argv)
    try:
        from schedrl.predict.mlp import MLPPredictor, MLPSettings

        if args.command == "train":
            settings = MLPSettings(history=args.history, epochs=args.epochs, seed=args.seed)
            workload = _load(args.trace)
            first_test = split(workload, args.train_fraction)
            start = time.perf_counter()
            predictor = MLPPredictor(settings).fit(workload[:first_test], log=lambda m: print(m, file=sys.stderr))
            print(f"trained on {first_test} jobs in {time.perf_counter() - start:.1f} s")
            predictor.save(args.out, trace=args.trace, train_fraction=args.train_fraction, sha256=workload.sha256)
            _report(args.trace, workload, predictor, first_test)
        else:
            predictor, meta = MLPPredictor.load(args.model)
            trace = args.trace or meta["trace"]
            workload = _load(trace)
            _report(trace, workload, predictor, split(workload, args.train_fraction or meta["train_fraction"]))
    except (ValueError, OSError, KeyError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
