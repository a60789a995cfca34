"""SQL expressions as Python objects, so one formula serves SQL, Polars and Spark.

Polars expressions and Spark Columns overload Python's arithmetic already;
:class:`Sql` does the same for SQL text, so the formulas in
:mod:`mlsql._formulas` build readable DuckDB SQL when handed :class:`Sql`
operands. Every binary operation is parenthesised: the output is meant to be
read, but never to be wrong about precedence.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any, ClassVar

from sqlglot import exp

from mlsql import _sqldialects as D
from mlsql._sqltext import quote_ident

__all__ = ["Sql", "call", "expand_calls", "lit", "operand", "qualify_calls", "quote_ident", "when"]


class Sql:
    """A SQL expression: a sqlglot tree, written in the class's dialect
    (:mod:`mlsql._sqldialects`; DuckDB's here).

    Text given as SQL is a leaf (:class:`~mlsql._sqldialects.Raw`) written as it
    is; a Python operand is a value the dialect writes. So one formula over
    these operands is one tree, whatever dialect writes it.

    Examples
    --------
    >>> tp, fp = Sql("tp"), Sql("fp")
    >>> str(tp / (tp + fp))
    '(tp / (tp + fp))'
    >>> str((tp == 0) & ~(fp > 1))
    '((tp = 0) AND (NOT (fp > 1)))'
    """

    __slots__ = ("_text", "node")
    #: the dialect its text is written in
    dialect: ClassVar[D.Dialect] = D.DUCKDB

    def __init__(self, text: str | exp.Expression) -> None:
        if isinstance(text, str):
            self.node: exp.Expression = D.Raw(this=text)
            self._text: str | None = text
        else:
            self.node, self._text = text, None

    @property
    def text(self) -> str:
        """The expression as SQL text of its dialect."""
        if self._text is None:
            self._text = self.dialect.write(self.node)
        return self._text

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.text!r})"

    def __hash__(self) -> int:
        return hash(self.text)

    def _literal(self, value: Any) -> exp.Expression:
        """``value``'s tree as an operand of this expression (:func:`operand`)."""
        return operand(value, self.dialect)

    def _op(self, op: type[exp.Binary], other: Any, *, reverse: bool = False) -> Sql:
        value = self._literal(other)
        left, right = (value, self.node) if reverse else (self.node, value)
        return type(self)(exp.Paren(this=op(this=left, expression=right)))

    def __add__(self, other: Any) -> Sql:
        return self._op(exp.Add, other)

    def __radd__(self, other: Any) -> Sql:
        return self._op(exp.Add, other, reverse=True)

    def __sub__(self, other: Any) -> Sql:
        return self._op(exp.Sub, other)

    def __rsub__(self, other: Any) -> Sql:
        return self._op(exp.Sub, other, reverse=True)

    def __mul__(self, other: Any) -> Sql:
        return self._op(exp.Mul, other)

    def __rmul__(self, other: Any) -> Sql:
        return self._op(exp.Mul, other, reverse=True)

    def __truediv__(self, other: Any) -> Sql:
        return self._op(exp.Div, other)

    def __rtruediv__(self, other: Any) -> Sql:
        return self._op(exp.Div, other, reverse=True)

    def __pow__(self, other: Any) -> Sql:
        return type(self)(exp.Pow(this=self.node, expression=self._literal(other)))

    def __neg__(self) -> Sql:
        return type(self)(exp.Paren(this=exp.Neg(this=self.node)))

    def __eq__(self, other: Any) -> Sql:  # type: ignore[override]
        return self._op(exp.EQ, other)

    def __ne__(self, other: Any) -> Sql:  # type: ignore[override]
        return self._op(exp.NEQ, other)

    def __lt__(self, other: Any) -> Sql:
        return self._op(exp.LT, other)

    def __le__(self, other: Any) -> Sql:
        return self._op(exp.LTE, other)

    def __gt__(self, other: Any) -> Sql:
        return self._op(exp.GT, other)

    def __ge__(self, other: Any) -> Sql:
        return self._op(exp.GTE, other)

    def __and__(self, other: Any) -> Sql:
        return self._op(exp.And, other)

    def __rand__(self, other: Any) -> Sql:
        return self._op(exp.And, other, reverse=True)

    def __or__(self, other: Any) -> Sql:
        return self._op(exp.Or, other)

    def __ror__(self, other: Any) -> Sql:
        return self._op(exp.Or, other, reverse=True)

    def __invert__(self) -> Sql:
        return type(self)(exp.Paren(this=exp.Not(this=self.node)))


def operand(value: Any, dialect: D.Dialect) -> exp.Expression:
    """``value`` as a node of a tree ``dialect`` writes: an expression's tree (its text, if
    another dialect writes it), or a Python value as a :class:`~mlsql._sqldialects.Value`."""
    if isinstance(value, Sql):
        # a tree already written (or another dialect's) is its text: writing it again inside
        # every tree that holds it would cost as much as the tree's depth
        if value.dialect is dialect and value._text is None:
            return value.node
        return D.Raw(this=value.text)
    return D.Value(this=_checked(value))


def _checked(value: Any) -> Any:
    """``value`` if a dialect can write it as a literal (None, bool, int, float, str)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise TypeError(f"cannot write {type(value).__name__} as a SQL literal")


def lit(value: Any) -> Sql:
    """Return ``value`` as a SQL literal (or itself if it is already SQL).

    Examples
    --------
    >>> str(lit(2)), str(lit(0.5)), str(lit("it's")), str(lit(float("nan")))
    ('2', '0.5', "'it''s'", "'nan'::DOUBLE")
    """
    return value if isinstance(value, Sql) else Sql(operand(value, D.DUCKDB))


def call(name: str, *args: Any) -> Sql:
    """Return the SQL call ``name(args...)``.

    Examples
    --------
    >>> str(call("sum", Sql("x")))
    'sum(x)'
    """
    return Sql(exp.Anonymous(this=name, expressions=[operand(a, Sql.dialect) for a in args]))


def when(condition: Any, then: Any, otherwise: Any) -> Sql:
    """Return ``CASE WHEN condition THEN then ELSE otherwise END``."""
    node = exp.Case(ifs=[exp.If(this=operand(condition, D.DUCKDB), true=operand(then, D.DUCKDB))])
    node.set("default", operand(otherwise, D.DUCKDB))
    return Sql(node)


#: the lexical pieces of SQL text: what cannot hold a call (whitespace, comments,
#: strings, quoted names), then words, the cast operator and any other character
_TOKEN = re.compile(
    r"""(?P<skip>\s+|--[^\n]*|/\*.*?\*/|'(?:[^']|'')*'|"(?:[^"]|"")*")"""
    r"|(?P<word>[A-Za-z_][A-Za-z0-9_$]*)|(?P<other>::|.)",
    re.S,
)
#: a word just before a name that makes ``name(`` no call: a type (``AS MAP(...)``,
#: ``::DECIMAL(...)``) or a qualified or chained name (``s.f(...)``)
_NOT_A_CALL_AFTER = frozenset({"as", "::", "."})


