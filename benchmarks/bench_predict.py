"""SWF remaining-runtime predictor: training time and inference throughput.

    python benchmarks/bench_predict.py [--trace SDSC-SP2] [--epochs 10]

Trains `MLPPredictor` on the first 70 % of the trace (feature building included) and times
`predict` over every test job at elapsed 0 (median of 5, after one warm-up), next to the baselines.
"""

from __future__ import annotations

import argparse
import statistics
import time

from schedrl.predict import LastTwoMean, RequestedTime, queries_for
from schedrl.predict.evaluation import split
from schedrl.predict.mlp import MLPPredictor, MLPSettings
from schedrl.workload.catalog import load_trace


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", default="SDSC-SP2")
    parser.add_argument("--epochs", type=int, default=10)
    args = parser.parse_args()
    wl = load_trace(args.trace)
    first = split(wl)
    t0 = time.perf_counter()
    queries = queries_for(wl)
    t_hist = time.perf_counter() - t0
    t0 = time.perf_counter()
    model = MLPPredictor(MLPSettings(epochs=args.epochs)).fit(wl[:first])
    t_train = time.perf_counter() - t0
    test = queries.take(slice(first, None))
    print(f"{args.trace}: {len(wl)} jobs, {first} training")
    print("| case | time | throughput |\n|---|--:|--:|")
    print(f"| user histories (all jobs) | {t_hist:.2f} s | {len(wl) / t_hist:,.0f} jobs/s |")
    print(f"| MLP training ({args.epochs} epochs) | {t_train:.1f} s | |")
    for predictor in (model, RequestedTime(), LastTwoMean()):
        predictor.predict(test)
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            predictor.predict(test)
            times.append(time.perf_counter() - t0)
        t = statistics.median(times)
        print(f"| predict {predictor.name} ({len(test)} queries) | {1000 * t:.1f} ms | {len(test) / t:,.0f} queries/s |")


if __name__ == "__main__":
    main()
