"""Statistics for comparing algorithms over several data sets (Demšar, JMLR 7, 2006).

Average ranks, the Friedman test with the Iman-Davenport F, the Nemenyi critical
difference, Wilcoxon signed-rank tests against a baseline with Holm's adjustment,
and, for one data set, Nadeau and Bengio's corrected resampled t-test.

scipy is imported inside the functions that need it, so importing this module
stays cheap (the CLI imports it on start-up).
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

import numpy as np


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
        raise ValueError(f"scores must be a non-empty 2-D array, got shape {arr.shape}")
    if np.isnan(arr).any():
        raise ValueError("scores hold NaN; every algorithm needs a score on every data set")
    keyed = -arr if greater_is_better else arr
    return rankdata(keyed, method="average", axis=1).mean(axis=0)


# ---------------------------------------------------------------------------
# Input checks shared by the tests below
# ---------------------------------------------------------------------------


def _score_matrix(scores, *, finite: bool) -> np.ndarray:
    """Return ``scores`` as a float (N, k) array with N >= 2 and k >= 2."""
    arr = np.asarray(scores, dtype=float)
    if arr.ndim != 2:
        raise ValueError(
            f"scores must be a 2-D array of shape (n_datasets, n_algorithms), got shape {arr.shape}"
        )
    n_datasets, n_algorithms = arr.shape
    if n_datasets < 2:
        raise ValueError(f"need at least 2 data sets (rows), got {n_datasets}")
    if n_algorithms < 2:
        raise ValueError(f"need at least 2 algorithms (columns), got {n_algorithms}")
    if np.isnan(arr).any():
        raise ValueError("scores hold NaN; every algorithm needs a score on every data set")
    if finite and not np.isfinite(arr).all():
        raise ValueError("scores hold an infinite value; the paired test needs finite scores")
    return arr


def _check_alpha(alpha) -> float:
    alpha = float(alpha)
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie in the open interval (0, 1), got {alpha}")
    return alpha


def _check_count(value, name: str, minimum: int) -> int:
    try:
        count = operator.index(value)
    except TypeError:
        raise ValueError(f"{name} must be an integer, got {value!r}") from None
    if count < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {count}")
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
        Iman-Davenport statistic F_F, in ``[0, inf]`` (``inf`` when every data set
        ranks the algorithms in the same order, without ties).
    f_pvalue : float
        Upper-tail p-value of ``iman_davenport`` under F with ``n_algorithms - 1`` and
        ``(n_algorithms - 1) * (n_datasets - 1)`` degrees of freedom.
    n_datasets : int
        Number of data sets N.
    n_algorithms : int
        Number of algorithms k.
    """

    ranks: np.ndarray
    chi2: float
    chi2_pvalue: float
    iman_davenport: float
    f_pvalue: float
    n_datasets: int
    n_algorithms: int