def _call_positions(tokens: list[tuple[str | None, str]], names: Collection[str]) -> list[int]:
    """The indices in ``tokens`` of the names of calls of a function in ``names`` (see
    :func:`qualify_calls` for what counts as a call)."""
    significant = [i for i, (kind, _) in enumerate(tokens) if kind != "skip"]
    out = []
    for j, i in enumerate(significant):
        kind, value = tokens[i]
        if kind != "word" or value.lower() not in names:
            continue
        after = [tokens[k][1] for k in significant[j + 1 : j + 3]]
        if not after or after[0] != "(":
            continue
        if j > 0 and tokens[significant[j - 1]][1].lower() in _NOT_A_CALL_AFTER:
            continue
        if value.lower() == "filter" and after[1:] and after[1].lower() == "where":
            continue
        if value.lower() == "replace" and j > 0 and tokens[significant[j - 1]][1] in ("*", ")"):
            continue
        out.append(i)
    return out


def _tokens(text: str) -> list[tuple[str | None, str]]:
    return [(m.lastgroup, m.group()) for m in _TOKEN.finditer(text)]


def qualify_calls(text: str, names: Collection[str], qualifier: str) -> str:
    """Write every call of a function in ``names`` in ``text`` as ``qualifier.name(...)``.

    A call is a bare name (not in a string, a comment or quotes, not already
    qualified, not a type after ``AS`` or ``::``) followed by ``(``, but for
    an aggregate's ``FILTER (WHERE ...)`` and a star's ``* REPLACE (...)``
    (``COLUMNS(*) REPLACE (...)``). ``names`` are lower-case; the
    match is case-insensitive, the name's spelling kept.

    Examples
    --------
    >>> qualify_calls("len(x) + s.len(y) -- len(z)", {"len"}, "system.main")
    'system.main.len(x) + s.len(y) -- len(z)'
    >>> qualify_calls("sum(x) FILTER (WHERE 'len(' = x::MAP(a, b))", {"sum", "filter", "map"}, "q")
    "q.sum(x) FILTER (WHERE 'len(' = x::MAP(a, b))"
    """
    tokens = _tokens(text)
    out = [value for _, value in tokens]
    for i in _call_positions(tokens, names):
        out[i] = f"{qualifier}.{out[i]}"
    return "".join(out)


