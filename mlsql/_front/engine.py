"""What a DataFrame engine hands the front: the few things that differ between engines."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import Any, Protocol

from mlsql._front.examples import FrameExample
from mlsql._registry import Measure


class Engine(Protocol):
    """A DataFrame engine as the front sees it (see :mod:`mlsql._front`).

    Implemented by :data:`mlsql.polars._engine.POLARS` and
    :data:`mlsql.spark._engine.SPARK`.
    """

    @property
    def name(self) -> str:
        """The engine's name in the registry (``Measure.available_in``)."""
        ...

    @property
    def module(self) -> str:
        """The public module its functions appear in (``__module__``)."""
        ...

    @property
    def into(self) -> Any:
        """The annotation of an input (a column name or an expression)."""
        ...

    @property
    def expr(self) -> Any:
        """The type a public function returns."""
        ...

    @property
    def frame_type(self) -> str:
        """The annotation of a table function's source and of the table it returns."""
        ...

    @property
    def families(self) -> ModuleType:
        """The package holding the engine's family modules."""
        ...

    @property
    def words(self) -> Mapping[str, str]:
        """The words its docstrings use, filled into :mod:`mlsql._front.docs`' templates.

        ``expr`` (the returned type), ``table`` (what a table measure returns),
        ``input_type`` (an input's type line), ``name_or`` (``name or
        expression``), ``list_column`` (``a list column``), ``a_list`` (``A
        list``), ``aggregate_scope`` (what one aggregate value is per), ``frame``
        (the type of a table function's source), ``label_list`` (``label-list``),
        ``frame_param`` (the name of a frame parameter), ``weight_type`` (the type of
        ``sample_weight``), ``result`` (the type of a collected result), ``prefix``
        (the engine's module as examples import it), ``lazy`` (what a table's
        ``Returns`` adds of laziness), ``double`` (the name of DOUBLE).
        """
        ...

    @property
    def notes(self) -> Sequence[str]:
        """Lines of a ``Notes`` section every generated docstring ends with (may be empty)."""
        ...

    def default_check(self, measure: Measure) -> Any:
        """The input check of a family module that defines no ``input_check``."""
        ...

    def apply(
        self,
        measure: Measure,
        inputs: Sequence[Any],
        build: Callable[..., Any],
        check: Any,
    ) -> Any:
        """``build(*exprs)`` over the inputs as expressions, once ``check`` accepts them.

        ``inputs`` are what the user passed (names or expressions); the result
        is named after ``measure``.
        """
        ...

    def weighted_check(self, check: Any) -> Any:
        """``check`` of a measure's inputs followed by ``sample_weight``.

        The weight must be numeric (else the engine's number-type error naming
        ``sample_weight``); it comes back as a float expression that makes the
        query fail (:data:`mlsql._params.SAMPLE_WEIGHT_MESSAGE`) on a negative,
        NaN or infinite weight, NULL where it is NULL, and every other input
        NULL where the weight is NULL (the row is unknown).
        """
        ...

    def label_value_check(self, check: Any, values: Mapping[str, Any]) -> Any:
        """``check`` of a measure's inputs followed by the check that each of ``values``
        (parameter name -> one label, :data:`mlsql._label_types.LABEL_VALUE_PARAMS`) is of
        the first input's label kind (:data:`mlsql._label_types.LABEL_VALUE_MESSAGE`)."""
        ...

    def formula_build(self, measure: Measure, family: ModuleType) -> Callable[..., Any]:
        """``build(*inputs, **params)`` of a formula measure whose statistics come from
        ``family.stats``."""
        ...

    def example(self, measure: Measure, family: ModuleType) -> Sequence[str]:
        """The ``Examples`` lines of a generated function's docstring (may be empty)."""
        ...

    def frame_example(self, name: str, example: FrameExample) -> list[str]:
        """The doctest statements (without ``>>>``) of ``example``, a call of function
        ``name`` over a frame, the last one printing what it shows."""
        ...


def frame_words(engine: Engine) -> dict[str, str]:
    """The words of a function over a frame (``bootstrap``, ``compare``, ``slices``):
    ``frame`` (the parameter's name), ``frame_type``, ``weight_type`` and ``result_type``,
    from ``engine``'s :attr:`Engine.words`.

    Examples
    --------
    >>> from mlsql.spark._engine import SPARK
    >>> frame_words(SPARK)["frame"], frame_words(SPARK)["result_type"]
    ('df', 'pyspark.sql.DataFrame')
    """
    words = engine.words
    return {
        "frame": words["frame_param"],
        "frame_type": words["frame"],
        "weight_type": words["weight_type"],
        "result_type": words["result"],
    }