def friedman_from_ranks(avg_ranks, n_datasets: int) -> FriedmanResult:
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

    compared with F on k - 1 and (k - 1)(N - 1) degrees of freedom. No correction
    for ties is applied (Demšar's worked example uses none; ``scipy.stats.
    friedmanchisquare`` does apply one, so its chi^2 is larger when rows hold ties).

    Two edge cases are exact rather than numerical accidents: chi^2_F = 0 (every
    algorithm has average rank (k + 1) / 2, e.g. all scores tied on every data set)
    gives F_F = 0 and both p-values 1; chi^2_F = N (k - 1), its maximum (every data
    set orders the algorithms identically, without ties), gives F_F = inf and
    ``f_pvalue`` 0.

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
        raise ValueError(
            f"avg_ranks must be 1-D with at least 2 algorithms, got shape {ranks.shape}"
        )
    if np.isnan(ranks).any():
        raise ValueError("avg_ranks hold NaN")
    k = ranks.size
    n = _check_count(n_datasets, "n_datasets", 2)
    if (ranks < 1.0).any() or (ranks > k).any():
        raise ValueError(
            f"average ranks must lie in [1, {k}] for {k} algorithms, got {ranks.tolist()}"
        )

    chi2_max = float(n * (k - 1))
    chi2 = 12.0 * n / (k * (k + 1)) * (float(np.sum(ranks**2)) - k * (k + 1) ** 2 / 4.0)
    # Rounding can push the statistic a hair outside its exact range [0, N(k-1)].
    tol = 1e-9 * chi2_max
    if chi2 <= tol:
        chi2 = 0.0
    elif chi2 >= chi2_max - tol:
        chi2 = chi2_max

    df1 = k - 1
    df2 = (k - 1) * (n - 1)
    chi2_pvalue = float(chi2_dist.sf(chi2, df1)) if chi2 > 0 else 1.0
    if chi2 == 0.0:
        f_stat, f_pvalue = 0.0, 1.0
    elif chi2 == chi2_max:
        f_stat, f_pvalue = float("inf"), 0.0
    else:
        f_stat = (n - 1) * chi2 / (chi2_max - chi2)
        f_pvalue = float(f_dist.sf(f_stat, df1, df2))
    return FriedmanResult(
        ranks=ranks,
        chi2=float(chi2),
        chi2_pvalue=chi2_pvalue,
        iman_davenport=float(f_stat),
        f_pvalue=f_pvalue,
        n_datasets=n,
        n_algorithms=k,
    )


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
    :func:`friedman_from_ranks`, without a tie correction.

    References
    ----------
    .. [1] J. Demšar, "Statistical Comparisons of Classifiers over Multiple Data
       Sets", JMLR 7:1-30, 2006, Sect. 3.2.2.

    Examples
    --------
    >>> res = friedman_test([[0.90, 0.80, 0.70], [0.85, 0.80, 0.60], [0.95, 0.90, 0.91]])
    >>> np.round(res.ranks, 3).tolist()
    [1.0, 2.333, 2.667]
    """
    arr = _score_matrix(scores, finite=False)
    return friedman_from_ranks(average_ranks(arr, greater_is_better), arr.shape[0])


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
        raise ValueError(f"pvalues must be 1-D, got shape {p.shape}")
    if np.isnan(p).any():
        raise ValueError("pvalues hold NaN")
    if ((p < 0.0) | (p > 1.0)).any():
        raise ValueError("p-values must lie in [0, 1]")
    m = p.size
    order = np.argsort(p, kind="stable")
    scaled = (m - np.arange(m)) * p[order]
    stepped = np.minimum(np.maximum.accumulate(scaled), 1.0)
    adjusted = np.empty(m, dtype=float)
    adjusted[order] = stepped
    return adjusted


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
        negative differences (zero differences split evenly between them); in
        ``[0, N (N + 1) / 4]``.
    pvalue : float
        Two-sided p-value of this comparison alone, in [0, 1].
    adjusted_pvalue : float
        ``pvalue`` after Holm's adjustment over the k - 1 comparisons, in [0, 1].
    significant : bool
        Whether ``adjusted_pvalue < alpha``.
    better : bool
        Whether the algorithm's mean score over the data sets is better than the
        baseline's (larger if ``greater_is_better``, else smaller).
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
    For each algorithm j, the differences d_i = scores[i, j] - scores[i, baseline]
    over the N data sets go to ``scipy.stats.wilcoxon`` (two-sided) with
    ``zero_method="zsplit"``: zero differences are ranked with the others and their
    ranks split evenly between R+ and R-. That is the treatment Demšar (2006,
    Sect. 3.1.3) recommends -- dropping zeros ("wilcox") throws away evidence that
    the two algorithms are equal and can make a test significant that should not
    be. scipy's default ``method="auto"`` is kept: exact null distribution for
    N <= 50 without ties or zeros, an exhaustive (deterministic) permutation test
    for N <= 13 with ties or zeros, the normal approximation otherwise. If every
    difference is zero, R+ = R- = N (N + 1) / 4 and the p-value is 1.

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
    from scipy.stats import wilcoxon

    arr = _score_matrix(scores, finite=True)
    n, k = arr.shape
    if isinstance(baseline, (bool, np.bool_)):
        raise ValueError(f"baseline must be a column index, got {baseline!r}")
    try:
        base = operator.index(baseline)
    except TypeError:
        raise ValueError(f"baseline must be an integer column index, got {baseline!r}") from None
    if not 0 <= base < k:
        raise ValueError(f"baseline {base} is out of range for {k} algorithms")
    alpha = _check_alpha(alpha)

    from scipy.stats import rankdata

    others = [j for j in range(k) if j != base]
    stats_, pvals, leans = [], [], []
    for j in others:
        d = arr[:, j] - arr[:, base]
        if not d.any():
            stats_.append(n * (n + 1) / 4.0)
            pvals.append(1.0)
            leans.append(0.0)
            continue
        res = wilcoxon(d, zero_method="zsplit", alternative="two-sided")
        stats_.append(float(res.statistic))
        pvals.append(min(1.0, max(0.0, float(res.pvalue))))
        # direction of the test itself: R+ - R- (zero differences split evenly)
        ranks = rankdata(np.abs(d))
        leans.append(float(ranks[d > 0].sum() - ranks[d < 0].sum()))
    adjusted = holm(pvals)

    results = []
    for pos, j in enumerate(others):
        better = leans[pos] > 0 if greater_is_better else leans[pos] < 0
        results.append(
            PairedResult(
                index=j,
                statistic=stats_[pos],
                pvalue=pvals[pos],
                adjusted_pvalue=float(adjusted[pos]),
                significant=bool(adjusted[pos] < alpha),
                better=bool(better),
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
        raise ValueError(
            f"a and b must be 1-D of the same length, got shapes {x.shape} and {y.shape}"
        )
    if x.size < 2:
        raise ValueError(f"need at least 2 folds, got {x.size}")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise ValueError("a and b must hold finite scores (no NaN or infinity)")
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
