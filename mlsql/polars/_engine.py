"""Polars as the engine-neutral front sees it (:class:`mlsql._front.engine.Engine`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import Any, ClassVar

import polars as pl

from mlsql import _label_types as LT
from mlsql._front.examples import FrameExample
from mlsql._registry import Measure
from mlsql._weights import WEIGHTED_FAMILIES
from mlsql.polars import _build, families
from mlsql.polars._build import evaluate
from mlsql.polars._dtypes import Check, IntoExpr, bounds, common_type, guarded, kind, same_kind
from mlsql.polars._weights import weighted_check


class PolarsEngine:
    """Public functions return ``pl.Expr``; inputs are checked when Polars resolves the plan."""

    name = "polars"
    module = "mlsql.polars"
    into: Any = IntoExpr
    expr = pl.Expr
    frame_type = "Frame"
    families = families
    words: ClassVar[Mapping[str, str]] = {
        "expr": "polars.Expr",
        "table": "polars.Expr",
        "input_type": "str or polars.Expr",
        "name_or": "name or expression",
        "list_column": "a list column",
        "a_list": "A list",
        "frame": "polars.DataFrame or polars.LazyFrame",
        "frame_param": "frame",
        "weight_type": "str or polars.Expr",
        "result": "polars.DataFrame",
        "prefix": "mp",
        "lazy": "Lazy if ``source`` is.",
        "double": "Float64",
        "label_list": "label-list",
        "aggregate_scope": "``select``, ``group_by().agg`` group or\n"
        "    ``over()`` window; NULL over no known rows.",
    }
    notes: ClassVar[Sequence[str]] = ()

    def default_check(self, measure: Measure) -> Check:
        """Inputs of one label kind."""
        return same_kind

    def apply(
        self, measure: Measure, inputs: Sequence[Any], build: Callable[..., pl.Expr], check: Check
    ) -> pl.Expr:
        """``build`` inside the plan-time type guard (:func:`~mlsql.polars._dtypes.guarded`)."""
        return guarded(measure.name, measure.inputs, inputs, build, check)

    def weighted_check(self, check: Check) -> Check:
        """The inputs' ``check``, then ``sample_weight`` (:mod:`mlsql.polars._weights`)."""
        return weighted_check(check)

    def label_value_check(self, check: Check, values: Mapping[str, Any]) -> Check:
        """The inputs' ``check``, then each one-label parameter against the first input's type
        and a list of classes against the type both label inputs become (at plan time, as
        ``check``)."""

        def checked(func: str, names: Sequence[str], pairs: Any) -> list[pl.Expr]:
            out = check(func, names, pairs)
            dtype = pairs[0][1]
            for param, value in values.items():
                if param == "labels":  # a list of classes (cohen_kappa_score's labels)
                    both = [d for _, d in pairs[:2]]
                    integers = all(kind(d) in ("integer", "null") for d in both)
                    common = common_type(both) if integers else dtype
                    LT.check_universe_labels(value, kind(dtype), str(common), bounds(common), func)
                    continue
                limits = None if param == "costs" else bounds(dtype)  # costs: kinds only
                for label in LT.label_values(param, value):
                    LT.check_label_value(label, kind(dtype), str(dtype), param, func, limits)
            return out

        return checked

    def formula_build(self, measure: Measure, family: ModuleType) -> Callable[..., pl.Expr]:
        """The formula over ``family.stats``, masked by ``family.known`` where it has one."""
        known = getattr(family, "known", None)

        def weighted(
            *inputs: pl.Expr, sample_weight: pl.Expr | None = None, **params: Any
        ) -> pl.Expr:
            stats = family.stats(measure, *inputs)
            mask = known(measure, *inputs) if known is not None else None
            return evaluate(
                measure.build,  # type: ignore[arg-type]
                stats,
                known=mask,
                symbolic=False if measure.kind == "set" else None,  # lists, not numbers
                weight=sample_weight,
                **params,
            )

        def build(*inputs: pl.Expr, **params: Any) -> pl.Expr:
            return weighted(*inputs, **params)

        # sample_weight where the family's weights are tested (mlsql._weights.WEIGHTED_FAMILIES)
        return weighted if measure.family in WEIGHTED_FAMILIES else build

    def example(self, measure: Measure, family: ModuleType) -> Sequence[str]:
        """None here: :mod:`mlsql.polars` appends the examples with their written outputs."""
        return ()

    def frame_example(self, name: str, example: FrameExample) -> list[str]:
        """The statements of ``example`` (:func:`_build.frame_example`)."""
        return _build.frame_example(name, example)


POLARS = PolarsEngine()
