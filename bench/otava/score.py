"""Apache Otava on the benchmark series of changepoint_bench: time and score its default analysis, pooled over seeds."""
import glob
import os
import sys
import time

from otava.analysis import compute_change_points

TOLERANCE = 5


def matched(found, truth):
    """Right found points, one-to-one matching within TOLERANCE, as the Rust benchmark does."""
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
    return right


def main(directory):
    """One row per size and variant, pooling the counts of every seed in DIRECTORY (SIZE-VARIANT-SEED.csv)."""
    groups = {}
    for path in glob.glob(os.path.join(directory, "*.csv")):
        size, variant, seed = os.path.basename(path)[:-4].split("-")
        groups.setdefault((int(size), variant), []).append((int(seed), path))
    print(f"{'points':>7} {'variant':>9} {'seeds':>7} {'true':>6} {'found':>6} {'precision':>9} {'recall':>7} {'seconds':>9}")
    for (size, variant), members in sorted(groups.items()):
        members.sort()
        n_true = n_found = n_right = 0
        seconds = 0.0
        for _seed, path in members:
            with open(path) as f:
                next(f)
                values = [float(line) for line in f if line.strip()]
            with open(path[:-4] + ".truth") as f:
                truth = [int(line) for line in f if line.strip()]
            started = time.perf_counter()
            change_points, _weak = compute_change_points(values, window_len=50, max_pvalue=0.001)
            seconds += time.perf_counter() - started
            found = [cp.index for cp in change_points]
            n_right += matched(found, truth)
            n_true += len(truth)
            n_found += len(found)
        first, last = members[0][0], members[-1][0]
        seeds = str(first) if first == last else f"{first}-{last}"
        precision = n_right / n_found if n_found else 1.0
        recall = n_right / n_true if n_true else 1.0
        print(f"{size:>7} {variant:>9} {seeds:>7} {n_true:>6} {n_found:>6} {precision:>9.3f} {recall:>7.3f} "
              f"{seconds / len(members):>9.4f}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
