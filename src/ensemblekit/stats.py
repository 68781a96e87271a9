"""Statistics for comparing algorithms over several data sets (Demšar, JMLR 7, 2006).

Two algorithms (Sect. 3.1): the Wilcoxon signed-rank test and the sign test over
data sets, with the smallest p-value they can reach for N data sets. Several
algorithms (Sect. 3.2): average ranks, the Friedman test with the Iman-Davenport
F (and the exact p-value where F is undefined), the Nemenyi critical difference,
Wilcoxon signed-rank tests against a baseline with Holm's adjustment. For one
data set, Nadeau and Bengio's corrected resampled t-test.

scipy is imported inside the functions that need it, so importing this module
stays cheap (the CLI imports it on start-up).
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

import numpy as np

from ensemblekit.errors import InputError


def average_ranks(scores, greater_is_better: bool = True) -> np.ndarray:
    """Average rank of each algorithm over data sets (Demšar 2006, Sect. 3.2.2).

    Parameters
    ----------
    scores : array-like of shape (n_datasets, n_algorithms)
        One score per data set and algorithm; no NaN.
    greater_is_better : bool, default=True
        Whether the best algorithm on a data set is the one with the largest score.

    Returns
    -------
    ndarray of shape (n_algorithms,)
        Mean over data sets of the rank (1 = best; tied algorithms share the mean
        of the ranks they span), each in ``[1, n_algorithms]``.

    Raises
    ------
    ValueError
        If ``scores`` is not 2-D, is empty, or holds NaN.
    """
    from scipy.stats import rankdata

    arr = np.asarray(scores, dtype=float)
    if arr.ndim != 2 or arr.size == 0:
        raise InputError(f"scores must be a non-empty 2-D array, got shape {arr.shape}")
    if np.isnan(arr).any():
        raise InputError("scores hold NaN; every algorithm needs a score on every data set")
    keyed = -arr if greater_is_better else arr
    return rankdata(keyed, method="average", axis=1).mean(axis=0)


# ---------------------------------------------------------------------------
# Input checks shared by the tests below
# ---------------------------------------------------------------------------


def _score_matrix(scores, *, finite: bool) -> np.ndarray:
    """Return ``scores`` as a float (N, k) array with N >= 2 and k >= 2."""
    arr = np.asarray(scores, dtype=float)
    if arr.ndim != 2:
        raise InputError(
            f"scores must be a 2-D array of shape (n_datasets, n_algorithms), got shape {arr.shape}"
        )
    n_datasets, n_algorithms = arr.shape
    if n_datasets < 2:
        raise InputError(f"need at least 2 data sets (rows), got {n_datasets}")
    if n_algorithms < 2:
        raise InputError(f"need at least 2 algorithms (columns), got {n_algorithms}")
    if np.isnan(arr).any():
        raise InputError("scores hold NaN; every algorithm needs a score on every data set")
    if finite and not np.isfinite(arr).all():
        raise InputError("scores hold an infinite value; the paired test needs finite scores")
    return arr


def _check_alpha(alpha) -> float:
    alpha = float(alpha)
    if not 0.0 < alpha < 1.0:
        raise InputError(f"alpha must lie in the open interval (0, 1), got {alpha}")
    return alpha


def _check_count(value, name: str, minimum: int) -> int:
    try:
        count = operator.index(value)
    except TypeError:
        raise InputError(f"{name} must be an integer, got {value!r}") from None
    if count < minimum:
        raise InputError(f"{name} must be at least {minimum}, got {count}")
    return count


# ---------------------------------------------------------------------------
# Friedman test with the Iman-Davenport correction
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class FriedmanResult:
    """Outcome of the Friedman test over several data sets.

    Attributes
    ----------
    ranks : ndarray of shape (n_algorithms,)
        Average rank of each algorithm (1 = best), each in ``[1, n_algorithms]``.
    chi2 : float
        Friedman statistic chi^2_F, in ``[0, n_datasets * (n_algorithms - 1)]``.
    chi2_pvalue : float
        Upper-tail p-value of ``chi2`` under chi^2 with ``n_algorithms - 1`` degrees
        of freedom.
    iman_davenport : float
        Iman-Davenport statistic F_F, in ``[0, inf)``; NaN when it is undefined,
        i.e. when every data set ranks the algorithms in the same order without
        ties, so that chi^2_F reaches its maximum N (k - 1) and F_F's denominator
        is zero (see :attr:`f_defined`).
    f_pvalue : float
        Upper-tail p-value of ``iman_davenport`` under F with ``n_algorithms - 1`` and
        ``(n_algorithms - 1) * (n_datasets - 1)`` degrees of freedom; NaN when F_F
        is undefined.
    n_datasets : int
        Number of data sets N.
    n_algorithms : int
        Number of algorithms k.
    pvalue : float
        The p-value the omnibus decision rests on, in [0, 1]: ``f_pvalue`` when F_F
        is defined (Demšar's recommendation); otherwise the exact p-value of
        chi^2_F at its maximum, (k!)^(1 - N), the probability under the null
        hypothesis that N data sets with untied scores all order the k algorithms
        alike.
    pvalue_source : str
        ``"Iman-Davenport F"`` or ``"exact"``: where ``pvalue`` comes from.
    min_pvalue : float
        The smallest value ``pvalue`` can take for this N and k, over every
        possible score table (see :func:`friedman_min_pvalue`). When it is not
        below alpha, no table of N data sets can make the test reject.
    chi2_uncorrected : float
        Demšar's chi^2_F, without the correction for ties, in
        ``[0, n_datasets * (n_algorithms - 1)]``; equal to ``chi2`` when no data
        set holds a tie.
    tie_correction : float
        The divisor C in (0, 1] that turns ``chi2_uncorrected`` into ``chi2``
        (1 without ties; see :func:`friedman_test`).
    """

    ranks: np.ndarray
    chi2: float
    chi2_pvalue: float
    iman_davenport: float
    f_pvalue: float
    n_datasets: int
    n_algorithms: int
    pvalue: float
    pvalue_source: str
    min_pvalue: float
    chi2_uncorrected: float = float("nan")
    tie_correction: float = 1.0

    @property
    def f_defined(self) -> bool:
        """Whether the Iman-Davenport F is defined (chi^2_F below its maximum N (k - 1))."""
        return bool(np.isfinite(self.iman_davenport))


def friedman_from_ranks(avg_ranks, n_datasets: int, tie_correction: float = 1.0,
                        tied_orders: int | None = None) -> FriedmanResult:
    """Friedman and Iman-Davenport statistics from average ranks alone.

    The statistics depend on the scores only through the average ranks, so a
    published table of average ranks is enough to recompute them.

    Parameters
    ----------
    avg_ranks : array-like of shape (n_algorithms,)
        Average rank R_j of each algorithm over the data sets (1 = best), each in
        ``[1, n_algorithms]``; ``n_algorithms >= 2``.
    n_datasets : int
        Number of data sets N the ranks were averaged over; ``N >= 2``.
    tie_correction : float, default=1.0
        The divisor C in (0, 1] of the tie correction (:func:`friedman_test`
        computes it from the ranks per data set; published average ranks carry
        no ties, so 1). ``chi2`` is Demšar's statistic divided by C.
    tied_orders : int, optional
        With ties, the number of distinct orders of one data set's tie pattern,
        k! / prod(t!), when every data set shares it (what the exact p-value at
        the maximum needs); default k!.

    Returns
    -------
    FriedmanResult
        With ``ranks`` a float copy of ``avg_ranks``.

    Raises
    ------
    ValueError
        If ``avg_ranks`` is not 1-D with at least 2 entries, holds NaN or a value
        outside ``[1, n_algorithms]``, or ``n_datasets`` is not an integer >= 2.

    Notes
    -----
    Demšar (2006), Sect. 3.2.2:

    chi^2_F = 12 N / (k (k + 1)) * [sum_j R_j^2 - k (k + 1)^2 / 4],

    compared with chi^2 on k - 1 degrees of freedom, and Iman and Davenport's
    less conservative

    F_F = (N - 1) chi^2_F / (N (k - 1) - chi^2_F),

    compared with F on k - 1 and (k - 1)(N - 1) degrees of freedom. With ties,
    chi^2_F is divided by the correction C (Hollander and Wolfe's, the one
    ``scipy.stats.friedmanchisquare`` applies), and F_F and both p-values follow
    from the corrected statistic, which decides; Demšar's uncorrected form is kept
    beside it (``chi2_uncorrected``). Without ties C = 1 and the two agree.

    Two edge cases are exact rather than numerical accidents: chi^2_F = 0 (every
    algorithm has average rank (k + 1) / 2, e.g. all scores tied on every data set)
    gives F_F = 0 and both p-values 1. chi^2_F = N (k - 1), its maximum (every data
    set orders the algorithms identically, without ties), makes F_F's denominator
    zero: F_F is then undefined (NaN here, never ``inf``), and ``pvalue`` is the
    exact p-value of that outcome, (k!)^(1 - N): under the null hypothesis each data
    set's ranking is one of the k! orders with equal probability, independently,
    and all N agree with probability k! / (k!)^N. (The F approximation is not
    meant for that corner: read as a limit it would give p = 0, which no finite
    number of data sets can support.)

    References
    ----------
    .. [1] J. Demšar, "Statistical Comparisons of Classifiers over Multiple Data
       Sets", JMLR 7:1-30, 2006, Sect. 3.2.2.
    .. [2] R. L. Iman and J. M. Davenport, "Approximations of the critical region of
       the Friedman statistic", Communications in Statistics A 9(6), 1980.
    """
    from scipy.stats import chi2 as chi2_dist
    from scipy.stats import f as f_dist

    ranks = np.array(avg_ranks, dtype=float)
    if ranks.ndim != 1 or ranks.size < 2:
        raise InputError(
            f"avg_ranks must be 1-D with at least 2 algorithms, got shape {ranks.shape}"
        )
    if np.isnan(ranks).any():
        raise InputError("avg_ranks hold NaN")
    k = ranks.size
    n = _check_count(n_datasets, "n_datasets", 2)
    if (ranks < 1.0).any() or (ranks > k).any():
        raise InputError(
            f"average ranks must lie in [1, {k}] for {k} algorithms, got {ranks.tolist()}"
        )
    if not 0.0 < tie_correction <= 1.0:
        raise InputError(f"tie_correction must lie in (0, 1], got {tie_correction}")

    chi2_max = float(n * (k - 1))
    tol = 1e-9 * chi2_max

    def _clamped(value: float) -> float:
        # Rounding can push the statistic a hair outside its exact range [0, N(k-1)].
        return 0.0 if value <= tol else chi2_max if value >= chi2_max - tol else value

    uncorrected = _clamped(12.0 * n / (k * (k + 1)) * (float(np.sum(ranks**2))
                                                       - k * (k + 1) ** 2 / 4.0))
    chi2 = _clamped(uncorrected / tie_correction)

    df1 = k - 1
    df2 = (k - 1) * (n - 1)
    chi2_pvalue = float(chi2_dist.sf(chi2, df1)) if chi2 > 0 else 1.0
    if chi2 == 0.0:
        f_stat, f_pvalue = 0.0, 1.0
    elif chi2 == chi2_max:
        f_stat, f_pvalue = float("nan"), float("nan")
    else:
        f_stat = (n - 1) * chi2 / (chi2_max - chi2)
        f_pvalue = float(f_dist.sf(f_stat, df1, df2))
    if chi2 == chi2_max:
        pvalue, source = _all_alike_pvalue(k, n, tied_orders), "exact"
    else:
        pvalue, source = f_pvalue, "Iman-Davenport F"
    return FriedmanResult(
        ranks=ranks,
        chi2=float(chi2),
        chi2_pvalue=chi2_pvalue,
        iman_davenport=float(f_stat),
        f_pvalue=f_pvalue,
        n_datasets=n,
        n_algorithms=k,
        pvalue=pvalue,
        pvalue_source=source,
        min_pvalue=friedman_min_pvalue(k, n),
        chi2_uncorrected=float(uncorrected),
        tie_correction=float(tie_correction),
    )


def _all_alike_pvalue(k: int, n: int, orders: int | None = None) -> float:
    """orders^(1 - n): the chance that n rankings of k items, each one of ``orders`` equally
    likely orders (k! untied; fewer with a shared tie pattern), all agree."""
    from math import factorial

    # exact integers, correctly rounded (0.0 on underflow)
    return 1 / (factorial(k) if orders is None else orders) ** (n - 1)


def friedman_min_pvalue(n_algorithms: int, n_datasets: int) -> float:
    """Smallest p-value the Friedman decision of :class:`FriedmanResult` can give.

    Parameters
    ----------
    n_algorithms : int
        Number of algorithms k; ``k >= 2``.
    n_datasets : int
        Number of data sets N; ``N >= 2``.

    Returns
    -------
    float
        The minimum of :attr:`FriedmanResult.pvalue` over every table of N rows
        and k columns (ties allowed), in (0, 1]. If it is not below alpha, the
        test cannot reject at alpha whatever the scores.

    Raises
    ------
    ValueError
        If a count is not an integer, ``k < 2`` or ``N < 2``.

    Notes
    -----
    ``pvalue`` is the Iman-Davenport p-value for chi^2_F below its maximum and the
    exact (k!)^(1 - N) at the maximum. The F p-value falls as chi^2_F grows, so its
    smallest value comes from the largest chi^2_F below the maximum that a table
    can produce: every data set ranks the algorithms alike except one, where two
    neighbours in the order tie. Against the maximum that lowers the sum of
    squared rank sums by N - 1/2, so

    chi^2_F = N (k - 1) - 12 (N - 1/2) / (k (k + 1) N),

    which the correction for ties (:func:`friedman_test`) divides by
    C = 1 - 6 / (N k (k^2 - 1)). (Swapping two neighbours instead of tying them
    lowers it by 2 (N - 1), which is more for N >= 2.) The result is the smaller
    of that point's F p-value and (k!)^(1 - N); a tie pattern shared by every data
    set at the maximum gives a larger exact p. For example k = 3, N = 2 gives
    0.071 (chi^2_F = 3.714), so two data sets can never make three algorithms
    differ at alpha = 0.05. Enumerating every table of weak orders for k = 3 with
    N = 2, 3, 4 and k = 4 with N = 2, 3 finds this minimum (a test does).

    References
    ----------
    .. [1] J. Demšar, "Statistical Comparisons of Classifiers over Multiple Data
       Sets", JMLR 7:1-30, 2006, Sect. 3.2.2.
    """
    from scipy.stats import f as f_dist

    k = _check_count(n_algorithms, "n_algorithms", 2)
    n = _check_count(n_datasets, "n_datasets", 2)
    chi2_max = n * (k - 1)
    # the one tie is a group of t = 2: C = 1 - (2^3 - 2) / (N k (k^2 - 1))
    below = (chi2_max - 12.0 * (n - 0.5) / (k * (k + 1) * n)) / (1.0 - 6.0 / (n * k * (k * k - 1)))
    f_below = (n - 1) * below / (chi2_max - below)
    p_below = float(f_dist.sf(f_below, k - 1, (k - 1) * (n - 1)))
    return min(p_below, _all_alike_pvalue(k, n))


def friedman_test(scores, greater_is_better: bool = True) -> FriedmanResult:
    """Friedman test with the Iman-Davenport F over several data sets.

    Tests the null hypothesis that all algorithms perform equally well, i.e. that
    their average ranks are equal.

    Parameters
    ----------
    scores : array-like of shape (n_datasets, n_algorithms)
        One score per data set (row) and algorithm (column); at least 2 rows and
        2 columns; no NaN (infinite values rank as the extreme).
    greater_is_better : bool, default=True
        Whether the best algorithm on a data set is the one with the largest score
        (accuracy, AUC) rather than the smallest (error, loss).

    Returns
    -------
    FriedmanResult
        Average ranks, chi^2_F with its p-value, F_F with its p-value, N and k.

    Raises
    ------
    ValueError
        If ``scores`` is not 2-D, has fewer than 2 data sets or 2 algorithms, or
        holds NaN.

    See Also
    --------
    friedman_from_ranks : the same statistics from published average ranks.
    critical_difference : the Nemenyi post-hoc test that follows a rejection.

    Notes
    -----
    Ranks are computed per data set (1 = best, ties share the mean rank) and
    averaged (Demšar 2006, Sect. 3.2.2); the statistics then follow
    :func:`friedman_from_ranks` with the correction for ties of Hollander and
    Wolfe (1999, Sect. 7.1; the one ``scipy.stats.friedmanchisquare`` applies):

    C = 1 - sum over data sets and groups of tied scores of (t^3 - t) / (N k (k^2 - 1)),

    where t is a group's size. C = 1 without ties; chi^2_F / C decides. When every
    data set ties every algorithm (C = 0), chi^2_F = 0 and there is nothing to
    correct.

    References
    ----------
    .. [1] J. Demšar, "Statistical Comparisons of Classifiers over Multiple Data
       Sets", JMLR 7:1-30, 2006, Sect. 3.2.2.
    .. [2] M. Hollander and D. A. Wolfe, "Nonparametric Statistical Methods",
       2nd ed., Wiley, 1999, Sect. 7.1.

    Examples
    --------
    >>> res = friedman_test([[0.90, 0.80, 0.70], [0.85, 0.80, 0.60], [0.95, 0.90, 0.91]])
    >>> np.round(res.ranks, 3).tolist()
    [1.0, 2.333, 2.667]
    """
    from math import factorial, prod

    arr = _score_matrix(scores, finite=False)
    n, k = arr.shape
    keyed = -arr if greater_is_better else arr
    groups = [np.unique(row, return_counts=True)[1] for row in keyed]  # tie group sizes
    ties = float(sum(float(np.sum(t.astype(float) ** 3 - t)) for t in groups))
    correction = 1.0 - ties / (n * k * (k * k - 1))
    patterns = {tuple(sorted(t.tolist())) for t in groups}
    orders = (factorial(k) // prod(factorial(int(c)) for c in next(iter(patterns)))
              if len(patterns) == 1 else None)
    return friedman_from_ranks(average_ranks(arr, greater_is_better), n,
                               correction if correction > 0 else 1.0, orders)


# ---------------------------------------------------------------------------
# Nemenyi critical difference
# ---------------------------------------------------------------------------


def nemenyi_q(n_algorithms: int, alpha: float = 0.05) -> float:
    """Critical value q_alpha of the Nemenyi test.

    Parameters
    ----------
    n_algorithms : int
        Number of algorithms k compared; ``k >= 2``.
    alpha : float, default=0.05
        Family-wise significance level, in the open interval (0, 1).

    Returns
    -------
    float
        q_alpha = Q(1 - alpha; k, inf) / sqrt(2), where Q is the quantile of the
        studentized range with k groups and infinite degrees of freedom; positive.
        For alpha = 0.05 and k = 2, 3, 4: 1.960, 2.343, 2.569.

    Raises
    ------
    ValueError
        If ``n_algorithms`` is not an integer >= 2 or ``alpha`` is outside (0, 1).

    References
    ----------
    .. [1] J. Demšar, "Statistical Comparisons of Classifiers over Multiple Data
       Sets", JMLR 7:1-30, 2006, Sect. 3.2.2 and Table 5(a).
    """
    from scipy.stats import studentized_range

    k = _check_count(n_algorithms, "n_algorithms", 2)
    alpha = _check_alpha(alpha)
    return float(studentized_range.ppf(1.0 - alpha, k, np.inf) / np.sqrt(2.0))


def critical_difference(n_algorithms: int, n_datasets: int, alpha: float = 0.05) -> float:
    """Nemenyi critical difference of average ranks.

    Two algorithms whose average ranks differ by at least this much perform
    significantly differently at family-wise level ``alpha``.

    Parameters
    ----------
    n_algorithms : int
        Number of algorithms k; ``k >= 2``.
    n_datasets : int
        Number of data sets N; ``N >= 1`` (the test itself needs ``N >= 2``
        to be meaningful, but the formula is defined for any N).
    alpha : float, default=0.05
        Family-wise significance level, in (0, 1).

    Returns
    -------
    float
        CD = q_alpha * sqrt(k (k + 1) / (6 N)), in rank units; positive.

    Raises
    ------
    ValueError
        If ``n_algorithms`` < 2, ``n_datasets`` < 1, either is not an integer, or
        ``alpha`` is outside (0, 1).

    References
    ----------
    .. [1] J. Demšar, "Statistical Comparisons of Classifiers over Multiple Data
       Sets", JMLR 7:1-30, 2006, Sect. 3.2.2 (Nemenyi test).
    """
    k = _check_count(n_algorithms, "n_algorithms", 2)
    n = _check_count(n_datasets, "n_datasets", 1)
    return nemenyi_q(k, alpha) * float(np.sqrt(k * (k + 1) / (6.0 * n)))


# ---------------------------------------------------------------------------
# Holm's step-down adjustment
# ---------------------------------------------------------------------------


def holm(pvalues) -> np.ndarray:
    """Holm step-down adjusted p-values.

    Parameters
    ----------
    pvalues : array-like of shape (m,)
        Unadjusted p-values of m hypotheses, each in [0, 1]; may be empty.

    Returns
    -------
    ndarray of shape (m,)
        Adjusted p-values in the input order, each in [0, 1] and at least its
        unadjusted value. Rejecting every hypothesis whose adjusted p-value is at
        most alpha controls the family-wise error rate at alpha.

    Raises
    ------
    ValueError
        If ``pvalues`` is not 1-D, holds NaN, or holds a value outside [0, 1].

    Notes
    -----
    With the p-values sorted increasingly, p_(1) <= ... <= p_(m), the i-th
    adjusted value is max over j <= i of min(1, (m - j + 1) p_(j)); the running
    maximum makes the adjusted values monotone in the unadjusted ones (Holm 1979;
    Demšar 2006, Sect. 3.2.2). Ties keep their input order, which does not change
    the result.

    References
    ----------
    .. [1] S. Holm, "A simple sequentially rejective multiple test procedure",
       Scandinavian Journal of Statistics 6(2):65-70, 1979.
    .. [2] J. Demšar, JMLR 7:1-30, 2006, Sect. 3.2.2.

    Examples
    --------
    >>> holm([0.01, 0.04, 0.03]).tolist()
    [0.03, 0.06, 0.06]
    """
    p = np.asarray(pvalues, dtype=float)
    if p.ndim != 1:
        raise InputError(f"pvalues must be 1-D, got shape {p.shape}")
    if np.isnan(p).any():
        raise InputError("pvalues hold NaN")
    if ((p < 0.0) | (p > 1.0)).any():
        raise InputError("p-values must lie in [0, 1]")
    m = p.size
    order = np.argsort(p, kind="stable")
    scaled = (m - np.arange(m)) * p[order]
    stepped = np.minimum(np.maximum.accumulate(scaled), 1.0)
    adjusted = np.empty(m, dtype=float)
    adjusted[order] = stepped
    return adjusted


# ---------------------------------------------------------------------------
# Two algorithms over data sets: Wilcoxon signed-rank and sign tests
# ---------------------------------------------------------------------------


def _paired(a, b, greater_is_better: bool) -> np.ndarray:
    """Differences in favour of ``a`` (positive: ``a`` better), cleaned of rounding noise.

    Differences are compared at a resolution of 1e-12 times the largest absolute
    score, so scores that agree but for floating-point noise (means of the same
    fold scores summed in another order, differences of rounded table entries)
    count as equal, and equal differences as ties.
    """
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    if x.ndim != 1 or y.ndim != 1 or x.shape != y.shape:
        raise InputError(
            f"a and b must be 1-D of the same length, got shapes {x.shape} and {y.shape}"
        )
    if x.size < 2:
        raise InputError(f"need at least 2 paired scores (data sets), got {x.size}")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise InputError("a and b must hold finite scores (no NaN or infinity)")
    d = x - y if greater_is_better else y - x
    scale = float(max(np.abs(x).max(), np.abs(y).max()))
    if scale > 0.0:
        step = 1e-12 * scale
        d = np.rint(d / step) * step
    return d + 0.0  # no negative zeros


def paired_min_pvalue(n_datasets: int) -> float:
    """Smallest two-sided p-value of the Wilcoxon signed-rank or sign test over N pairs.

    Parameters
    ----------
    n_datasets : int
        Number of paired scores (data sets) N; ``N >= 1``.

    Returns
    -------
    float
        2 / 2^N, in (0, 1]. The exact tests reach it only when every difference
        has the same sign (and, for Wilcoxon, none is zero); the normal
        approximation :func:`wilcoxon_signed_rank` uses for larger N never goes
        below it. With N = 5 it is 0.0625, so five data sets can never show two
        algorithms to differ at alpha = 0.05.

    Raises
    ------
    ValueError
        If ``n_datasets`` is not an integer >= 1.

    References
    ----------
    .. [1] J. Demšar, "Statistical Comparisons of Classifiers over Multiple Data
       Sets", JMLR 7:1-30, 2006, Sect. 3.1.3-3.1.4 and Table 3.
    """
    n = _check_count(n_datasets, "n_datasets", 1)
    return float(2.0 ** (1 - n))


def _zsplit_r_plus(d, axis=-1):
    """R+ of each row of sign-changed differences, zero differences' ranks split evenly."""
    from scipy.stats import rankdata

    ranks = rankdata(np.abs(d), axis=axis)
    return np.sum(np.where(d > 0, ranks, 0.0) + np.where(d == 0, ranks / 2.0, 0.0), axis=axis)


@dataclass(frozen=True)
class SignedRankResult:
    """Outcome of the Wilcoxon signed-rank test of algorithm a against algorithm b.

    Attributes
    ----------
    statistic : float
        Wilcoxon's T = min(R+, R-), in ``[0, n_used (n_used + 1) / 4]``.
    r_plus : float
        Sum of the ranks of the data sets where a is better, plus half the ranks
        of the zero differences.
    r_minus : float
        The same for b; ``r_plus + r_minus = n_used (n_used + 1) / 2``.
    pvalue : float
        Two-sided p-value, in (0, 1].
    method : str
        ``"exact"`` (Wilcoxon's null distribution: no ties and no zeros left,
        ``n_used`` <= 50),
        ``"exact over all sign changes"`` (ties or zeros, N <= 13),
        ``"normal approximation"`` (otherwise) or ``"none"`` (every difference is
        zero; p = 1).
    n_used : int
        Data sets the ranks are taken over: N, or N - 1 when an odd number of
        differences is zero (one of them is left out, see Notes).
    n_zero : int
        Data sets where a and b score the same (before leaving one out).
    direction : int
        +1 when a is better (R+ > R-), -1 when b is, 0 when R+ = R-.
    """

    statistic: float
    r_plus: float
    r_minus: float
    pvalue: float
    method: str
    n_used: int
    n_zero: int
    direction: int


def wilcoxon_signed_rank(a, b, greater_is_better: bool = True) -> SignedRankResult:
    """Wilcoxon signed-rank test of two algorithms over data sets (Demšar's procedure).

    Parameters
    ----------
    a, b : array-like of shape (n_datasets,)
        Scores of the two algorithms on the same N data sets, in the same order;
        finite; ``N >= 2``.
    greater_is_better : bool, default=True
        Whether larger scores are better; decides which sum is R+ and
        ``direction``, not the p-value (the test is two-sided).

    Returns
    -------
    SignedRankResult

    Raises
    ------
    ValueError
        If ``a`` and ``b`` are not 1-D of the same length >= 2 or hold NaN or an
        infinite value.

    Notes
    -----
    The differences d_i (positive where a is better) are ranked by absolute
    value, ties sharing the mean rank. R+ sums the ranks where a is better, R-
    where b is, and T = min(R+, R-) (Demšar 2006, Sect. 3.1.3).

    Zero differences follow Demšar's rule: their ranks are split evenly between R+
    and R-, and when their number is odd one of them is left out first. Zeros are
    evidence for the null hypothesis, so they are kept rather than dropped
    (scipy's default ``zero_method="wilcox"`` drops them all, which can make a
    test significant that should not be); with an even count the rule is
    scipy's ``zero_method="zsplit"``, which is what is passed to scipy.

    The p-value comes from ``scipy.stats.wilcoxon`` with the method chosen
    explicitly: the exact null distribution when there are no ties and no zeros
    and N <= 50; with ties or zeros and N <= 13, the exact conditional
    distribution over all 2^N sign changes of the observed differences
    (``scipy.stats.permutation_test`` with every resample, deterministic -- the
    same p-value as ``scipy.stats.wilcoxon``'s permutation method); else
    the normal approximation with scipy's tie correction and without continuity
    correction (Demšar's z). None of these goes below :func:`paired_min_pvalue`.

    References
    ----------
    .. [1] F. Wilcoxon, "Individual comparisons by ranking methods", Biometrics
       Bulletin 1(6):80-83, 1945.
    .. [2] J. Demšar, "Statistical Comparisons of Classifiers over Multiple Data
       Sets", JMLR 7:1-30, 2006, Sect. 3.1.3.

    Examples
    --------
    >>> res = wilcoxon_signed_rank([0.9, 0.8, 0.7, 0.95, 0.85], [0.8, 0.72, 0.64, 0.91, 0.82])
    >>> res.statistic, res.pvalue, res.method
    (0.0, 0.0625, 'exact')
    """
    from scipy.stats import permutation_test, rankdata, wilcoxon

    d = _paired(a, b, greater_is_better)
    zeros = np.flatnonzero(d == 0.0)
    n_zero = int(zeros.size)
    if n_zero % 2:
        d = np.delete(d, zeros[0])
    n = int(d.size)
    if not d.any():
        half = n * (n + 1) / 4.0
        return SignedRankResult(half, half, half, 1.0, "none", n, n_zero, 0)
    ranks = rankdata(np.abs(d))
    split = ranks[d == 0.0].sum() / 2.0
    r_plus = float(ranks[d > 0].sum() + split)
    r_minus = float(ranks[d < 0].sum() + split)
    ties = np.unique(np.abs(d)).size < n  # zeros left (an even number) count as ties
    if not ties and n <= 50:
        method = "exact"
        res = wilcoxon(d, zero_method="zsplit", alternative="two-sided", method="exact")
    elif n <= 13:
        # what scipy.stats.wilcoxon does here, with a vectorised R+ (scipy's own passes a
        # per-resample callable: about 1.5 s for N = 13 instead of a few ms)
        method = "exact over all sign changes"
        res = permutation_test((d,), _zsplit_r_plus, permutation_type="samples", vectorized=True,
                               n_resamples=np.inf, alternative="two-sided")
    else:
        method = "normal approximation"
        res = wilcoxon(d, zero_method="zsplit", alternative="two-sided", method="asymptotic")
    pvalue = min(1.0, max(0.0, float(res.pvalue)))
    direction = int(np.sign(r_plus - r_minus))
    return SignedRankResult(min(r_plus, r_minus), r_plus, r_minus, pvalue, method, n, n_zero,
                            direction)


@dataclass(frozen=True)
class SignTestResult:
    """Outcome of the sign test of algorithm a against algorithm b.

    Attributes
    ----------
    wins : int
        Data sets where a is better.
    losses : int
        Data sets where b is better.
    ties : int
        Data sets where they score the same.
    n_used : int
        ``wins + losses + ties``, less one when ``ties`` is odd (see Notes).
    pvalue : float
        Exact two-sided binomial p-value, in (0, 1].
    direction : int
        +1 when a wins more often, -1 when b does, 0 otherwise.
    """

    wins: int
    losses: int
    ties: int
    n_used: int
    pvalue: float
    direction: int


def sign_test(a, b, greater_is_better: bool = True) -> SignTestResult:
    """Sign test of two algorithms over data sets, with Demšar's rule for ties.

    Parameters
    ----------
    a, b : array-like of shape (n_datasets,)
        Scores of the two algorithms on the same N data sets; finite; ``N >= 2``.
    greater_is_better : bool, default=True
        Whether larger scores are better (decides what counts as a win).

    Returns
    -------
    SignTestResult

    Raises
    ------
    ValueError
        If ``a`` and ``b`` are not 1-D of the same length >= 2 or hold NaN or an
        infinite value.

    Notes
    -----
    Under the null hypothesis each algorithm wins a data set with probability
    1/2, so a's wins follow a binomial distribution (Demšar 2006, Sect. 3.1.4).
    Ties support the null hypothesis, so they are not dropped: they are split
    evenly between the two algorithms, and when their number is odd one of them
    is left out (Demšar's rule). The p-value is the exact two-sided
    ``scipy.stats.binomtest`` of ``wins + ties // 2`` successes in ``n_used``
    trials with probability 1/2. Equal scores are judged as in
    :func:`wilcoxon_signed_rank` (to 1e-12 of the largest score).

    References
    ----------
    .. [1] J. Demšar, "Statistical Comparisons of Classifiers over Multiple Data
       Sets", JMLR 7:1-30, 2006, Sect. 3.1.4 and Table 3.

    Examples
    --------
    >>> res = sign_test([0.9, 0.8, 0.7, 0.7, 0.6, 0.5], [0.8, 0.7, 0.7, 0.7, 0.5, 0.6])
    >>> res.wins, res.losses, res.ties, res.n_used, round(res.pvalue, 4)
    (3, 1, 2, 6, 0.6875)
    """
    from scipy.stats import binomtest

    d = _paired(a, b, greater_is_better)
    wins, losses = int((d > 0).sum()), int((d < 0).sum())
    ties = int(d.size) - wins - losses
    half = ties // 2
    n_used = wins + losses + 2 * half
    pvalue = 1.0 if n_used == 0 else min(1.0, float(binomtest(wins + half, n_used, 0.5).pvalue))
    return SignTestResult(wins, losses, ties, n_used, pvalue, int(np.sign(wins - losses)))


# ---------------------------------------------------------------------------
# Wilcoxon signed-rank tests against a baseline, Holm-adjusted
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class PairedResult:
    """One algorithm compared with the baseline over the data sets.

    Attributes
    ----------
    index : int
        Column of the algorithm in the score matrix.
    statistic : float
        Wilcoxon's T = min(R+, R-), the smaller of the rank sums of positive and
        negative differences (zero differences split evenly between them, see
        :func:`wilcoxon_signed_rank`); in ``[0, N (N + 1) / 4]``.
    pvalue : float
        Two-sided p-value of this comparison alone, in (0, 1].
    adjusted_pvalue : float
        ``pvalue`` after Holm's adjustment over the k - 1 comparisons, in (0, 1].
    significant : bool
        Whether ``adjusted_pvalue < alpha``.
    better : bool
        Whether the test leans towards the algorithm: the rank sum of the data
        sets where it beats the baseline exceeds the other one (R+ > R-). This is
        the test's own direction, not a comparison of mean scores.
    """

    index: int
    statistic: float
    pvalue: float
    adjusted_pvalue: float
    significant: bool
    better: bool


def wilcoxon_holm(
    scores, baseline: int, greater_is_better: bool = True, alpha: float = 0.05
) -> list[PairedResult]:
    """Wilcoxon signed-rank test of every algorithm against a baseline, Holm-adjusted.

    Parameters
    ----------
    scores : array-like of shape (n_datasets, n_algorithms)
        One finite score per data set (row) and algorithm (column); at least 2 rows
        and 2 columns.
    baseline : int
        Column of the baseline algorithm, in ``[0, n_algorithms)``.
    greater_is_better : bool, default=True
        Whether larger scores are better; only decides ``better`` (taken from the
        test's own direction, R+ against R-, not from the means), since the test
        is two-sided.
    alpha : float, default=0.05
        Family-wise significance level for ``significant``, in (0, 1).

    Returns
    -------
    list of PairedResult
        One entry per other algorithm, in column order (the baseline is skipped).

    Raises
    ------
    ValueError
        If ``scores`` is not 2-D, has fewer than 2 data sets or 2 algorithms, holds
        NaN or an infinite value; if ``baseline`` is not an integer in
        ``[0, n_algorithms)``; if ``alpha`` is outside (0, 1).

    Notes
    -----
    Each algorithm j is compared with the baseline by
    :func:`wilcoxon_signed_rank` (two-sided): zero differences are ranked with the
    others and their ranks split evenly between R+ and R-, one of them left out
    first when their number is odd, as Demšar (2006, Sect. 3.1.3) prescribes --
    dropping zeros throws away evidence that the two algorithms are equal and can
    make a test significant that should not be. The p-value is exact for N <= 50
    without ties or zeros, exact over all 2^N sign changes for N <= 13 with ties
    or zeros, and the normal approximation otherwise. If every difference is
    zero, R+ = R- = N (N + 1) / 4 and the p-value is 1.

    The k - 1 p-values are then adjusted with :func:`holm`, as Demšar (2006,
    Sect. 3.2.2) suggests for comparisons with a control.

    References
    ----------
    .. [1] F. Wilcoxon, "Individual comparisons by ranking methods", Biometrics
       Bulletin 1(6):80-83, 1945.
    .. [2] J. Demšar, "Statistical Comparisons of Classifiers over Multiple Data
       Sets", JMLR 7:1-30, 2006, Sects. 3.1.3 and 3.2.2.
    .. [3] S. Holm, Scandinavian Journal of Statistics 6(2):65-70, 1979.
    """
    arr = _score_matrix(scores, finite=True)
    k = arr.shape[1]
    if isinstance(baseline, (bool, np.bool_)):
        raise InputError(f"baseline must be a column index, got {baseline!r}")
    try:
        base = operator.index(baseline)
    except TypeError:
        raise InputError(f"baseline must be an integer column index, got {baseline!r}") from None
    if not 0 <= base < k:
        raise InputError(f"baseline {base} is out of range for {k} algorithms")
    alpha = _check_alpha(alpha)

    others = [j for j in range(k) if j != base]
    # each test's own direction: R+ against R- (zero differences split evenly)
    tests = [wilcoxon_signed_rank(arr[:, j], arr[:, base], greater_is_better) for j in others]
    adjusted = holm([t.pvalue for t in tests])

    results = []
    for pos, j in enumerate(others):
        results.append(
            PairedResult(
                index=j,
                statistic=tests[pos].statistic,
                pvalue=tests[pos].pvalue,
                adjusted_pvalue=float(adjusted[pos]),
                significant=bool(adjusted[pos] < alpha),
                better=tests[pos].direction > 0,
            )
        )
    return results


# ---------------------------------------------------------------------------
# Corrected resampled t-test for repeated cross-validation on one data set
# ---------------------------------------------------------------------------


def corrected_resampled_ttest(a, b, n_train: int, n_test: int) -> tuple[float, float]:
    """Nadeau and Bengio's corrected resampled t-test for r x k cross-validation.

    Compares two algorithms on one data set from their paired per-fold scores.
    The ordinary paired t-test underestimates the variance because the training
    sets of different folds overlap; the correction inflates it by the ratio of
    test to training set size.

    Parameters
    ----------
    a, b : array-like of shape (n_folds,)
        Scores of the two algorithms on the same n_folds = r * k folds (r repeats
        of k-fold CV), in the same fold order; finite; ``n_folds >= 2``.
    n_train : int
        Number of training instances per fold; ``> 0``.
    n_test : int
        Number of test instances per fold; ``>= 0`` (0 removes the correction and
        gives the ordinary paired t-test).

    Returns
    -------
    t : float
        mean(d) / sqrt((1 / n_folds + n_test / n_train) * var(d)), with d = a - b
        and var the unbiased (ddof=1) variance; positive when ``a`` scores higher.
    pvalue : float
        Two-sided p-value from Student's t with n_folds - 1 degrees of freedom, in
        [0, 1]. See Notes for var(d) = 0.

    Raises
    ------
    ValueError
        If ``a`` and ``b`` are not 1-D of the same length >= 2, hold NaN or an
        infinite value, or ``n_train`` < 1 or ``n_test`` < 0, or either is not an
        integer.

    Notes
    -----
    If var(d) = 0 the statistic is undefined; the function then returns (0.0, 1.0)
    when mean(d) = 0 (identical scores) and (+inf or -inf, 0.0) otherwise (a
    constant non-zero difference), without a warning.

    With n_test / n_train = 0 the statistic reduces to the paired t-test
    (``scipy.stats.ttest_rel``). Bouckaert and Frank (2004) recommend this test
    with 10 x 10 cross-validation.

    References
    ----------
    .. [1] C. Nadeau and Y. Bengio, "Inference for the Generalization Error",
       Machine Learning 52(3):239-281, 2003 (corrected resampled t-test).
    .. [2] R. R. Bouckaert and E. Frank, "Evaluating the Replicability of
       Significance Tests for Comparing Learning Algorithms", PAKDD 2004.
    """
    from scipy.stats import t as t_dist

    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    if x.ndim != 1 or y.ndim != 1 or x.shape != y.shape:
        raise InputError(
            f"a and b must be 1-D of the same length, got shapes {x.shape} and {y.shape}"
        )
    if x.size < 2:
        raise InputError(f"need at least 2 folds, got {x.size}")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise InputError("a and b must hold finite scores (no NaN or infinity)")
    n_train = _check_count(n_train, "n_train", 1)
    n_test = _check_count(n_test, "n_test", 0)

    d = x - y
    n_folds = d.size
    mean = float(d.mean())
    var = float(d.var(ddof=1))
    if var == 0.0:
        if mean == 0.0:
            return 0.0, 1.0
        return (float("inf") if mean > 0 else float("-inf")), 0.0
    t = mean / np.sqrt((1.0 / n_folds + n_test / n_train) * var)
    pvalue = float(min(1.0, 2.0 * t_dist.sf(abs(t), n_folds - 1)))
    return float(t), pvalue


# ---------------------------------------------------------------------------
# Bayesian signed-rank test with a region of practical equivalence
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class BayesianSignedRankResult:
    """Outcome of the Bayesian signed-rank test of two algorithms over data sets.

    Attributes
    ----------
    p_left : float
        Posterior probability, in [0, 1], that the first algorithm is practically
        better (its scores higher by more than ``rope``, or lower for a measure
        where lower is better).
    p_rope : float
        Posterior probability that the two are practically equivalent.
    p_right : float
        Posterior probability that the second algorithm is practically better.
        The three sum to 1.
    rope : float
        Half-width of the region of practical equivalence, in the measure's
        units, ``>= 0``.
    n_datasets : int
        Number of data sets N.
    """

    p_left: float
    p_rope: float
    p_right: float
    rope: float
    n_datasets: int


#: Monte Carlo samples of the posterior (baycomp's default).
BAYES_SAMPLES = 50_000


def bayesian_signed_rank(a, b, rope: float, greater_is_better: bool = True, *,
                         seed: int = 1, nsamples: int = BAYES_SAMPLES) -> BayesianSignedRankResult:
    """Bayesian signed-rank test (Benavoli et al. 2014, 2017) of ``a`` against ``b``.

    The scores' differences over data sets are modelled by a Dirichlet process
    whose prior is one pseudo-observation of weight 0.5 at zero; for each
    posterior sample, the probability mass of pair-averaged differences below
    ``-rope``, within ``[-rope, rope]`` and above ``rope`` is computed, and each
    of the three probabilities reported is the share of samples in which that
    region carries the most mass. The computation is baycomp's
    ``SignedRankTest`` (the authors' implementation), seeded by ``seed``.

    Parameters
    ----------
    a, b : array-like of shape (n_datasets,)
        One mean score per data set for each algorithm, finite; ``N >= 2``.
    rope : float
        Half-width of the region of practical equivalence, ``>= 0``, in the
        measure's units (0.01 = one percentage point of accuracy).
    greater_is_better : bool, default=True
        Whether higher scores are better; for a loss the differences are negated,
        so that ``p_left`` is always "a is better".
    seed : int, default=1
        Seed of the Monte Carlo sample: the same seed gives the same figures.
    nsamples : int, default=50000
        Posterior samples, ``>= 1``.

    Returns
    -------
    BayesianSignedRankResult

    Raises
    ------
    ValueError
        Arrays of different shapes, fewer than 2 data sets, a non-finite score,
        or ``rope < 0``.
    ImportError
        When baycomp is not installed (``pip install 'ensemblekit[bayes]'``).

    References
    ----------
    .. [1] A. Benavoli, G. Corani, F. Mangili, M. Zaffalon and F. Ruggeri, "A
       Bayesian Wilcoxon signed-rank test based on the Dirichlet process",
       ICML 2014.
    .. [2] A. Benavoli, G. Corani, J. Demšar and M. Zaffalon, "Time for a change:
       a tutorial for comparing multiple classifiers through Bayesian analysis",
       JMLR 18(77):1-36, 2017, Sect. 4.
    """
    d = _paired(a, b, greater_is_better)  # positive: a better
    if not (np.isfinite(rope) and rope >= 0):
        raise InputError(f"rope must be a finite number >= 0, got {rope}")
    nsamples = _check_count(nsamples, "nsamples", 1)
    from baycomp import SignedRankTest

    # baycomp's left region is "the first is better", its first argument's scores higher by
    # more than the rope: the differences in a's favour against zeros
    probs = SignedRankTest.probs(d, np.zeros_like(d), rope=float(rope), nsamples=nsamples,
                                 random_state=seed)
    if len(probs) == 2:  # rope 0: no middle region
        left, right, middle = float(probs[0]), float(probs[1]), 0.0
    else:
        left, middle, right = (float(p) for p in probs)
    return BayesianSignedRankResult(left, middle, right, float(rope), int(d.size))


# ---------------------------------------------------------------------------
# Effect size and wins, ties and losses of a pair
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class PairEffect:
    """How far apart two algorithms are over data sets, and how often each is ahead.

    Attributes
    ----------
    mean_difference : float
        Mean over data sets of a's score minus b's, in the measure's units,
        oriented so that a positive value means a is better (for a measure where
        lower is better, b's score minus a's).
    ci_low, ci_high : float
        Bootstrap percentile confidence interval of ``mean_difference``
        (resampling the data sets), ``ci_low <= mean_difference <= ci_high``
        unless the resampling says otherwise for skewed differences.
    confidence : float
        Level of the interval, in (0, 1).
    wins, ties, losses : int
        Data sets on which a is better, equal (exactly), worse.
    """

    mean_difference: float
    ci_low: float
    ci_high: float
    confidence: float
    wins: int
    ties: int
    losses: int


def pair_effect(a, b, greater_is_better: bool = True, *, seed: int = 1,
                confidence: float = 0.95, n_resamples: int = 9999) -> PairEffect:
    """Mean difference of two algorithms over data sets with a bootstrap interval, and their
    wins, ties and losses.

    Parameters
    ----------
    a, b : array-like of shape (n_datasets,)
        One mean score per data set for each algorithm; ``N >= 2``, no NaN.
    greater_is_better : bool, default=True
        Whether higher scores are better (the sign of the difference follows it).
    seed : int, default=1
        Seed of the resampling: the same seed gives the same interval.
    confidence : float, default=0.95
        Level of the interval, in (0, 1).
    n_resamples : int, default=9999
        Bootstrap resamples, ``>= 1``.

    Returns
    -------
    PairEffect

    Raises
    ------
    ValueError
        Arrays of different shapes, fewer than 2 data sets, NaN, or a level
        outside (0, 1).

    Notes
    -----
    The interval is ``scipy.stats.bootstrap``'s percentile interval of the mean
    of the paired differences, the data sets being the resampled units (Efron
    and Tibshirani 1993, Ch. 13). Wins, ties and losses are counted as the sign
    test counts them (:func:`sign_test`).

    References
    ----------
    .. [1] B. Efron and R. J. Tibshirani, "An Introduction to the Bootstrap",
       Chapman & Hall, 1993, Ch. 13.
    """
    import inspect

    from scipy.stats import bootstrap

    d = _paired(a, b, greater_is_better)
    if d.size < 2:
        raise InputError(f"need at least 2 data sets, got {d.size}")
    if not 0 < confidence < 1:
        raise InputError(f"confidence must lie in (0, 1), got {confidence}")
    n_resamples = _check_count(n_resamples, "n_resamples", 1)
    mean = float(d.mean())
    if np.all(d == d[0]):  # every resample has this mean: no interval to estimate
        low = high = mean
    else:
        gen = np.random.default_rng(seed)
        seeded = {"rng" if "rng" in inspect.signature(bootstrap).parameters else "random_state": gen}
        ci = bootstrap((d,), np.mean, n_resamples=n_resamples, confidence_level=confidence,
                       method="percentile", vectorized=True, **seeded).confidence_interval
        low, high = float(ci.low), float(ci.high)
    wins, losses = int((d > 0).sum()), int((d < 0).sum())
    return PairEffect(mean, low, high, float(confidence), wins, int(d.size) - wins - losses, losses)
