"""The score statistics of assay.verdicts.inference written from their definitions, independently of the code
under test (scipy finds Tango's restricted estimate numerically), for every test that needs a reference p-value
or interval end: tests/verdicts/test_inference.py checks these against McNemar's test and the code."""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import minimize_scalar


def tango_z(b: int, c: int, n: int, delta: float) -> float:
    """Tango's score statistic with the restricted estimate found numerically: maximise
    b log(q + delta) + c log q + (n - b - c) log(1 - 2q - delta) over the q that keep all three shares in [0, 1]."""
    lo, hi = max(0.0, -delta), (1.0 - delta) / 2
    if hi - lo < 1e-15:
        q = lo
    else:
        def nll(q):
            terms = [(b, q + delta), (c, q), (n - b - c, 1.0 - 2 * q - delta)]
            return -sum(k * math.log(max(p, 1e-300)) for k, p in terms if k)
        q = minimize_scalar(nll, bounds=(lo, hi), method="bounded", options={"xatol": 1e-14}).x
    var = 2 * q + delta - delta ** 2
    num = b - c - n * delta
    return 0.0 if num == 0 else num / math.sqrt(n * var)


def graded_z(d, delta: float) -> float:
    """The graded score statistic: sum(d - delta) / sqrt(n V / (n + 1)), V the squared distances from delta of the
    changes and of one pseudo-question, half at +r and half at -r (r the root mean square of the non-zero changes)."""
    d = np.asarray(d, dtype=float)
    moved = d[d != 0]
    n, r = d.size, (math.sqrt(np.mean(moved ** 2)) if moved.size else 1.0)
    spread = np.sum((d - delta) ** 2) + 0.5 * ((r - delta) ** 2 + (r + delta) ** 2)
    num = d.sum() - n * delta
    return 0.0 if abs(num) < 1e-12 else num / math.sqrt(n * spread / (n + 1))
