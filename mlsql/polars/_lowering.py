"""Formulas as a small expression graph, lowered to Polars with each statistic computed once.

Polars' streaming engine does not eliminate common subexpressions: a formula
that names ``tp`` three times would intersect every row's label lists three
times. The formulas therefore run over :class:`Node` objects (which overload
Python's operators like ``pl.Expr``), and :func:`lower` turns the finished
graph into one ``pl.Expr`` in which every statistic and every aggregation
appears once:

- a row-level expression that names a statistic more than once is evaluated in
  a struct *scope*: ``pl.struct(u0=tp, u1=n_actual).struct.with_fields(out=<formula
  over pl.field("u0"), ...>).struct.field("out")``;
- an aggregate formula puts each aggregation in such a scope, so ``sum(tp)``
  is computed once however often the formula names it;
- ``sum`` of a linear combination of statistics that are NULL on the same rows
  is split into sums of the statistics (``sum(|P| - tp) = sum(|P|) - sum(tp)``),
  so the micro average sums three statistics, each once;
- counting rows costs nothing extra when the statistics are NULL exactly where
  a cheap ``known`` mask is false (``actual`` or ``predicted`` NULL).

Only engine primitives live here; the formulas stay in :mod:`mlsql._formulas`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

import polars as pl

#: levels: a constant, a value per row, a value per group (after aggregation)
CONST, ROW, AGG = 0, 1, 2

#: Where a node is NULL, as (on unknown rows, on known rows), ``known`` being the
#: mask of rows where no input is NULL. On unknown rows a node is always "null",
#: never NULL ("value") or either ("mixed"); on known rows "value" or "mixed".
NEVER = ("value", "value")
STRICT = ("null", "value")  # NULL exactly where the row is unknown: a statistic
MAYBE = ("mixed", "mixed")
NULL = ("null", "mixed")  # the NULL literal

_BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "truediv": lambda a, b: a / b,
    "pow": lambda a, b: a.pow(b),
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
    "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b,
    "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b,
    "and": lambda a, b: a & b,
    "or": lambda a, b: a | b,
}
_UNARY = {
    "neg": lambda a: -a,
    "not": lambda a: ~a,
    "abs": lambda a: a.abs(),
    "is_nan": lambda a: a.cast(pl.Float64).is_nan(),
    "log2": lambda a: a.cast(pl.Float64).log(2),
    "sqrt": lambda a: a.cast(pl.Float64).sqrt(),
    "exp": lambda a: a.cast(pl.Float64).exp(),
    "floor": lambda a: a.cast(pl.Float64).floor(),
}
#: aggregations over a row-level argument, as Polars computes them
_AGGREGATIONS = {
    "raw_sum": lambda x: x.sum(),
    "raw_mean": lambda x: x.mean(),
    "raw_count": lambda x: x.count().cast(pl.Int64),
}


class Node:
    """One operation of a formula: a statistic, a constant, arithmetic or an aggregation.

    Examples
    --------
    >>> tp = leaf(pl.col("tp"))
    >>> node = (tp + 1) * 2
    >>> node.level == ROW
    True
    """

    __slots__ = ("args", "level", "nulls", "op")

    def __init__(self, op: str, args: tuple[Any, ...], level: int, nulls: tuple[str, str]) -> None:
        self.op = op
        self.args = args
        self.level = level
        self.nulls = nulls

    __hash__ = object.__hash__

    def __bool__(self) -> bool:
        raise TypeError("a formula value has no truth value until it is computed")

    def __repr__(self) -> str:
        if self.op == "leaf":
            return f"leaf({self.args[0]})"
        if self.op == "const":
            return repr(self.args[0])
        return f"{self.op}({', '.join(map(repr, self.args))})"

    # arithmetic and comparisons ------------------------------------------------
    def __add__(self, other: Any) -> Node:
        return binary("add", self, other)

    def __radd__(self, other: Any) -> Node:
        return binary("add", other, self)

    def __sub__(self, other: Any) -> Node:
        return binary("sub", self, other)

    def __rsub__(self, other: Any) -> Node:
        return binary("sub", other, self)

    def __mul__(self, other: Any) -> Node:
        return binary("mul", self, other)

    def __rmul__(self, other: Any) -> Node:
        return binary("mul", other, self)

    def __truediv__(self, other: Any) -> Node:
        return binary("truediv", self, other)

    def __rtruediv__(self, other: Any) -> Node:
        return binary("truediv", other, self)

    def __pow__(self, other: Any) -> Node:
        return binary("pow", self, other)

    def __rpow__(self, other: Any) -> Node:
        return binary("pow", other, self)

    def __eq__(self, other: Any) -> Node:  # type: ignore[override]
        return binary("eq", self, other)

    def __ne__(self, other: Any) -> Node:  # type: ignore[override]
        return binary("ne", self, other)

    def __lt__(self, other: Any) -> Node:
        return binary("lt", self, other)

    def __le__(self, other: Any) -> Node:
        return binary("le", self, other)

    def __gt__(self, other: Any) -> Node:
        return binary("gt", self, other)

    def __ge__(self, other: Any) -> Node:
        return binary("ge", self, other)

    def __and__(self, other: Any) -> Node:
        return binary("and", self, other)

    def __rand__(self, other: Any) -> Node:
        return binary("and", other, self)

    def __or__(self, other: Any) -> Node:
        return binary("or", self, other)

    def __ror__(self, other: Any) -> Node:
        return binary("or", other, self)

    def __neg__(self) -> Node:
        return unary("neg", self)

    def __invert__(self) -> Node:
        return unary("not", self)

    def __abs__(self) -> Node:
        return unary("abs", self)


# ---------------------------------------------------------------- constructors
def const(value: Any) -> Node:
    """A literal (``None`` is NULL)."""
    return Node("const", (value,), CONST, NULL if value is None else NEVER)


def as_node(value: Any) -> Node:
    """``value`` as a node: nodes stay, Python values become constants."""
    if isinstance(value, Node):
        return value
    if isinstance(value, pl.Expr):
        raise TypeError(
            "a pl.Expr met a formula node: hand statistics to mlsql.polars._build, "
            "which turns them into nodes"
        )
    return const(value)


#: the attribute marking a statistic as one field of a struct that computes several at once
_SHARED = "_mlsql_shared_field"


def share(expr: pl.Expr, source: pl.Expr, field: str) -> pl.Expr:
    """Mark ``expr`` as equal to ``source.struct.field(field)``; return ``expr``.

    A row-level formula that needs several statistics of one ``source`` reads
    them from one evaluation of ``source`` (a native plugin computes tp, |A|
    and |P| in one pass); one statistic alone stays ``expr`` (which may be
    cheaper than the whole struct). ``source`` must be NULL nowhere itself
    (like ``pl.struct``), only its fields.
    """
    setattr(expr, _SHARED, (source, field))
    return expr


def shared(expr: pl.Expr) -> tuple[pl.Expr, str] | None:
    """The (struct, field) ``expr`` was marked with by :func:`share`, or None."""
    return getattr(expr, _SHARED, None)


@dataclass(frozen=True)
class PackedFields:
    """A per-row ``Int128`` holding several fields of a shared struct, and when its sum is exact.

    ``expr`` is ``fields[0] + fields[1] * 2**bits + fields[2] * 2**(2 * bits)``
    for each row (one evaluation computes them all, as a native plugin does);
    its sum unpacks exactly while every field's sum stays below ``2**bits``,
    which holds where the sum of ``bound`` (per row, at least each field) does.
    Past that the query fails (Polars' ``InvalidOperationError`` of a strict
    cast, as a packed sum past the Int64 range does), never with a wrong number.
    """

    expr: pl.Expr
    fields: tuple[str, ...]
    bits: int
    bound: pl.Expr


#: the attribute giving a shared struct its :class:`PackedFields`
_PACKED = "_mlsql_packed_fields"


def offer_packed(source: pl.Expr, packed: PackedFields) -> None:
    """Let sums of fields of ``source`` come from one sum of ``packed`` (see :func:`share`)."""
    setattr(source, _PACKED, packed)


def packed_fields(source: pl.Expr) -> PackedFields | None:
    """The :class:`PackedFields` offered for ``source``, or None."""
    return getattr(source, _PACKED, None)


def leaf(expr: pl.Expr, *, strict: bool = False) -> Node:
    """A per-row statistic; ``strict``: NULL exactly where the ``known`` mask is false."""
    return Node("leaf", (expr,), ROW, STRICT if strict else MAYBE)


def _level(*nodes: Node) -> int:
    return max(n.level for n in nodes)


def _same(*sides: str) -> str:
    return sides[0] if len(set(sides)) == 1 else "mixed"


def _arithmetic(*nodes: Node) -> tuple[str, str]:
    """NULLs of an arithmetic result: NULL where any operand is NULL."""
    unknown = [n.nulls[0] for n in nodes]
    on_unknown = "null" if "null" in unknown else _same(*unknown)
    on_known = "value" if all(n.nulls[1] == "value" for n in nodes) else "mixed"
    return on_unknown, on_known


def binary(op: str, a: Any, b: Any) -> Node:
    """``a <op> b``."""
    a, b = as_node(a), as_node(b)
    if op in ("and", "or"):  # Kleene logic: NULL & false is false, NULL | true is true
        on_known = "value" if a.nulls[1] == b.nulls[1] == "value" else "mixed"
        nulls = (_same(a.nulls[0], b.nulls[0]), on_known)
    else:
        nulls = _arithmetic(a, b)
    return Node(op, (a, b), _level(a, b), nulls)


def unary(op: str, a: Any) -> Node:
    """``op(a)``."""
    a = as_node(a)
    return Node(op, (a,), a.level, a.nulls)


def when(condition: Any, then: Any, otherwise: Any) -> Node:
    """``then`` where ``condition`` is true, else ``otherwise`` (also where it is NULL)."""
    c, t, o = as_node(condition), as_node(then), as_node(otherwise)
    # where the condition is NULL (unknown rows, if it is a statistic) ``otherwise`` is taken
    on_unknown = o.nulls[0] if c.nulls[0] == "null" else _same(t.nulls[0], o.nulls[0])
    on_known = "value" if t.nulls[1] == o.nulls[1] == "value" else "mixed"
    return Node("when", (c, t, o), _level(c, t, o), (on_unknown, on_known))


def let(values: tuple[Any, ...], body: Any) -> Node:
    """``body(*vs)`` with ``vs`` the values of ``values``, each computed once however often
    ``body`` names it (``body`` takes and returns ``pl.Expr``): a formula that names a large
    subexpression many times (a polynomial in it) would otherwise repeat it as often."""
    vs = tuple(as_node(v) for v in values)
    return Node("let", (*vs, const(body)), _level(*vs), MAYBE)


def error_if(condition: Any, value: Any, message: str) -> Node:
    """``value``; the query fails with ``message`` where ``condition`` is true."""
    c, v = as_node(condition), as_node(value)
    return Node("error_if", (c, v, const(message)), _level(c, v), v.nulls)


def raise_where(condition: pl.Expr, message: str) -> pl.Expr:
    """``condition``, after raising :class:`~mlsql.MlsqlError` (``message``) if any row is true."""
    from mlsql._errors import MlsqlError

    def check(batch: pl.Series) -> pl.Series:
        if batch.any():
            raise MlsqlError(message)
        return batch

    return condition.map_batches(check, return_dtype=pl.Boolean, is_elementwise=True)


def aggregation(op: str, x: Node) -> Node:
    """One Polars aggregation of a per-row node."""
    return Node(op, (x,), AGG, MAYBE)


def known_count() -> Node:
    """Rows where the ``known`` mask is true."""
    return Node("known_count", (), AGG, NEVER)


def row_count() -> Node:
    """Rows, NULL or not."""
    return Node("row_count", (), AGG, NEVER)


# ---------------------------------------------------------------- aggregates
def linear(node: Node) -> dict[Node, float] | None:
    """``node`` as a sum of coefficient x leaf, or None if it is not one."""
    if node.op == "leaf":
        return {node: 1}
    if node.op in ("add", "sub"):
        left, right = linear(node.args[0]), linear(node.args[1])
        if left is None or right is None:
            return None
        sign = 1 if node.op == "add" else -1
        out = dict(left)
        for k, v in right.items():
            out[k] = out.get(k, 0) + sign * v
        return out
    if node.op == "neg":
        inner = linear(node.args[0])
        return None if inner is None else {k: -v for k, v in inner.items()}
    if node.op == "mul":
        a, b = node.args
        for scalar, other in ((a, b), (b, a)):
            value = scalar.args[0] if scalar.op == "const" else None
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                inner = linear(other)
                return None if inner is None else {k: value * v for k, v in inner.items()}
    return None


def count(x: Any) -> Node:
    """Non-NULL values of ``x`` (cheap when the NULLs of ``x`` are known in advance)."""
    x = as_node(x)
    if x.level == CONST:
        return row_count() if x.nulls == NEVER else const(0)
    if x.nulls == NEVER:
        return row_count()
    if x.nulls == STRICT:
        return known_count()
    return aggregation("raw_count", x)


def total(x: Any) -> Node:
    """SQL ``sum``: NULL over no non-NULL values; linear sums are split per statistic."""
    x = as_node(x)
    terms = linear(x) if x.nulls == STRICT else None
    if terms and all(stat.nulls == STRICT for stat in terms):
        out: Node | None = None
        for stat, coefficient in terms.items():
            if coefficient == 0:
                continue
            part = when(known_count() == 0, None, aggregation("raw_sum", stat))
            if coefficient not in (1, -1):
                part = coefficient * part
            if out is None:
                out = part if coefficient != -1 else -part
            else:
                out = out + part if coefficient != -1 else out - part
        if out is not None:
            return out
    return when(count(x) == 0, None, aggregation("raw_sum", x))


def mean(x: Any) -> Node:
    """SQL ``avg``: NULL over no non-NULL values."""
    return aggregation("raw_mean", as_node(x))


# ---------------------------------------------------------------- lowering
def _is_unit(node: Node) -> bool:
    return node.op == "leaf" or node.op in _AGGREGATIONS or node.op in ("known_count", "row_count")


def _key(node: Node) -> Any:
    """Units that compute the same thing share a key (the same aggregation of one node)."""
    if node.op in _AGGREGATIONS:
        return (node.op, id(node.args[0]))
    if node.op in ("known_count", "row_count"):
        return node.op
    return node


def _units(node: Node, memo: dict[int, Counter[Any]], first: dict[Any, Node]) -> Counter[Any]:
    """How often each unit (statistic or aggregation) is named, counting every path."""
    if id(node) in memo:
        return memo[id(node)]
    out: Counter[Any] = Counter()
    if _is_unit(node):
        key = _key(node)
        first.setdefault(key, node)
        out[key] += 1
    else:
        for arg in node.args:
            if isinstance(arg, Node):
                out.update(_units(arg, memo, first))
    memo[id(node)] = out
    return out


class Lowering:
    """Turns nodes into Polars expressions; ``known`` marks rows where no input is NULL."""

    def __init__(self, known: pl.Expr | None = None) -> None:
        self.known = known

    def expr(self, node: Any) -> pl.Expr:
        """One expression for ``node``, each statistic and aggregation computed once.

        Units named once are inlined; otherwise all units of this level become
        fields of one struct, which the formula reads with ``pl.field`` (per row,
        in ``struct.with_fields``) or as the one element of a list (after
        aggregation, in ``list.eval``).
        """
        node = as_node(node)
        first: dict[Any, Node] = {}
        uses = _units(node, {}, first)
        if node.level == AGG:
            packed = _shared_sums(uses, first)
            if packed is not None:
                return self._packed(node, uses, first, *packed)
        source, fields = _shared_source(uses, first) if node.level == ROW else (None, {})
        if all(n == 1 for n in uses.values()) and source is None:
            return self.tree(node, {key: self.unit(first[key]) for key in uses})
        names = {key: fields.get(key, f"u{i}") for i, key in enumerate(uses)}
        others = {names[key]: self.unit(first[key]) for key in uses if key not in fields}
        if source is None:
            scope = pl.struct(**others)
        else:  # statistics computed together: their struct is the scope
            scope = source.struct.with_fields(**others) if others else source
        if node.level == ROW:
            body = self.tree(node, {key: pl.field(names[key]) for key in uses})
            return scope.struct.with_fields(__mlsql=body).struct.field("__mlsql")
        # After aggregation, struct.with_fields makes the streaming engine fall back to the
        # in-memory one in group_by and over(); a one-element list evaluated with
        # list.eval streams everywhere (and keeps each unit's type).
        body = self.tree(node, {key: pl.element().struct.field(names[key]) for key in uses})
        return pl.concat_list(scope).list.eval(body).list.first()

    def _packed(
        self,
        node: Node,
        uses: Counter[Any],
        first: dict[Any, Node],
        source: pl.Expr,
        fields: dict[Any, str],
        checks: list[Node],
    ) -> pl.Expr:
        """``node`` with the sums of several fields of ``source`` taken from one packed sum.

        Each row's fields (at most :data:`PACK_FIELDS`) go into one ``Int128``
        (:data:`PACK_BITS` bits each), summed once, so ``source`` is evaluated
        once for them; the body unpacks the sums (exact over the Int64 range; a
        sum beyond it fails the strict cast to Int64 rather than wrapping).
        The ``checks`` (:func:`error_if` nodes over fields of ``source``) are
        made on each row of that same pass.
        """
        offered = _usable_packing(source, fields, checks)
        if offered is not None:  # the fields of each row come packed: one sum, checked once
            order, bits = list(offered.fields), offered.bits
            # the bound's sum times 2**(63 - bits) fits Int64 exactly while the sum is below
            # 2**bits: past it the strict cast fails the query (no Python call in the plan)
            scaled = offered.bound.sum().cast(pl.Int128) * pl.lit(1 << (63 - bits), pl.Int128)
            packed = pl.when(scaled.cast(pl.Int64) >= 0).then(offered.expr.sum())
        else:
            order, bits = list(dict.fromkeys(fields.values())), PACK_BITS
            row = pl.field(order[0]).cast(pl.Int128)
            for i, f in enumerate(order[1:], start=1):
                row = row + pl.field(f).cast(pl.Int128) * pl.lit(1 << (bits * i), pl.Int128)
            for check in dict.fromkeys(checks):
                condition, message = check.args[0], check.args[2].args[0]
                leaves = _leaves(condition) or []
                env_row = {leaf: pl.field(shared(leaf.args[0])[1]) for leaf in leaves}  # type: ignore[index]
                flagged = raise_where(self.tree(condition, env_row), message)
                row = pl.when(flagged).then(None).otherwise(row)
            packed = source.struct.with_fields(__mlsql=row).struct.field("__mlsql").sum()
        names = {key: f"u{i}" for i, key in enumerate(uses) if key not in fields}
        scope = pl.struct(**{names[k]: self.unit(first[k]) for k in names}, __mlsql_sums=packed)
        total = pl.element().struct.field("__mlsql_sums")
        env = {key: pl.element().struct.field(name) for key, name in names.items()}
        for key, field in fields.items():
            shift = pl.lit(1 << (bits * order.index(field)), pl.Int128)
            value = total // shift
            if field != order[-1]:  # the top field is whatever is left: no modulo to wrap it
                value = value % pl.lit(1 << bits, pl.Int128)
            env[key] = value.cast(pl.Int64)  # strict: a sum beyond Int64 fails, never wraps
        return pl.concat_list(scope).list.eval(self.tree(node, env)).list.first()

    def struct(self, nodes: dict[str, Any]) -> pl.Expr:
        """A struct of the named nodes, computed in one scope (e.g. a counts struct)."""
        return self.expr(_Pack({name: as_node(n) for name, n in nodes.items()}))

    def unit(self, node: Node) -> pl.Expr:
        """The Polars expression of one unit."""
        if node.op == "leaf":
            return node.args[0]
        if node.op == "known_count":
            if self.known is None:
                raise TypeError("a count of known rows needs the known mask")
            return self.known.sum().cast(pl.Int64)
        if node.op == "row_count":
            return pl.len().cast(pl.Int64)
        return _AGGREGATIONS[node.op](self.expr(node.args[0]))

    def tree(self, node: Node, env: dict[Any, pl.Expr]) -> pl.Expr:
        """``node`` with its units taken from ``env`` (keyed by :func:`_key`)."""
        if _is_unit(node):
            return env[_key(node)]
        if isinstance(node, _Pack):
            return pl.struct(**{k: self.tree(n, env) for k, n in node.fields.items()})
        op, args = node.op, node.args
        if op == "const":
            return _literal(args[0])
        if op in _BINARY:
            return _BINARY[op](self.tree(args[0], env), self.tree(args[1], env))
        if op in _UNARY:
            return _UNARY[op](self.tree(args[0], env))
        if op == "when":
            c, t, o = (self.tree(a, env) for a in args)
            return pl.when(c).then(t).otherwise(o)
        if op == "let":
            values = {f"v{i}": self.tree(a, env) for i, a in enumerate(args[:-1])}
            body = args[-1].args[0]
            if node.level == AGG:  # as in expr: a one-element list streams after aggregation
                fields = [pl.element().struct.field(name) for name in values]
                return pl.concat_list(pl.struct(**values)).list.eval(body(*fields)).list.first()
            inner = body(*(pl.field(name) for name in values)).alias("__mlsql_in")
            return pl.struct(**values).struct.with_fields(inner).struct.field("__mlsql_in")
        if op == "error_if":
            c, v = (self.tree(a, env) for a in args[:2])
            return pl.when(raise_where(c, args[2].args[0])).then(None).otherwise(v)
        raise AssertionError(f"unknown node {op}")


def _shared_source(uses: Counter[Any], first: dict[Any, Node]) -> tuple[Any, dict[Any, str]]:
    """The struct that computes most of these row statistics at once (two or more), if any.

    Returns the struct (or None) and, for each unit taken from it, its field name.
    """
    groups: dict[int, tuple[pl.Expr, dict[Any, str]]] = {}
    for key in uses:
        node = first[key]
        mark = shared(node.args[0]) if node.op == "leaf" else None
        if mark is not None:
            source, field = mark
            groups.setdefault(id(source), (source, {}))[1][key] = field
    best = max(groups.values(), key=lambda g: len(g[1]), default=None)
    if best is None or len(best[1]) < 2:
        return None, {}
    return best


#: bits per field when sums of several fields of one struct are packed into one Int128:
#: two fields of 63 bits, so each sum is exact over the whole Int64 range (a sum beyond it
#: fails the unpacking cast, as an Int64 sum would overflow). Three fields of 42 bits would
#: carry silently from one field into the next past 2**42 (4.4e12 labels in one group).
PACK_BITS = 63
#: fields one packed sum holds (a third field is summed on its own)
PACK_FIELDS = 127 // PACK_BITS


def _checked_leaf(node: Node) -> tuple[Node, list[Node]]:
    """``node`` without its :func:`error_if` wrappers (which keep its value), and their checks."""
    checks: list[Node] = []
    while node.op == "error_if":
        checks.append(node)
        node = node.args[1]
    return node, checks


def _leaves(node: Node) -> list[Node] | None:
    """The statistics a row-level ``node`` reads, or None if it reads an aggregation."""
    if node.op == "leaf":
        return [node]
    if node.level == AGG:
        return None
    out: list[Node] = []
    for arg in node.args:
        if isinstance(arg, Node):
            inner = _leaves(arg)
            if inner is None:
                return None
            out.extend(inner)
    return out


def _shared_sums(
    uses: Counter[Any], first: dict[Any, Node]
) -> tuple[Any, dict[Any, str], list[Node]] | None:
    """Sums of two or more fields of one shared struct, if any.

    Returns (struct, {unit: field}, checks): a sum of a field inside
    :func:`error_if` counts as a sum of the field when its condition reads only
    fields of the same struct; the checks are then made in the same pass.
    """
    if not hasattr(pl, "Int128"):  # older Polars: one sum per field
        return None
    groups: dict[int, tuple[pl.Expr, dict[Any, str], dict[Any, list[Node]]]] = {}
    for key in uses:
        node = first[key]
        if node.op != "raw_sum":
            continue
        stat, checks = _checked_leaf(node.args[0])
        mark = shared(stat.args[0]) if stat.op == "leaf" else None
        if mark is None:
            continue
        source, field = mark
        conditions = [_leaves(check.args[0]) for check in checks]
        if any(
            leaves is None or any(_source_id(leaf) != id(source) for leaf in leaves)
            for leaves in conditions
        ):
            continue
        group = groups.setdefault(id(source), (source, {}, {}))
        group[1][key] = field
        group[2][key] = checks
    best = max(groups.values(), key=lambda g: len(g[1]), default=None)
    if best is None:
        return None
    source, fields, checks = best
    all_checks = [check for key in fields for check in checks[key]]
    if _usable_packing(source, fields, all_checks) is None:
        packed = list(dict.fromkeys(fields.values()))[:PACK_FIELDS]
        fields = {key: field for key, field in fields.items() if field in packed}
    if len(fields) < 2:
        return None
    return source, fields, [check for key in fields for check in checks[key]]


def _usable_packing(
    source: pl.Expr, fields: dict[Any, str], checks: list[Node]
) -> PackedFields | None:
    """The packing offered for ``source`` if it holds these fields and no row check needs them.

    Row checks read the fields one by one, which a packed row does not offer.
    """
    offered = packed_fields(source)
    if offered is None or checks or not set(fields.values()) <= set(offered.fields):
        return None
    return offered


def _source_id(leaf: Node) -> int | None:
    mark = shared(leaf.args[0])
    return None if mark is None else id(mark[0])


class _Pack(Node):
    """Several named outputs lowered in one scope (a struct)."""

    __slots__ = ("fields",)

    def __init__(self, fields: dict[str, Node]) -> None:
        super().__init__("pack", tuple(fields.values()), _level(*fields.values()), MAYBE)
        self.fields = fields


def _literal(value: Any) -> pl.Expr:
    if value is None:
        return pl.lit(None)
    if isinstance(value, bool):
        return pl.lit(value)
    if isinstance(value, int):
        return pl.lit(value, dtype=pl.Int64)
    if isinstance(value, float):
        return pl.lit(value, dtype=pl.Float64)
    return pl.lit(value)
