"""Spark as the engine-neutral front sees it (:class:`mlsql._front.engine.Engine`)."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import Any, ClassVar

from pyspark.sql import Column
from pyspark.sql import functions as F

from mlsql import _label_types as LT
from mlsql._front.examples import FrameExample
from mlsql._registry import Measure
from mlsql._weights import WEIGHTED_FAMILIES
from mlsql.spark import _build, families
from mlsql.spark._build import OPS, Check, IntoColumn, example, run
from mlsql.spark._types import check_label_lists, checked_label_value, checked_universe, to_column
from mlsql.spark._weights import weighted_check
from mlsql.spark.ops import column


class SparkEngine:
    """Public functions return a ``Column`` named after the measure; types are checked where
    Spark knows them (Columns of a DataFrame)."""

    name = "spark"
    module = "mlsql.spark"
    into: Any = IntoColumn
    expr = Column
    frame_type = "DataFrame"
    families = families
    words: ClassVar[Mapping[str, str]] = {
        "expr": "pyspark.sql.Column",
        "table": "pyspark.sql.DataFrame",
        "input_type": "str or pyspark.sql.Column",
        "name_or": "name or Column",
        "list_column": "an array column",
        "a_list": "An array",
        "frame": "pyspark.sql.DataFrame",
        "frame_param": "df",
        "weight_type": "str or pyspark.sql.Column",
        "result": "pyspark.sql.DataFrame",
        "prefix": "ms",
        "lazy": "",
        "double": "DOUBLE",
        "label_list": "label-array",
        "aggregate_scope": "``agg`` or ``groupBy().agg`` group;\n    NULL over no known rows.",
    }
    notes: ClassVar[Sequence[str]] = (
        "Pass ``df.actual`` (a Column of the DataFrame) rather than a name to have mlsql",
        "check the label types when the Column is built; a name is checked by Spark.",
    )

    def default_check(self, measure: Measure) -> Check:
        """Label arrays of one kind."""
        return check_label_lists

    def apply(
        self,
        measure: Measure,
        inputs: Sequence[Any],
        build: Callable[..., Column],
        check: Check | None,
    ) -> Column:
        """``build`` over the inputs as Columns, once ``check`` accepts the types it can see."""
        cols = [
            to_column(x, measure.name, name) for x, name in zip(inputs, measure.inputs, strict=True)
        ]
        if check is not None:
            cols = list(check(measure.name, measure.inputs, cols) or cols)
        return column(build(*cols)).alias(measure.name)

    def weighted_check(self, check: Check | None) -> Check:
        """The inputs' ``check``, then ``sample_weight`` (:mod:`mlsql.spark._weights`)."""
        return weighted_check(check)

    def label_value_check(self, check: Check | None, values: Mapping[str, Any]) -> Check:
        """The inputs' ``check``, then each one-label parameter against the first input's
        type and a list of classes against the type both label inputs become, in the query
        (a Column's type is known when the query runs)."""

        def checked(func: str, names: Sequence[str], cols: Sequence[Column]) -> list[Column]:
            out = list((check(func, names, cols) if check is not None else None) or cols)
            first = unchecked = out[0]
            for param, value in values.items():
                if param == "labels":  # a list of classes (cohen_kappa_score's labels)
                    both = F.array(*out[:2])  # of the type both label inputs become
                    first = checked_universe(first, value, func, typed=both)
                    continue
                # the first label's check outermost: it is the one a query reports; each
                # reads the unchecked Column's type (linear in the labels, not exponential)
                for label in reversed(LT.label_values(param, value)):
                    first = checked_label_value(first, label, param, func, typed=unchecked)
            return [first, *out[1:]]

        return checked

    def formula_build(self, measure: Measure, family: ModuleType) -> Callable[..., Column]:
        """The formula run directly on the Columns of ``family.stats``; with
        ``sample_weight``, a family whose ``stats`` take a ``weight`` weighs its
        statistics, a list family (:data:`mlsql._weights.WEIGHTED_FAMILIES`) its formula's
        sums (:func:`mlsql.spark._build.run`)."""
        weighs_stats = "weight" in inspect.signature(family.stats).parameters

        def formula(*inputs: Column, sample_weight: Column | None = None, **params: Any) -> Any:
            if weighs_stats:
                given = {} if sample_weight is None else {"weight": sample_weight}
                stats = family.stats(measure, *inputs, **given)
                bind = getattr(family, "bind", None)
                if bind is not None:  # each statistic once in the plan, the formula over them
                    return bind(stats, lambda s: measure.build(OPS, s, **params))  # type: ignore[misc]
                return measure.build(OPS, stats, **params)  # type: ignore[misc]
            stats = family.stats(measure, *inputs)
            return run(measure.build, sample_weight, stats, **params)  # type: ignore[arg-type]

        def weighted(*inputs: Column, sample_weight: Column | None = None, **params: Any) -> Column:
            out = formula(*inputs, sample_weight=sample_weight, **params)
            if isinstance(out, dict):  # a struct of counts, its fields in the formula's order
                return F.struct(*(value.alias(name) for name, value in out.items()))
            return out

        def build(*inputs: Column, **params: Any) -> Column:
            return weighted(*inputs, **params)

        # sample_weight where the family's weights are tested (mlsql._weights.WEIGHTED_FAMILIES)
        return weighted if weighs_stats or measure.family in WEIGHTED_FAMILIES else build

    def example(self, measure: Measure, family: ModuleType) -> Sequence[str]:
        """The family's example (``family.example(measure)``) as doctest lines."""
        found = family.example(measure) if hasattr(family, "example") else None
        if found is None:
            return ()
        rows, schema, params, output = found
        return example(measure.name, measure.kind, rows, schema, measure.inputs, params, output)

    def frame_example(self, name: str, example: FrameExample) -> list[str]:
        """The statements of ``example`` (:func:`_build.frame_example`)."""
        return _build.frame_example(name, example)


SPARK = SparkEngine()
