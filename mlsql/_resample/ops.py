"""The formulas' primitives over numpy arrays, where ``sum`` is a weighted sum.

:class:`WeightedOps` runs a registry formula (:mod:`mlsql._formulas`) on the
distinct statistic tuples of a group and a weight matrix: each statistic is a
masked array over the tuples (masked = NULL, an unknown row), and
``sum``/``mean``/``count`` reduce over the last axis with the weights. With
weights of shape (resamples, tuples) one call evaluates the measure on every
resample at once; with the tuples' row counts (shape (1, tuples)) it is the
measure itself.

The semantics are SQL's, as in every engine: ``sum`` and ``mean`` are NULL
over no (positively weighted) non-NULL value, ``count`` is 0 there, NaN
propagates through ``sum``, and ``when`` takes ``otherwise`` where the
condition is NULL.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mlsql._errors import MlsqlError
from mlsql._params import ZeroDivision

Array = np.ma.MaskedArray


def masked(value: Any) -> Array:
    """``value`` as a float or bool masked array; ``None`` is a masked (NULL) scalar."""
    if value is None:
        return np.ma.masked_all((), dtype=float)
    if isinstance(value, np.ma.MaskedArray):
        return value
    return np.ma.asarray(value)


class Lazy:
    """Weights (resamples x tuples) not made yet: a native kernel makes them where it reads
    them, :meth:`dense` as an array (:class:`mlsql._resample.numbers.Drawn`)."""

    shape: tuple[int, int]

    def __len__(self) -> int:
        return self.shape[0]

    def dense(self) -> np.ndarray:  # pragma: no cover - the subclass's
        raise NotImplementedError


class WeightedOps:
    """Formula primitives whose reductions weigh the last axis by ``weights``.

    Parameters
    ----------
    weights : numpy.ndarray
        Broadcastable against the values being reduced: (resamples, tuples)
        for rows, (resamples, classes) for a class axis, or a scalar 1.
    rows : numpy.ndarray, optional
        The row counts behind ``weights`` (resamples, tuples): the Poisson draws,
        or each tuple's rows m for the estimate, before ``sample_weight``.

    Examples
    --------
    >>> import numpy as np
    >>> ops = WeightedOps(np.array([[1.0, 2.0], [0.0, 0.0]]))
    >>> x = np.ma.array([3.0, 4.0])
    >>> ops.sum(x).tolist(), ops.count(x).tolist()
    ([11.0, None], [3.0, 0.0])
    """

    def __init__(self, weights: Any, rows: Any = None) -> None:
        # a Lazy batch of draws stays lazy: only the per-label sums read it
        lazy = isinstance(weights, Lazy)
        self.weights = weights if lazy else np.asarray(weights, dtype=float)
        self.rows = rows if rows is None or lazy else np.asarray(rows, dtype=float)
        #: the weights' totals over the last axis, by the shape they were broadcast to
        self._totals: dict[tuple[int, ...], np.ndarray] = {}

    def _reduce(self, x: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(weighted total, weight of the non-NULL values, whether a weighted NaN is met)."""
        x = masked(x)
        valid = ~np.ma.getmaskarray(x)
        data = np.asarray(np.ma.getdata(x), dtype=float)
        nan = np.isnan(data) & valid
        w = self.weights
        if valid.all() and not nan.any():  # the common case: the same sums, fewer passes
            shape = np.broadcast_shapes(w.shape, data.shape)
            if shape not in self._totals:
                self._totals[shape] = np.broadcast_to(w, shape).sum(axis=-1)
            present = self._totals[shape]
            total = (w * data).sum(axis=-1)
            return total, present, np.zeros(present.shape, dtype=bool)
        clean = np.where(valid & ~nan, data, 0.0)
        total = (w * clean).sum(axis=-1)
        present = (w * valid).sum(axis=-1)
        hit_nan = ((w > 0) & nan).sum(axis=-1) > 0
        return total, present, hit_nan

    def _known_rows(self, x: Any) -> np.ndarray | None:
        """The rows of the non-NULL values of ``x`` (None where :attr:`rows` is not given)."""
        if self.rows is None or isinstance(self.rows, Lazy):
            return None
        valid = ~np.ma.getmaskarray(masked(x))
        shape = np.broadcast_shapes(self.rows.shape, valid.shape)
        return (np.broadcast_to(self.rows, shape) * valid).sum(axis=-1)

    def sum(self, x: Any) -> Array:
        """SQL ``sum`` of the weighted values: NULL over no non-NULL value (with
        :attr:`rows`, values of rows weighing 0 sum to 0, as ``sum(x * w)`` does)."""
        total, present, hit_nan = self._reduce(x)
        total = np.where(hit_nan, np.nan, total)
        empty = present == 0
        if empty.any():  # weightless values: NULL only where no row holds one
            rows = self._known_rows(x)
            if rows is not None:
                empty &= rows == 0
        return np.ma.array(total, mask=empty)

    def weightless(self, x: Any) -> Any:
        """True where ``x`` has non-NULL values whose weights add up to 0 (rows that all
        weigh 0; :meth:`mlsql._weights.WeightedOps.weightless`); False without :attr:`rows`."""
        rows = self._known_rows(x)
        if rows is None:
            return False
        return (rows > 0) & (self._reduce(x)[1] == 0)

    def mean(self, x: Any) -> Array:
        """SQL ``avg`` of the weighted values: NULL over no weighted non-NULL value."""
        total, present, hit_nan = self._reduce(x)
        with np.errstate(divide="ignore", invalid="ignore"):
            value = np.where(hit_nan, np.nan, total / np.where(present == 0, 1, present))
        return np.ma.array(value, mask=present == 0)

    def count(self, x: Any) -> np.ndarray:
        """The weight of the non-NULL values (SQL ``count``: 0, never NULL)."""
        return self._reduce(x)[1]

    def when(self, condition: Any, then: Any, otherwise: Any) -> Array:
        """``then`` where ``condition`` holds, else ``otherwise`` (also where it is NULL)."""
        cond = np.ma.filled(masked(condition), False).astype(bool)
        return np.ma.where(cond, masked(then), masked(otherwise))

    def undefined(self, zero_division: ZeroDivision, nothing_to_score: Any) -> Any:
        """The value of an undefined ratio under ``zero_division``."""
        return zero_division.undefined(self.when, nothing_to_score)

    def skips_undefined(self, zero_division: ZeroDivision) -> bool:
        """Whether averages leave undefined values out (NaN and 'ignore')."""
        return zero_division.skips_undefined

    def is_nan(self, x: Any) -> Array:
        """True where ``x`` is NaN (NULL stays NULL)."""
        x = masked(x)
        data = np.isnan(np.asarray(np.ma.getdata(x), dtype=float))
        return np.ma.array(data, mask=np.ma.getmaskarray(x))

    def nan(self) -> float:
        """NaN."""
        return float("nan")

    def error_if(self, condition: Any, value: Any, template: str, got: Any) -> Any:
        """``value``; raises :class:`MlsqlError` (``template``, {} = ``got``) where ``condition``."""
        if np.any(np.ma.filled(masked(condition), False)):
            raise MlsqlError(template.format(got))
        return value

    def floor(self, x: Any) -> Array:
        """Rounded down."""
        return np.ma.floor(masked(x))

    def sqrt(self, x: Any) -> Array:
        """Square root."""
        return np.ma.sqrt(masked(x))
