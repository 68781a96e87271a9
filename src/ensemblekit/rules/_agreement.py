"""Rule agreement of instances, computed in row blocks from a bit-packed rule matrix.

ISCA's similarity (:func:`ensemblekit.rules.isca.rule_similarity`) of rows
``i`` and ``j`` is ``S_ij = 1 - d_ij``, ``d_ij`` the weighted fraction of rules
on which the two rows differ (one fires the rule, the other does not). For
tens of thousands of rows the ``n x n`` matrix does not fit comfortably in
memory (20,000 rows: 3.2 GB in float64), so this module never forms it:

* the rule matrix ``T`` (``n x r``, 0/1) is kept bit-packed along the rules,
  ``n * ceil(r / 8)`` bytes (:func:`pack_rules`);
* the mismatch counts of a block of rows against the other rows come from one
  matrix product, ``c_ij = s_i + s_j - 2 (T T')_ij`` with ``s = T 1`` (rule
  counts), computed on whole numbers only, so every entry is exact whatever the
  BLAS, its threads or the block sizes; general rule weights are first rounded
  to whole multiples of ``2^-52`` of their total (:func:`integer_weights`),
  which keeps the same exactness;
* :meth:`RuleAgreement.condensed_distance` fills scipy's condensed distance
  vector (the input of :func:`scipy.cluster.hierarchy.linkage`) block by block,
  and :meth:`RuleAgreement.blocks` yields rows of ``S`` for writing it out.

With unit weights ``d_ij = c_ij / r`` is the correctly rounded quotient that
:func:`scipy.spatial.distance.pdist` with ``metric="hamming"`` returns, so the
results equal, bit for bit, those of the dense computation this replaces.

Numpy arrays in, arrays out; nothing here reads files or prints.
"""

from __future__ import annotations

import numpy as np

__all__ = ["RuleAgreement", "integer_weights", "pack_rules"]

# Entries of one block of the result (rows x columns); a few float64 temporaries of this size
# live at once, about 16 MB each.
_BLOCK_ENTRIES = 1 << 21
# Whole numbers up to this bound are exact in float32 (the 24-bit significand).
_FLOAT32_EXACT = 1 << 24
# Rule weights are rounded to whole numbers summing to at most this (float64 stays exact
# for every partial sum of them up to 2**53).
_WEIGHT_TOTAL = float(1 << 52)


