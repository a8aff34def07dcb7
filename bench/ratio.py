#!/usr/bin/env python3
"""ratio.py: the median of paired rounds' ratios, its confidence interval
and a verdict against a goal, for the bench scripts.

A round runs the reference tool and cnperf back to back, so each round
gives one ratio (cnperf / reference). Rounds of the same binary move by
10-20 % on a shared VM even when the host steals nothing, so the median
alone cannot tell a 5 % difference from noise: the interval says how far
the rounds let it move. It is distribution-free (order statistics of the
ratios, the binomial sign-test interval for a median): [r(k), r(n+1-k)]
with the largest k whose coverage is still at least 95 %; with fewer
than 6 rounds no such k exists and the interval is [min, max] with its own
(lower) coverage, which the output names.

Usage: ratio.py OP GOAL RATIO...   (OP ">=" or "<=")
Prints: median lo hi coverage% verdict
  verdict PASS: the median meets the goal;
          MISS: the median misses it, but the interval reaches the goal
                (the rounds cannot tell the miss from noise);
          FAIL: the whole interval lies past the goal.
"""
import math
import statistics
import sys


def interval(rs):
    """The order-statistic interval for the median of rs, and its coverage.

    >>> interval([5, 1, 4, 2, 3])  # 5 rounds: [min, max], 94 %
    (1, 5, 0.9375)
    >>> lo, hi, c = interval(list(range(1, 11)))  # 10 rounds: [r(2), r(9)]
    >>> (lo, hi, round(c, 3))
    (2, 9, 0.979)
    >>> interval([1.2])
    (1.2, 1.2, 0.0)
    """
    rs = sorted(rs)
    n = len(rs)
    if n == 0:
        return math.nan, math.nan, 0.0
    # P(Binomial(n, 1/2) <= j), for j = 0, 1, ...
    cdf, acc = [], 0.0
    for j in range(n + 1):
        acc += math.comb(n, j) / 2**n
        cdf.append(acc)
    k = 1  # [r(1), r(n)]: the widest there is
    for j in range(1, n // 2 + 1):
        # [r(j), r(n+1-j)] misses the median with probability 2 P(B <= j-1).
        if 1 - 2 * cdf[j - 1] >= 0.95:
            k = j
    coverage = 1 - 2 * cdf[k - 1] if n > 1 else 0.0
    return rs[k - 1], rs[n - k], coverage


def verdict(op, goal, med, lo, hi):
    """PASS, MISS or FAIL of a median ratio and its interval against goal.

    >>> verdict("<=", 1.05, 1.00, 0.90, 1.10)
    'PASS'
    >>> verdict("<=", 1.05, 1.10, 0.95, 1.20)  # a miss the rounds cannot tell from noise
    'MISS'
    >>> verdict("<=", 1.05, 1.19, 1.06, 1.31)
    'FAIL'
    >>> verdict(">=", 1.0, 0.95, 0.83, 1.03)
    'MISS'
    >>> verdict(">=", 1.0, 0.91, 0.74, 0.94)
    'FAIL'
    """
    meets = (lambda r: r >= goal) if op == ">=" else (lambda r: r <= goal)
    if meets(med):
        return "PASS"
    # The end of the interval nearest the goal.
    near = hi if op == ">=" else lo
    return "MISS" if meets(near) else "FAIL"


def main(argv):
    if len(argv) < 4 or argv[1] not in (">=", "<="):
        sys.exit("usage: ratio.py >=|<= GOAL RATIO...")
    op = argv[1]
    try:
        goal, rs = float(argv[2]), [float(x) for x in argv[3:]]
    except ValueError as e:
        sys.exit(f"ratio.py: not a number: {e}")
    med = statistics.median(rs)
    lo, hi, cov = interval(rs)
    print(f"{med:.4f} {lo:.4f} {hi:.4f} {100 * cov:.0f} {verdict(op, goal, med, lo, hi)}")


if __name__ == "__main__":
    main(sys.argv)
