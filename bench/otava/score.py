"""Apache Otava on the benchmark series of changepoint_bench: time and score its default analysis."""
import glob
import os
import sys
import time

from otava.analysis import compute_change_points

TOLERANCE = 5


def score(found, truth):
    """(precision, recall), one-to-one matching within TOLERANCE, as the Rust benchmark does."""
    used = [False] * len(truth)
    right = 0
    for f in found:
        best = None
        for k, t in enumerate(truth):
            if not used[k] and abs(f - t) <= TOLERANCE and (best is None or abs(f - t) < abs(f - truth[best])):
                best = k
        if best is not None:
            used[best] = True
            right += 1
    precision = right / len(found) if found else 1.0
    recall = right / len(truth) if truth else 1.0
    return precision, recall


def main(directory):
    print(f"{'points':>7} {'variant':>9} {'true':>5} {'found':>6} {'precision':>9} {'recall':>7} {'seconds':>9}")
    names = sorted(glob.glob(os.path.join(directory, "*.csv")), key=lambda p: (int(os.path.basename(p).split("-")[0]), p))
    for path in names:
        size, variant = os.path.basename(path)[:-4].split("-")
        with open(path) as f:
            next(f)
            values = [float(line) for line in f if line.strip()]
        with open(path[:-4] + ".truth") as f:
            truth = [int(line) for line in f if line.strip()]
        started = time.perf_counter()
        change_points, _weak = compute_change_points(values, window_len=50, max_pvalue=0.001)
        seconds = time.perf_counter() - started
        found = [cp.index for cp in change_points]
        precision, recall = score(found, truth)
        print(f"{size:>7} {variant:>9} {len(truth):>5} {len(found):>6} {precision:>9.3f} {recall:>7.3f} {seconds:>9.4f}")


if __name__ == "__main__":
    main(sys.argv[1])