_OPEN, _CLOSE = "([{", ")]}"


def expand_calls(text: str, templates: Mapping[str, str]) -> str:
    """Write every call ``name(a, b, ...)`` in ``text`` of a name in ``templates`` as
    ``templates[name].format(a, b, ...)`` (arguments expanded first).

    Calls are found as by :func:`qualify_calls`; the arguments are the text
    between the call's parentheses split at its own commas (not those inside
    brackets, strings or comments). A call with another number of arguments
    than its template uses is an error.

    Examples
    --------
    >>> expand_calls("1 + list_sum([a, list_sum(b)])", {"list_sum": "list_aggr({0}, 'sum')"})
    "1 + list_aggr([a, list_aggr(b, 'sum')], 'sum')"
    >>> expand_calls("f('list_sum(', x)", {"list_sum": "{0}"})
    "f('list_sum(', x)"
    """
    lower = text.lower()
    if not any(name in lower for name in templates):
        return text
    tokens = _tokens(text)
    out: list[str] = []
    done = 0  # tokens[:done] are in out
    for start in _call_positions(tokens, templates):
        if start < done:  # inside the arguments of a call expanded already
            continue
        out += (value for _, value in tokens[done:start])
        args, done = _arguments(tokens, start, text)
        template = templates[tokens[start][1].lower()]
        if len(args) != len({int(n) for n in re.findall(r"\{(\d+)\}", template)}):
            raise ValueError(
                f"{tokens[start][1]}: another number of arguments than in {template!r}"
            )
        out.append(template.format(*(expand_calls(a.strip(), templates) for a in args)))
    out += (value for _, value in tokens[done:])
    return "".join(out)


def _arguments(
    tokens: list[tuple[str | None, str]], start: int, text: str
) -> tuple[list[str], int]:
    """The argument texts of the call whose name is ``tokens[start]``, and the index of the
    token after its closing parenthesis."""
    opening = next(k for k in range(start + 1, len(tokens)) if tokens[k][1] == "(")
    depth, args, current = 0, [], []  # type: tuple[int, list[str], list[str]]
    for k in range(opening, len(tokens)):
        kind, value = tokens[k]
        if kind == "other" and value in _OPEN:
            depth += 1
            if depth == 1:
                continue
        elif kind == "other" and value in _CLOSE:
            depth -= 1
            if depth == 0:
                args.append("".join(current))
                return args, k + 1
        if depth == 1 and kind == "other" and value == ",":
            args.append("".join(current))
            current = []
        else:
            current.append(value)
    raise ValueError(f"unbalanced parentheses in a call of {tokens[start][1]}: {text!r}")