def pack_rules(T) -> np.ndarray:
    """Bit-pack a 0/1 rule matrix along the rules (``numpy.packbits``, big bit order).

    Parameters
    ----------
    T : array-like or sparse matrix of shape (n_samples, n_rules)
        Nonzero entries mean "the rule fires for the row".

    Returns
    -------
    ndarray of shape (n_samples, ceil(n_rules / 8)), uint8
        Row ``i`` holds the bits of ``T[i]``; the unused low bits of the last
        byte are 0.
    """
    n, r = T.shape
    packed = np.zeros((n, (r + 7) // 8), dtype=np.uint8)
    if hasattr(T, "tocsr"):  # a scipy sparse matrix, converted without importing scipy
        T = T.tocsr()
        for start in range(0, n, max(1, _BLOCK_ENTRIES // max(r, 1))):
            stop = min(n, start + max(1, _BLOCK_ENTRIES // max(r, 1)))
            packed[start:stop] = np.packbits(T[start:stop].toarray() != 0, axis=1)
        return packed
    if n and r:
        packed[:] = np.packbits(np.asarray(T) != 0, axis=1)
    return packed


def integer_weights(weights, n_rules: int):
    """Rule weights as whole numbers, so that weighted mismatch sums are exact.

    Parameters
    ----------
    weights : ndarray of shape (n_rules,) or None
        Non-negative, finite (checked by the caller). None, or all zero, means
        equal weights.
    n_rules : int

    Returns
    -------
    q : ndarray of shape (n_rules,), float64, or None
        None for equal weights (each rule counts 1). Otherwise
        ``floor(a_k * 2^52 / sum(a))``: each weight's share of the total is
        kept to within ``2^-52``, so a weighted distance moves by less than
        ``n_rules * 2^-52`` (2e-13 for 1000 rules).
    total : float
        ``sum(q)`` (``n_rules`` for equal weights), a whole number below ``2^53``.
    """
    if weights is None:
        return None, float(n_rules)
    a = np.asarray(weights, dtype=np.float64)
    if a.sum() == 0:
        return None, float(n_rules)
    if np.all(a == a[0]):
        return None, float(n_rules)
    q = np.floor(a * (_WEIGHT_TOTAL / a.sum()))
    return q, float(q.sum())


class RuleAgreement:
    """Distances and similarities of the rows of a bit-packed rule matrix, a block at a time.

    Parameters
    ----------
    packed : ndarray of shape (n_samples, ceil(n_rules / 8)), uint8
        From :func:`pack_rules`.
    n_rules : int
        Number of rules r (the bits used in each row).
    weights : ndarray of shape (n_rules,), optional
        Non-negative rule weights ``a_k``; None or all zero: equal weights.

    Notes
    -----
    Memory: the unpacked rule matrix, ``4 n r`` bytes with equal weights
    (``8 n r`` with other weights or beyond 2^24 rules), plus a few blocks of
    about 16 MB.
    """

    def __init__(self, packed, n_rules: int, weights=None):
        self.n_samples = int(packed.shape[0])
        self.n_rules = int(n_rules)
        self.q, self.total = integer_weights(weights, self.n_rules)
        exact32 = self.q is None and self.n_rules < _FLOAT32_EXACT
        dtype = np.float32 if exact32 else np.float64
        bits = np.unpackbits(packed, axis=1, count=self.n_rules) if self.n_rules else \
            np.zeros((self.n_samples, 0), dtype=np.uint8)
        self.U = bits.astype(dtype)
        del bits
        left = self.U if self.q is None else self.U * self.q
        # weighted rule count of each row: whole numbers, exact in float64
        self.s = left.sum(axis=1, dtype=np.float64)

    def _left(self, start: int, stop: int) -> np.ndarray:
        return self.U[start:stop] if self.q is None else self.U[start:stop] * self.q

    def block_rows(self, columns: int | None = None) -> int:
        """Rows per block so that a block holds about 2^21 entries (at least 1 row)."""
        width = self.n_samples if columns is None else columns
        return max(1, _BLOCK_ENTRIES // max(width, 1))

    def distance_rows(self, start: int, stop: int, first: int = 0) -> np.ndarray:
        """``d_ij`` for rows ``start..stop-1`` and columns ``first..n-1``, float64 in [0, 1].

        ``d_ij`` is the weighted fraction of rules on which rows ``i`` and
        ``j`` differ: exactly 0 for identical rule vectors, exactly symmetric,
        and the same bits however the rows are blocked.
        """
        if self.n_rules == 0:
            return np.zeros((stop - start, self.n_samples - first))
        gram = self._left(start, stop) @ self.U[first:].T
        count = np.add.outer(self.s[start:stop], self.s[first:])
        count -= 2.0 * gram
        count /= self.total
        np.clip(count, 0.0, 1.0, out=count)
        return count

    def similarity_rows(self, start: int, stop: int) -> np.ndarray:
        """Rows ``start..stop-1`` of ``S = 1 - d``, shape (stop - start, n_samples), float64."""
        if self.n_rules == 0:
            return np.ones((stop - start, self.n_samples))
        S = self.distance_rows(start, stop)
        np.subtract(1.0, S, out=S)
        return S

    def blocks(self, block_rows: int | None = None):
        """Yield ``(start, S[start:stop])`` over all rows, in order.

        Parameters
        ----------
        block_rows : int, optional
            Rows per block (default: about 2^21 entries per block).
        """
        step = self.block_rows() if block_rows is None else max(1, int(block_rows))
        for start in range(0, self.n_samples, step):
            stop = min(self.n_samples, start + step)
            yield start, self.similarity_rows(start, stop)

    def similarity_matrix(self) -> np.ndarray:
        """The dense ``n x n`` similarity (8 n^2 bytes: for small n)."""
        S = np.empty((self.n_samples, self.n_samples))
        for start, block in self.blocks():
            S[start:start + block.shape[0]] = block
        return S

    def condensed_distance(self) -> np.ndarray:
        """scipy's condensed form of ``1 - S``, float64, ``n (n - 1) / 2`` entries.

        Entry ``(i, j)``, ``i < j``, sits at ``i n - i (i + 1) / 2 + j - i - 1``
        (:func:`scipy.spatial.distance.squareform`'s order). Computed as
        ``1 - (1 - d)``, clipped to [0, 1], the value the dense route
        ``squareform(1 - S)`` gives, so the linkage is unchanged.
        """
        n = self.n_samples
        out = np.empty(n * (n - 1) // 2)
        if n < 2:
            return out
        start = 0
        while start < n - 1:
            # blocks get taller as the rows get shorter (row i needs columns i+1..n-1)
            stop = min(n - 1, start + self.block_rows(n - start))
            if self.n_rules == 0:
                block = np.zeros((stop - start, n - start))
            else:
                block = self.distance_rows(start, stop, first=start)
                np.subtract(1.0, block, out=block)   # S
                np.subtract(1.0, block, out=block)   # 1 - S
                np.clip(block, 0.0, 1.0, out=block)
            for i in range(start, stop):
                offset = i * n - i * (i + 1) // 2
                out[offset:offset + n - i - 1] = block[i - start, i - start + 1:]
            start = stop
        return out
