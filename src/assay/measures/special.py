"""The normal CDF and quantile and Student's t quantile for the bootstrap intervals, where scipy is not installed.

scipy is not part of assay's core install (its 140 MB would be a third of it, for three functions of one
formula). ``assay.measures.stats`` takes scipy.special's ``ndtr``, ``ndtri`` and ``stdtrit`` when scipy is there
(``make install``, the test environment, ``pip install scipy``) and these otherwise. They agree with scipy's to
about 1e-14 relative, and an interval computed with them to 5e-15 (tests/measures/test_special.py): far below the
three decimals a report shows. The interval memo keys each bound by the scipy version it was computed with (none
here), so the two are never mixed.

- ``ndtr(x) = erfc(-x / sqrt 2) / 2`` with the C library's erfc (math.erfc), element by element.
- ``ndtri(p)``: Acklam's rational approximation (relative error 1.2e-9), then two Halley steps on
  ``ndtr(x) - p``, each of which triples the correct digits; above 1/2 as ``-ndtri(1 - p)``, as scipy does.
- ``stdtrit(df, p)``: Newton's method on Student's t CDF from the normal quantile, the CDF being
  ``1 - I_x(df/2, 1/2) / 2`` (t > 0, ``x = df / (df + t^2)``), with the regularized incomplete beta function
  ``I`` by its continued fraction (modified Lentz), and ``log(Gamma(a + 1/2) / Gamma(a))`` computed as one
  ratio (not as a difference of two log-gammas, which loses 1e-10 at df = 10,000).
"""

from __future__ import annotations

import math

_SQRT2 = math.sqrt(2.0)
_SQRT2PI = math.sqrt(2.0 * math.pi)
_TINY = 1e-300

# Acklam's coefficients: central region |p - 1/2| <= 0.47575, and the tails
_A = (-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02, 1.383577518672690e+02,
      -3.066479806614716e+01, 2.506628277459239e+00)
_B = (-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02, 6.680131188771972e+01,
      -1.328068155288572e+01)
_C = (-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00, -2.549732539343734e+00,
      4.374664141464968e+00, 2.938163982698783e+00)
_D = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00)
_TAIL = 0.02425


def ndtr(x):
    """The standard normal CDF, elementwise, as float64 (a scalar for a scalar)."""
    import numpy as np

    return _elementwise(_ndtr, x, np)


def ndtri(p):
    """The standard normal quantile (inverse of ``ndtr``), elementwise; -inf at 0, inf at 1, nan outside."""
    import numpy as np

    return _elementwise(_ndtri, p, np)


def stdtrit(df: float, p: float) -> float:
    """The ``p`` quantile of Student's t distribution with ``df`` > 0 degrees of freedom."""
    if not 0.0 < p < 1.0:
        return -math.inf if p == 0.0 else math.inf if p == 1.0 else math.nan
    t = _ndtri(p)
    for _ in range(100):  # Newton from the normal quantile: a few steps (more for df near 1)
        step = (_stdtr(df, t) - p) / _t_pdf(df, t)
        t -= step
        if abs(step) <= 4e-16 * max(1.0, abs(t)):
            break
    return t


def _elementwise(function, values, np):
    array = np.asarray(values, dtype=np.float64)
    out = np.fromiter(map(function, array.ravel().tolist()), dtype=np.float64, count=array.size)
    return out.reshape(array.shape) if array.ndim else out[0]


def _ndtr(x: float) -> float:
    return 0.5 * math.erfc(-x / _SQRT2)


def _ndtri(p: float) -> float:
    if not 0.0 < p < 1.0:
        return -math.inf if p == 0.0 else math.inf if p == 1.0 else math.nan
    if p > 0.5:  # the upper half by symmetry: ndtr(x) - p near 1 would cancel
        return -_ndtri(1 - p)
    if p < _TAIL:
        q = math.sqrt(-2 * math.log(p))
        x = ((((((_C[0] * q + _C[1]) * q + _C[2]) * q + _C[3]) * q + _C[4]) * q + _C[5])
             / ((((_D[0] * q + _D[1]) * q + _D[2]) * q + _D[3]) * q + 1))
    else:
        q = p - 0.5
        r = q * q
        x = ((((((_A[0] * r + _A[1]) * r + _A[2]) * r + _A[3]) * r + _A[4]) * r + _A[5]) * q
             / (((((_B[0] * r + _B[1]) * r + _B[2]) * r + _B[3]) * r + _B[4]) * r + 1))
    for _ in range(2):  # Halley on ndtr(x) - p
        u = (_ndtr(x) - p) * _SQRT2PI * math.exp(x * x / 2)
        x -= u / (1 + x * u / 2)
    return x


def _log_gamma_ratio(a: float) -> float:
    """log(Gamma(a + 1/2) / Gamma(a)): the ratio itself below 170 (where Gamma fits a float), the asymptotic
    series of sqrt(a) (1 - 1/8a + 1/128a^2 + 5/1024a^3 - 21/32768a^4 - 399/262144a^5) above (error < 1e-17)."""
    if a < 170:
        return math.log(math.gamma(a + 0.5) / math.gamma(a))
    i = 1 / a
    return 0.5 * math.log(a) + math.log1p(i * (-1 / 8 + i * (1 / 128 + i * (5 / 1024 + i * (-21 / 32768
                                                                                          - i * 399 / 262144)))))


def _t_pdf(df: float, t: float) -> float:
    a = df / 2
    return math.exp(_log_gamma_ratio(a) - 0.5 * math.log(df * math.pi) - (df + 1) / 2 * math.log1p(t * t / df))


def _stdtr(df: float, t: float) -> float:
    """Student's t CDF: the tail beyond |t| is I_x(df/2, 1/2) / 2 with x = df / (df + t^2)."""
    a, b = df / 2, 0.5
    x, y = df / (df + t * t), t * t / (df + t * t)  # x and 1 - x, each without cancellation
    # log(x^a (1-x)^b / (a B(a, b))), B(a, 1/2) = Gamma(a) Gamma(1/2) / Gamma(a + 1/2)
    log_front = _log_gamma_ratio(a) - 0.5 * math.log(math.pi) - a * math.log1p(t * t / df) + b * math.log(y) \
        if y > 0 else -math.inf
    if x < (a + 1) / (a + b + 2):
        tail = math.exp(log_front) * _beta_fraction(a, b, x) / a
    else:  # I_x(a, b) = 1 - I_{1-x}(b, a): the fraction converges where x is below its mean
        tail = 1 - math.exp(log_front) * _beta_fraction(b, a, y) / b
    tail /= 2
    return 1 - tail if t > 0 else tail


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz; Numerical Recipes' betacf)."""
    c, d = 1.0, 1 - (a + b) * x / (a + 1)
    d = 1 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, 100_000):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1 + numerator * d
            d = 1 / (d if abs(d) > _TINY else _TINY)
            c = 1 + numerator / c
            c = c if abs(c) > _TINY else _TINY
            h *= d * c
        if abs(d * c - 1) < 1e-16:
            break
    return h
