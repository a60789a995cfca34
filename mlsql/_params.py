"""Parameter validation shared by every engine: one message shape everywhere.

Messages follow scikit-learn's shape: "The 'beta' parameter of fbeta must be
a finite number > 0. Got -1 instead." The SQL generator embeds the same texts
in the macros' ``error()`` calls, so DuckDB users read the same words.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mlsql._errors import MlsqlError
from mlsql._registry import Param

HIVEMALL_AVERAGES = ("micro", "binary")

#: what a sample weight must be (every engine reads each row's weight through one check)
WEIGHT_RULE = "a finite number >= 0 (a NULL weight skips the row)"


def beta_message(func: str, got: str) -> str:
    """Return the error text for an invalid ``beta`` (``got`` as :func:`shown` shows it)."""
    return message(BETA, func, got)


def check_beta(beta: Any, func: str) -> float:
    """Validate ``beta`` and return it as a float.

    Examples
    --------
    >>> check_beta(2, "micro_fbeta")
    2.0
    """
    return check(BETA, beta, func)


@dataclass(frozen=True)
class ZeroDivision:
    """A validated ``zero_division`` convention.

    ``kind`` is one of ``"value"`` (0 or 1), ``"nan"``, ``"diagnose"`` or
    ``"ignore"``; ``value`` holds 0.0 or 1.0 for ``"value"``.
    """

    kind: str
    value: float = 0.0

    @property
    def skips_undefined(self) -> bool:
        """Whether averages leave undefined ratios out (NaN and 'ignore')."""
        return self.kind in ("nan", "ignore")

    def undefined(
        self,
        when: Callable[[Any, Any, Any], Any],
        nothing_to_score: Any,
        *,
        constant: Callable[[float], Any] = lambda v: v,
        nan: Callable[[], Any] | None = None,
        null: Any = None,
    ) -> Any:
        """The value of an undefined ratio under this convention, for an engine that knows it
        when the expression is built (every ``undefined`` of the engines' ops, written once):
        ``constant`` of 0 or 1, NaN (``nan()`` where given, else ``constant`` of it), ``null``
        for 'ignore', and for 'diagnose' ``when(nothing_to_score, 1.0, 0.0)``.

        Examples
        --------
        >>> ZeroDivision("ignore").undefined(None, None, null="NULL")
        'NULL'
        >>> ZeroDivision("value", 1.0).undefined(None, None)
        1.0
        >>> ZeroDivision("diagnose").undefined(lambda c, a, b: a if c else b, True)
        1.0
        """
        if self.kind == "value":
            return constant(self.value)
        if self.kind == "nan":
            return constant(float("nan")) if nan is None else nan()
        if self.kind == "ignore":
            return null
        return when(nothing_to_score, 1.0, 0.0)  # 'diagnose'

    @classmethod
    def of(cls, checked: Any) -> ZeroDivision:
        """The convention of a checked option: 0, 1, 'nan', 'diagnose' or 'ignore'."""
        if checked in (0, 1):
            return cls("value", float(checked))
        return cls(checked)


def check_zero_division(zero_division: Any, func: str) -> ZeroDivision:
    """Validate ``zero_division`` (0, 1, NaN, 'diagnose', 'ignore').

    Examples
    --------
    >>> check_zero_division("diagnose", "samples_f1").kind
    'diagnose'
    >>> check_zero_division(float("nan"), "samples_f1").kind
    'nan'
    """
    return check(ZERO_DIVISION, zero_division, func)


#: how the check names a bad weight in :func:`sample_weight_message` (the same words in
#: every engine)
SAMPLE_WEIGHT_GOT = ("NaN", "inf", "-inf", "a negative number")


def sample_weight_got(x: float) -> str:
    """The word of SAMPLE_WEIGHT_GOT naming bad weight ``x`` (NaN, infinite or negative).

    Examples
    --------
    >>> sample_weight_got(float("-inf")), sample_weight_got(-0.5)
    ('-inf', 'a negative number')
    """
    if x != x:
        return SAMPLE_WEIGHT_GOT[0]
    if x in (float("inf"), float("-inf")):
        return SAMPLE_WEIGHT_GOT[1 if x > 0 else 2]
    return SAMPLE_WEIGHT_GOT[3]


def sample_weight_message(func: str, got: str) -> str:
    """The error text for a bad weight (``got``: one of SAMPLE_WEIGHT_GOT).

    Examples
    --------
    >>> sample_weight_message("accuracy", "NaN")
    "The 'sample_weight' parameter of accuracy must be a finite number >= 0 (a NULL weight skips the row). Got NaN instead."
    """
    return param_message("sample_weight", func, WEIGHT_RULE, got)


N_LABELS_TOO_SMALL_MESSAGE = (
    "The 'n_labels' parameter of {func} must be at least the number of distinct labels in "
    "each row's actual and predicted lists together (the size of the label universe). "
    "Got {{}}, fewer than a row holds."
)


# ---------------------------------------------------------------- Hivemall options

OPTIONS_MESSAGE = (
    "fmeasure options must look like Hivemall's '-beta 2. -average micro' "
    "(options: -beta B, -average micro|binary). Got {got} instead."
)
AVERAGE_MACRO_MESSAGE = (
    '"-average macro" is not supported by fmeasure (as in Hivemall); '
    "use macro_fbeta or multilabel_report for the macro average."
)
AVERAGE_MESSAGE = "The -average option of fmeasure must be one of micro, binary. Got {got} instead."
BINARY_ON_ARRAYS_MESSAGE = (
    '"-average binary" is not supported when actual and predicted are arrays '
    "(as in Hivemall); use -average micro."
)
INT_LABEL_MESSAGE = "fmeasure takes int labels 1, 0 or -1 (as Hivemall). Got {got} instead."
HIVEMALL_TYPE_MESSAGE = (
    "fmeasure needs actual and predicted of one kind: both label arrays (text or integers), "
    "both int (1, 0, -1) or both boolean. Got actual {actual} and predicted {predicted}."
)
#: the blanks of an option string: ASCII's space, tab, line feed, carriage return and form feed
#: (each engine's regex reads this class alike; Python's \s also took Unicode spaces, and
#: PostgreSQL's a vertical tab), and a word between them
_BLANK, _WORD = r"[ \t\n\r\f]", r"[^ \t\n\r\f]"
OPTIONS_PATTERN = rf"{_BLANK}*((--?beta{_BLANK}+{_WORD}+|--?average{_BLANK}+{_WORD}+){_BLANK}*)*"
#: the value of ``-beta`` and of ``-average`` (the first group) in an option string
BETA_PATTERN = rf"--?beta{_BLANK}+({_WORD}+)"
AVERAGE_PATTERN = rf"--?average{_BLANK}+({_WORD}+)"
#: a beta's text: a decimal number in ASCII (Python's float() also read other scripts' digits
#: and underscores, which DuckDB's and PostgreSQL's casts refuse)
BETA_NUMBER = r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?|[+-]?(inf|infinity|nan)"


@dataclass(frozen=True)
class HivemallOptions:
    """Parsed ``fmeasure`` options."""

    beta: float = 1.0
    average: str = "micro"


def parse_hivemall_options(options: str | None) -> HivemallOptions:
    """Parse Hivemall's ``fmeasure`` option string.

    Examples
    --------
    >>> parse_hivemall_options("-beta 2. -average binary")
    HivemallOptions(beta=2.0, average='binary')
    """
    if options is None:
        return HivemallOptions()
    if not isinstance(options, str) or not re.fullmatch(OPTIONS_PATTERN, options):
        raise MlsqlError(OPTIONS_MESSAGE.format(got=repr(options)))
    beta_match = re.search(BETA_PATTERN, options)
    beta = 1.0
    if beta_match:
        text = beta_match.group(1)
        if not re.fullmatch(BETA_NUMBER, text, re.IGNORECASE):
            raise MlsqlError(beta_message("fmeasure", repr(text)))
        beta = float(text)
        check_beta(beta, "fmeasure")
    average_match = re.search(AVERAGE_PATTERN, options)
    average = average_match.group(1) if average_match else "micro"
    if average == "macro":
        raise MlsqlError(AVERAGE_MACRO_MESSAGE)
    if average not in HIVEMALL_AVERAGES:
        raise MlsqlError(AVERAGE_MESSAGE.format(got=repr(average)))
    return HivemallOptions(beta, average)


#: a ``by`` that is not a column name or a list of them
BY_MESSAGE = "The 'by' parameter of {func} must be column names (strings). Got {by!r} instead."
#: a ``by`` that names a column twice (DuckDB's SQL compares names as it compares identifiers,
#: case-insensitively)
BY_REPEATED_MESSAGE = "The 'by' parameter of {func} names the column {name!r} more than once."
#: a ``by`` column named as one of the table's output columns
BY_OUTPUT_MESSAGE = "{func}: the by column {name!r} has the name of an output column."


def check_by(by: Any, func: str) -> list[str]:
    """Validate ``by`` (a column name or names) and return it as a list (empty for None).

    Examples
    --------
    >>> check_by("model", "label_metrics")
    ['model']
    >>> check_by(None, "label_metrics")
    []
    >>> check_by(3, "evaluate")
    Traceback (most recent call last):
    ...
    mlsql._errors.MlsqlError: The 'by' parameter of evaluate must be column names (strings). Got 3 instead.
    """
    if by is None:
        return []
    if isinstance(by, str):
        names = [by]
    elif isinstance(by, Iterable) and not isinstance(by, (bytes, Mapping)):
        names = list(by)
    else:  # a number, a mapping: not names (SQL's verdict too), not a TypeError of list()
        raise MlsqlError(BY_MESSAGE.format(func=func, by=by))
    if not all(isinstance(n, str) and n for n in names):
        raise MlsqlError(BY_MESSAGE.format(func=func, by=by))
    for i, name in enumerate(names):
        if name in names[:i]:  # one group column twice: a duplicate output column
            raise MlsqlError(BY_REPEATED_MESSAGE.format(func=func, name=name))
    return names


#: the catalogs and schemas DuckDB keeps for itself: a schema of one of these names is
#: ambiguous (``temp``, ``system``) or cannot be created (``pg_catalog``, ``information_schema``)
DUCKDB_RESERVED_SCHEMAS = ("temp", "system", "pg_catalog", "information_schema")


def check_sql_name(
    value: Any, param: str, func: str, *, empty: bool = False, reserved: tuple[str, ...] = ()
) -> str:
    """Validate a name that becomes part of SQL text (a prefix, a schema).

    Letters, digits and underscores only, not starting with a digit (``empty``
    allows ""), so the name can never be read as anything but a name; nor one
    of ``reserved`` (in any case).

    Examples
    --------
    >>> check_sql_name("ml_", "prefix", "register", empty=True)
    'ml_'
    >>> check_sql_name("x; DROP TABLE t", "prefix", "register", empty=True)
    Traceback (most recent call last):
    ...
    mlsql._errors.MlsqlError: The 'prefix' parameter of register must be letters, digits or underscores, not starting with a digit. Got 'x; DROP TABLE t' instead.
    >>> check_sql_name("TEMP", "schema", "register", reserved=DUCKDB_RESERVED_SCHEMAS)
    Traceback (most recent call last):
    ...
    mlsql._errors.MlsqlError: The 'schema' parameter of register must not be one of DuckDB's own catalogs and schemas (temp, system, pg_catalog, information_schema). Got 'TEMP' instead.
    """
    pattern = r"(?:[A-Za-z_][A-Za-z0-9_]*)?" if empty else r"[A-Za-z_][A-Za-z0-9_]*"
    if not (isinstance(value, str) and re.fullmatch(pattern, value)):
        raise MlsqlError(
            f"The '{param}' parameter of {func} must be letters, digits or underscores, "
            f"not starting with a digit. Got {value!r} instead."
        )
    if value.lower() in reserved:
        raise MlsqlError(
            f"The '{param}' parameter of {func} must not be one of DuckDB's own catalogs and "
            f"schemas ({', '.join(reserved)}). Got {value!r} instead."
        )
    return value


def clash_message(where: str, names: list[str], beside: str) -> str:
    """The error text when mlsql's functions would replace functions of the user's.

    Examples
    --------
    >>> clash_message("on this connection", ["micro_f1"], "prefix='ml_'")
    "mlsql would replace functions already defined on this connection: micro_f1. Pass replace=True to replace them, or prefix='ml_' to install beside them."
    """
    return (
        f"mlsql would replace functions already defined {where}: {', '.join(names)}. "
        f"Pass replace=True to replace them, or {beside} to install beside them."
    )


# ---------------------------------------------------------------- constraints as data
#: DuckDB type names of numbers (``typeof``), BOOLEAN excluded; integers alone in INTEGER_TYPES
INTEGER_TYPES = r"U?(TINY|SMALL|BIG|HUGE)?INT(EGER)?"
NUMBER_TYPES = rf"({INTEGER_TYPES}|FLOAT|DOUBLE|DECIMAL\(\d+,\d+\))"


def shown(value: Any) -> str:
    """How a message shows a given value (the SQL checks show SQL values alike).

    Strings in single quotes, None (SQL NULL) as ``None``, booleans as
    ``True``/``False``, numbers as Python writes them.

    Examples
    --------
    >>> shown("2"), shown(None), shown(True), shown(-1), shown(2.0), shown(float("inf"))
    ("'2'", 'None', 'True', '-1', '2.0', 'inf')
    """
    if value is None:
        return "None"
    if isinstance(value, bool):
        return repr(value)
    if isinstance(value, str):
        return f"'{value}'"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        return repr(float(value))
    return repr(value)


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


@dataclass(frozen=True)
class Number:
    """A real number (never a string or a boolean), finite unless ``finite=False``,
    and above ``low`` when given (``>`` if ``strict``, else ``>=``)."""

    low: float | None = None
    strict: bool = True
    finite: bool = True
    type_doc: str = "float"
    spark_type: str = "DOUBLE"
    #: below ``high`` when given (always strictly: a persistence in (0, 1))
    high: float | None = None

    def rule(self) -> str:
        """What the value must be, as the message says it."""
        what = "a finite number" if self.finite else "a number"
        if self.low is not None:
            what = f"{what} {'>' if self.strict else '>='} {self.low:g}"
        if self.high is not None:
            what = f"{what} and < {self.high:g}"
        return what

    def accepts(self, value: Any) -> tuple[bool, Any]:
        """Whether ``value`` is valid (None aside), and its checked form."""
        if not _is_number(value):
            return False, None
        x = float(value)
        return self.ok(x), x

    def ok(self, x: float) -> bool:
        """Whether the number ``x`` is within the constraint."""
        if self.finite and not math.isfinite(x):
            return False
        if self.high is not None and not x < self.high:
            return False
        return self.low is None or (x > self.low if self.strict else x >= self.low)

    def ok_sql(self, x: str) -> str:
        """SQL (DuckDB and Spark alike): whether the DOUBLE ``x`` is within the constraint."""
        parts = [f"{x} IS NOT NULL"]
        if self.finite:
            parts.append(f"NOT isnan({x}) AND abs({x}) < CAST('Infinity' AS DOUBLE)")
        if self.low is not None:
            parts.append(f"{x} {'>' if self.strict else '>='} {self.low!r}")
        if self.high is not None:
            parts.append(f"{x} < {self.high!r}")
        return " AND ".join(parts)

    def duckdb(self, x: str) -> tuple[str, str]:
        """DuckDB SQL (whether ``x`` is valid, its checked value) for a value of any type."""
        v = f"TRY_CAST({x} AS DOUBLE)"
        return f"regexp_full_match(typeof({x}), '{NUMBER_TYPES}') AND {self.ok_sql(v)}", v

    def spark(self, x: str) -> tuple[str, str]:
        """Spark SQL (valid, value) for ``x`` of :attr:`spark_type`."""
        return self.ok_sql(x), x

    def parse_text(self, text: str) -> Any:
        """A command-line text as the value it stands for (a number, else the text)."""
        return _number_text(text)


#: the largest whole number a parameter holds (a 64-bit integer, as in every engine)
INT64_MAX = 2**63 - 1


@dataclass(frozen=True)
class Integer:
    """A whole number of an integer type (not a float, even 2.0), at least ``low`` and, when
    given, at most ``high`` (a size that memory and time grow with, such as a bin count)."""

    low: int = 1
    high: int | None = None
    type_doc: str = "int"
    spark_type: str = "DOUBLE"

    def rule(self) -> str:
        """What the value must be, as the message says it."""
        if self.high is not None:
            return f"a whole number from {self.low} to {self.high}"
        return "a whole number > 0" if self.low == 1 else f"a whole number >= {self.low}"

    def accepts(self, value: Any) -> tuple[bool, Any]:
        """Whether ``value`` is valid (None aside), and its checked form. Without ``high``,
        at most :data:`INT64_MAX`, as DuckDB's BIGINT check and Polars' Int64 hold it."""
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            return False, None
        high = INT64_MAX if self.high is None else self.high
        return self.low <= int(value) <= high, int(value)

    def _high_sql(self, v: str) -> str:
        return "" if self.high is None else f" AND {v} <= {self.high}"

    def duckdb(self, x: str) -> tuple[str, str]:
        """DuckDB SQL (whether ``x`` is valid, its checked value) for a value of any type."""
        v = f"TRY_CAST({x} AS BIGINT)"
        ok = f"regexp_full_match(typeof({x}), '{INTEGER_TYPES}') AND {v} >= {self.low}"
        return ok + self._high_sql(v), v

    def spark(self, x: str) -> tuple[str, str]:
        """Spark SQL (valid, value): Spark casts the argument to DOUBLE at the call, so a
        whole DOUBLE passes there."""
        ok = f"{x} IS NOT NULL AND NOT isnan({x}) AND {x} = floor({x}) AND {x} >= {self.low}"
        return ok + self._high_sql(x), x

    def parse_text(self, text: str) -> Any:
        """A command-line text as the value it stands for (a number, else the text)."""
        return _number_text(text)


@dataclass(frozen=True)
class Options:
    """One of fixed options: ``numbers`` (0, 1 ...; never their strings), NaN when
    ``nan`` (the float, or the option 'nan'), and ``strings`` matched after
    lower-casing, exactly (no spaces stripped). The checked value is the number
    as an int, ``'nan'``, or the lower-cased string."""

    strings: tuple[str, ...] = ()
    numbers: tuple[int, ...] = ()
    nan: bool = False
    convert: Callable[[Any], Any] | None = None
    spark_type: str = "STRING"

    @property
    def names(self) -> tuple[str, ...]:
        """The options as the message lists them."""
        listed = [str(n) for n in self.numbers] + (["nan"] if self.nan else [])
        return (*listed, *(f"'{s}'" for s in self.strings))

    @property
    def type_doc(self) -> str:
        return "{" + ", ".join(self.names) + "}"

    def rule(self) -> str:
        """What the value must be, as the message says it."""
        return f"one of {', '.join(self.names)}"

    def _texts(self) -> tuple[str, ...]:
        return (*(("nan",) if self.nan else ()), *self.strings)

    def accepts(self, value: Any) -> tuple[bool, Any]:
        """Whether ``value`` is valid (None aside), and its checked form."""
        if isinstance(value, str):
            text = value.lower()
            return text in self._texts(), text
        if not _is_number(value):
            return False, None
        if math.isnan(value):
            return self.nan, "nan"
        return value in self.numbers, int(value) if value in self.numbers else None

    def duckdb(self, x: str) -> tuple[str, str]:
        """DuckDB SQL (whether ``x`` is valid, its checked value as text) for any type."""
        text = f"lower(CAST({x} AS VARCHAR))"
        d = f"TRY_CAST({x} AS DOUBLE)"
        is_number = f"regexp_full_match(typeof({x}), '{NUMBER_TYPES}')"
        texts = ", ".join(f"'{t}'" for t in self._texts())
        ok = [f"(typeof({x}) = 'VARCHAR' AND {text} IN ({texts}))"] if texts else []
        if self.nan:
            ok.append(f"({is_number} AND isnan({d}))")
        if self.numbers:
            listed = ", ".join(map(str, self.numbers))
            ok.append(f"({is_number} AND {d} IN ({listed}))")
        if not (self.nan or self.numbers):
            return " OR ".join(ok), text
        value = f"CASE WHEN typeof({x}) = 'VARCHAR' THEN {text}"
        if self.nan:
            value += f" WHEN isnan({d}) THEN 'nan'"
        value += f" ELSE CAST(CAST({d} AS BIGINT) AS VARCHAR) END" if self.numbers else " END"
        return " OR ".join(ok), value

    def spark(self, x: str) -> tuple[str, str]:
        """Spark SQL (valid, value as text): the parameter is STRING, so Spark casts a number
        argument to its text at the call ('1.0' reads as 1 there)."""
        value = (
            f"regexp_replace(lower({x}), '^([0-9]+)\\\\.0*$', '$1')"
            if self.numbers
            else f"lower({x})"
        )
        allowed = ", ".join(f"'{t}'" for t in (*map(str, self.numbers), *self._texts()))
        return f"{value} IN ({allowed})", value

    def parse_text(self, text: str) -> Any:
        """A command-line text as the value it stands for: an option's name, else a number."""
        if text.lower() in self._texts() or not self.numbers:
            return text
        return _number_text(text)


@dataclass(frozen=True)
class Boolean:
    """A boolean: ``True`` or ``False`` (never 0, 1 or a string; numpy's booleans pass)."""

    type_doc: str = "bool"
    spark_type: str = "BOOLEAN"

    def rule(self) -> str:
        """What the value must be, as the message says it."""
        return "a boolean (True or False)"

    def accepts(self, value: Any) -> tuple[bool, Any]:
        """Whether ``value`` is valid (None aside), and its checked form (a Python bool)."""
        ok = isinstance(value, bool) or type(value).__name__ == "bool_"
        return ok, bool(value) if ok else None

    def duckdb(self, x: str) -> tuple[str, str]:
        """DuckDB SQL (whether ``x`` is valid, its checked value) for a value of any type."""
        return f"typeof({x}) = 'BOOLEAN'", f"TRY_CAST({x} AS BOOLEAN)"

    def spark(self, x: str) -> tuple[str, str]:
        """Spark SQL (valid, value) for the BOOLEAN ``x``."""
        return f"{x} IS NOT NULL", x

    def parse_text(self, text: str) -> Any:
        """A command-line text as the value it stands for: true or false (any case), else
        the text."""
        return {"true": True, "false": False}.get(text.lower(), text)


@dataclass(frozen=True)
class AutoBoolean:
    """``'auto'`` (any case) or a boolean (scikit-learn's ``StrOptions({'auto'})`` or
    ``'boolean'``; never 0, 1 or the strings 'true' and 'false'). The checked value is text:
    ``'auto'``, ``'true'`` or ``'false'``, the same in Python and in SQL."""

    type_doc: str = "{'auto', True, False}"
    #: Spark SQL casts a BOOLEAN argument to its text ('true', 'false') at the call
    spark_type: str = "STRING"

    def rule(self) -> str:
        """What the value must be, as the message says it."""
        return "'auto' or a boolean (True or False)"

    def accepts(self, value: Any) -> tuple[bool, Any]:
        """Whether ``value`` is valid (None aside), and its checked form (text).

        Examples
        --------
        >>> AutoBoolean().accepts(False), AutoBoolean().accepts("Auto"), AutoBoolean().accepts(1)
        ((True, 'false'), (True, 'auto'), (False, None))
        """
        if isinstance(value, bool) or type(value).__name__ == "bool_":
            return True, "true" if value else "false"
        if isinstance(value, str) and value.lower() == "auto":
            return True, "auto"
        return False, None

    def duckdb(self, x: str) -> tuple[str, str]:
        """DuckDB SQL (whether ``x`` is valid, its checked value as text) for any type."""
        text = f"lower(CAST({x} AS VARCHAR))"
        ok = f"typeof({x}) = 'BOOLEAN' OR (typeof({x}) = 'VARCHAR' AND {text} = 'auto')"
        return ok, text

    def spark(self, x: str) -> tuple[str, str]:
        """Spark SQL (valid, value as text): the STRING parameter holds 'true' or 'false' for a
        boolean argument."""
        return f"lower({x}) IN ('auto', 'true', 'false')", f"lower({x})"

    def parse_text(self, text: str) -> Any:
        """A command-line text as the value it stands for: true or false (any case), else
        the text."""
        return {"true": True, "false": False}.get(text.lower(), text)


def _listed(value: Any) -> list[Any] | None:
    """``value`` as a Python list when it is a list, a tuple or an array (``tolist``), else None."""
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        value = value.tolist()
    return list(value) if isinstance(value, (list, tuple)) else None


@dataclass(frozen=True)
class GivenMatrix:
    """A checked weights matrix: its ``rows`` as floats, and the value as it was ``given``
    (what a message shows)."""

    rows: tuple[tuple[float, ...], ...]
    given: Any = field(default=None, compare=False)

    def over(self, labels: tuple[Any, ...], func: str) -> dict[tuple[Any, Any], float]:
        """The weight of each (actual, predicted) pair of ``labels``; the weights' error
        when the matrix has not one row per label."""
        if len(self.rows) != len(labels):
            raise MlsqlError(message(KAPPA_WEIGHTS, func, shown(self.given)))
        return {(a, p): self.rows[i][j] for i, a in enumerate(labels) for j, p in enumerate(labels)}


def kappa_matrix(
    weights: Any, labels: tuple[Any, ...] | None, func: str
) -> dict[tuple[Any, Any], float] | None:
    """The checked ``weights`` and ``labels`` of ``cohen_kappa_score`` as the weight of each
    (actual, predicted) pair of labels: a matrix's, or with labels a named weighting's over
    the labels' positions (plain: 1 off the diagonal); None without labels. A matrix
    without labels, or not of their size, is the weights' error.

    Examples
    --------
    >>> kappa_matrix("linear", ("b", "a"), "f")
    {('b', 'b'): 0.0, ('b', 'a'): 1.0, ('a', 'b'): 1.0, ('a', 'a'): 0.0}
    >>> kappa_matrix(GivenMatrix(((0.0, 2.0), (1.0, 0.0)), [[0, 2], [1, 0]]), None, "f")
    Traceback (most recent call last):
    ...
    mlsql._errors.MlsqlError: The 'weights' parameter of f must be one of 'linear', 'quadratic', or a square matrix of finite numbers >= 0 with a row and a column per label of labels. Got [[0, 2], [1, 0]] instead.
    """
    if isinstance(weights, GivenMatrix):
        if labels is None:
            raise MlsqlError(message(KAPPA_WEIGHTS, func, shown(weights.given)))
        return weights.over(labels, func)
    if labels is None:
        return None
    power = {"none": 0, "linear": 1, "quadratic": 2}[weights]
    return {
        (a, p): float(abs(i - j) ** power if power else i != j)
        for i, a in enumerate(labels)
        for j, p in enumerate(labels)
    }


@dataclass(frozen=True)
class WeightMatrix:
    """``cohen_kappa_score``'s disagreement weights: 'linear' or 'quadratic' (any case,
    checked as lower-case text) or a k x k matrix, a list of k lists of k finite numbers >= 0
    (checked as a :class:`GivenMatrix`; DuckDB's check gives the text 'matrix' and the
    macro reads the matrix itself). That k is the number of ``labels`` is checked beside
    them, with this message."""

    strings: tuple[str, ...] = ("linear", "quadratic")
    type_doc: str = "{'linear', 'quadratic'} or list of lists of float"
    spark_type: str = "STRING"

    def rule(self) -> str:
        """What the value must be, as the message says it."""
        return (
            "one of 'linear', 'quadratic', or a square matrix of finite numbers >= 0 with a "
            "row and a column per label of labels"
        )

    def accepts(self, value: Any) -> tuple[bool, Any]:
        """Whether ``value`` is valid (None aside), and its checked form.

        Examples
        --------
        >>> WeightMatrix().accepts("Linear"), WeightMatrix().accepts([[0, 1], [2, 0]])[1].rows
        ((True, 'linear'), ((0.0, 1.0), (2.0, 0.0)))
        >>> WeightMatrix().accepts([[0, 1]]), WeightMatrix().accepts([[0, -1], [1, 0]])
        ((False, None), (False, None))
        """
        if isinstance(value, str):
            text = value.lower()
            return text in self.strings, text
        rows = _listed(value)
        if not rows:
            return False, None
        matrix = []
        for row in rows:
            cells = _listed(row)
            if cells is None or len(cells) != len(rows):
                return False, None
            if not all(_is_number(x) and math.isfinite(x) and x >= 0 for x in cells):
                return False, None
            matrix.append(tuple(float(x) for x in cells))
        return True, GivenMatrix(tuple(matrix), value)

    def duckdb(self, x: str) -> tuple[str, str]:
        """DuckDB SQL (whether ``x`` is valid, its checked value as text: the option, or
        'matrix') for a value of any type."""
        text = f"lower(CAST({x} AS VARCHAR))"
        m = f"TRY_CAST({x} AS DOUBLE[][])"
        is_matrix = f"regexp_full_match(typeof({x}), '{NUMBER_TYPES}\\[\\]\\[\\]')"
        bad_cell = "v IS NULL OR isnan(v) OR isinf(v) OR v < 0"
        bad_row = (
            f"r IS NULL OR len(r) <> len({m}) OR len(list_filter(r, lambda v: {bad_cell})) > 0"
        )
        square = f"len({m}) > 0 AND len(list_filter({m}, lambda r: {bad_row})) = 0"
        texts = ", ".join(f"'{t}'" for t in self.strings)
        ok = f"(typeof({x}) = 'VARCHAR' AND {text} IN ({texts})) OR ({is_matrix} AND {square})"
        return ok, f"CASE WHEN {is_matrix} THEN 'matrix' ELSE {text} END"

    def spark(self, x: str) -> tuple[str, str]:
        """No Spark SQL function takes a matrix: Spark checks it in Python."""
        raise NotImplementedError("a weights matrix is checked in Python on Spark")

    def parse_text(self, text: str) -> Any:
        """A command-line text as the value it stands for (the option's name)."""
        return text


@dataclass(frozen=True)
class LabelList:
    """A non-empty list of distinct labels, all text, all integers or all booleans (no NULL);
    checked as a tuple."""

    type_doc: str = "list"
    spark_type: str = "STRING"

    def rule(self) -> str:
        """What the value must be, as the message says it."""
        return "a non-empty list of distinct labels of one kind (text, integers or booleans)"

    def accepts(self, value: Any) -> tuple[bool, Any]:
        """Whether ``value`` is valid (None aside), and its checked form.

        Examples
        --------
        >>> LabelList().accepts(["b", "a"]), LabelList().accepts([1, 1]), LabelList().accepts("ab")
        ((True, ('b', 'a')), (False, None), (False, None))
        """
        items = None if isinstance(value, str) else _listed(value)
        if not items:
            return False, None
        kinds = {bool if isinstance(v, bool) else str if isinstance(v, str) else int for v in items}
        typed = all(isinstance(v, (str, numbers.Integral)) for v in items)
        if len(kinds) != 1 or not typed or len(set(items)) != len(items):
            return False, None
        return True, tuple(items)

    def duckdb(self, x: str) -> tuple[str, str]:
        """DuckDB SQL (whether ``x`` is valid, ``x`` itself): a list of scalars whose
        ``list_distinct`` (which drops NULLs) keeps every element. The list is read through
        ``TRY_CAST`` as text, so that the check binds for a value of any type (a number, a
        text, a nested list), which it then refuses."""
        listed = f"regexp_full_match(typeof({x}), '(VARCHAR|BOOLEAN|{INTEGER_TYPES})\\[\\]')"
        text = f"TRY_CAST({x} AS VARCHAR[])"
        return f"{listed} AND len({text}) > 0 AND len(list_distinct({text})) = len({text})", x

    def spark(self, x: str) -> tuple[str, str]:
        """No Spark SQL function takes labels: Spark checks them in Python."""
        raise NotImplementedError("labels are checked in Python on Spark")

    def parse_text(self, text: str) -> Any:
        """A command-line text as the labels it stands for: comma-separated."""
        return [part.strip() for part in text.split(",")]


def _number_text(text: str) -> Any:
    """``text`` as an int or float when it reads as one (as Python writes numbers), else itself.

    Spaces are kept (no number has them), so ' 2' stays a string, as ' nan' does.
    """
    if text != text.strip():
        return text
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


@dataclass(frozen=True)
class Nullable:
    """A constraint under which None (SQL NULL) is allowed and stands for ``value``.

    ``note`` follows the rule in the message ("(or NULL for all)").
    """

    inner: Any
    value: Any = None
    note: str = ""

    def __getattr__(self, name: str) -> Any:
        if name == "inner" or name.startswith("__"):  # copies and pickles look these up first
            raise AttributeError(name)
        return getattr(self.inner, name)

    def rule(self) -> str:
        return self.inner.rule() + (f" ({self.note})" if self.note else "")


def param_message(name: str, func: str, rule: str, got: str, *, what: str = "parameter") -> str:
    """scikit-learn's shape: "The 'beta' parameter of f must be a finite number > 0. Got -1 instead."."""
    return f"The '{name}' {what} of {func} must be {rule}. Got {got} instead."


def message(p: Param, func: str, got: str) -> str:
    """The error text for an invalid value of ``p`` in ``func`` (``got`` already shown)."""
    return param_message(p.name, func, p.constraint.rule(), got)


def check(p: Param, value: Any, func: str) -> Any:
    """``value`` of parameter ``p`` of ``func``, checked against its constraint.

    Examples
    --------
    >>> check(BETA, 2, "micro_fbeta")
    2.0
    >>> check(ZERO_DIVISION, "Ignore", "micro_f1")
    ZeroDivision(kind='ignore', value=0.0)
    >>> check(BETA, "2", "micro_fbeta")
    Traceback (most recent call last):
    ...
    mlsql._errors.MlsqlError: The 'beta' parameter of micro_fbeta must be a finite number > 0. Got '2' instead.
    """
    c = p.constraint
    if c is None:
        return value
    if isinstance(value, ZeroDivision):
        return value
    if value is None:
        if isinstance(c, Nullable):
            return c.value
        raise MlsqlError(message(p, func, shown(value)))
    ok, checked = c.accepts(value)
    if not ok:
        raise MlsqlError(message(p, func, shown(value)))
    convert = getattr(c, "convert", None)
    return checked if convert is None else convert(checked)


def param_doc(p: Param) -> str:
    """The numpydoc entry of ``p``: ``name : type, default d`` and its description."""
    c = p.constraint
    head = f"{p.name} : {c.type_doc}" + (", optional" if isinstance(c, Nullable) else "")
    if p.default is not None:
        head += f", default {p.default!r}"
    return "\n".join([head, *(f"    {line}" for line in p.doc.splitlines())])


# ---------------------------------------------------------------- SQL checks
#: DuckDB: a value of any type shown as :func:`shown` shows it
DUCKDB_SHOWN = (
    "CASE WHEN x IS NULL THEN 'None'\n"
    "         WHEN typeof(x) = 'BOOLEAN' THEN CASE WHEN CAST(x AS VARCHAR) = 'true' THEN 'True' ELSE 'False' END\n"
    "         WHEN typeof(x) = 'VARCHAR' THEN chr(39) || CAST(x AS VARCHAR) || chr(39)\n"
    "         ELSE CAST(x AS VARCHAR) END"
)


def _sql_text(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def duckdb_check(p: Param, shown_macro: str) -> str:
    """The body of DuckDB macro ``_mlsql_check_<key>(x, func)``: ``x`` checked, or error().

    Types are tested with ``typeof``, which DuckDB folds when it binds the
    query, so a string, a boolean or a float where an integer is due is an
    error with mlsql's message, never a Binder error.
    """
    c = p.constraint
    before, after = param_message(p.name, "{}", c.rule(), "{}").split("{}", 1)
    middle, after = after.split("{}")
    error = (
        f"error({_sql_text(before)} || func || {_sql_text(middle)} || {shown_macro}(x) || "
        f"{_sql_text(after)})"
    )
    ok, value = c.duckdb("x")
    null = error
    if isinstance(c, Nullable):
        null = "NULL" if c.value is None else _sql_text(str(c.value))
    return f"CASE WHEN x IS NULL THEN {null}\n         WHEN {ok} THEN {value}\n         ELSE {error} END"


def spark_check(p: Param, func: str, string: Callable[[str], str]) -> str:
    """Spark SQL: parameter ``p`` of SQL function ``func`` checked, or raise_error()."""
    c, x = p.constraint, p.name
    if c.spark_type == "STRING":
        got = f"concat({string(chr(39))}, {x}, {string(chr(39))})"
    else:
        got = (
            f"CASE WHEN isnan({x}) THEN 'nan' WHEN {x} = CAST('Infinity' AS DOUBLE) THEN 'inf' "
            f"WHEN {x} = CAST('-Infinity' AS DOUBLE) THEN '-inf' ELSE CAST({x} AS STRING) END"
        )
    before, after = message(p, func, "{}").split("{}")
    error = f"raise_error(concat({string(before)}, coalesce({got}, 'None'), {string(after)}))"
    ok, value = c.spark(x)
    null = error
    if isinstance(c, Nullable):
        null = "NULL" if c.value is None else string(str(c.value))
    return f"(CASE WHEN {x} IS NULL THEN {null} WHEN {ok} THEN {value} ELSE {error} END)"


def cli_value(p: Param, text: str, command: str) -> Any:
    """A command-line option's text as parameter ``p`` of ``command`` takes it, checked.

    The text stands for a number when it reads as one (``2``, ``0.5``,
    ``nan``), else for itself (``diagnose``); the verdict and the words are
    those of :func:`check`, naming the option. Returns the checked value
    (zero_division as 0, 1, 'nan', 'diagnose' or 'ignore').

    Examples
    --------
    >>> cli_value(ZERO_DIVISION, "Ignore", "mlsql eval"), cli_value(BETA, "2", "mlsql eval")
    ('ignore', 2.0)
    >>> cli_value(BETA, "two", "mlsql eval")
    Traceback (most recent call last):
    ...
    mlsql._errors.MlsqlError: The '--beta' option of mlsql eval must be a finite number > 0. Got 'two' instead.
    """
    value = p.constraint.parse_text(text)
    ok, checked = p.constraint.accepts(value)
    if not ok:
        option = "--" + p.name.replace("_", "-")
        rule = p.constraint.rule()
        raise MlsqlError(param_message(option, command, rule, shown(value), what="option"))
    return checked


# ---------------------------------------------------------------- the parameters
BETA = Param("beta", 1.0, Number(low=0), "Weight of recall against precision; a finite number > 0.")
ZERO_DIVISION = Param(
    "zero_division",
    0,
    Options(("diagnose", "ignore"), (0, 1), nan=True, convert=ZeroDivision.of),
    "The value of an undefined ratio: 0 or 1; NaN (left out of averages);\n"
    "'diagnose' (1 where nothing is true or predicted, else 0); 'ignore'\n"
    "(NULL, left out of averages).",
)
CORRECTION = Param(
    "correction",
    1.0,
    Number(low=0, strict=False),
    "McNemar's continuity correction, subtracted from |fp - fn|; a finite number >= 0:\n"
    "1 is statsmodels' correction=True (the default), 0 its correction=False.",
)
N_LABELS = Param("n_labels", None, Integer(1), "The number of labels in the label universe (> 0).")
ALPHA = Param(
    "alpha",
    1.0,
    Number(low=0),
    "The lecture's alpha, a finite number > 0: F_alpha is F-beta with alpha = beta².",
)
COST_FN = Param("cost_fn", 1.0, Number(), "Cost of a false negative; a finite number.")
COST_FP = Param("cost_fp", 1.0, Number(), "Cost of a false positive; a finite number.")
AVERAGE = Param(
    "average",
    "macro",
    Options(("micro", "macro", "weighted")),
    "micro: pool the counts of every class; macro: mean over classes; weighted:\n"
    "mean weighted by each class's support. Classes: those seen on either side, or the\n"
    "labels given.",
)
KAPPA_WEIGHTS = Param(
    "weights",
    None,
    Nullable(WeightMatrix(), value="none"),
    "Disagreement weights: 'linear' |i - j| or 'quadratic' (i - j)² over the classes'\n"
    "positions (the sorted classes, or labels' order), or a k x k matrix of finite numbers\n"
    ">= 0 for the k labels (row: actual, column: predicted), statsmodels' 2-D weights.",
    key="kappa_weights",
)
KAPPA_LABELS = Param(
    "labels",
    None,
    Nullable(LabelList(), note="or NULL for the classes seen"),
    "The classes in the weights matrix's order (scikit-learn's labels): rows whose actual\n"
    "or predicted class is not among them are left out; default: the classes seen, sorted.",
    key="kappa_labels",
)
CLASS_LABELS = Param(
    "labels",
    None,
    Nullable(LabelList(), note="or NULL for the classes seen"),
    "The classes to average over, in scikit-learn's sense: a label that no row holds counts\n"
    "as a class without rows, and a row of another class still counts against the labels it\n"
    "meets (a false positive or a false negative); default: the classes seen.",
    key="class_labels",
)
K = Param(
    "k",
    None,
    Nullable(Integer(1), note="or NULL for all"),
    "Look at the first k items (a whole number > 0); default: all of them.",
)
TOP_K = Param(
    "k",
    None,
    Nullable(Integer(0), note="or NULL for all"),
    "Keep at most k labels (a whole number >= 0); default: all of them.",
    key="top_k",
)
TABLE_BETA = Param(
    "beta",
    None,
    Nullable(Number(low=0)),
    "Add F-beta columns for this beta, a finite number > 0 (None: F1 only).",
    key="table_beta",
)
#: the most bins a calibration or threshold table takes: memory and time grow with the bins
#: (DuckDB tried an 8 GB allocation for a billion), and a finer binning than the scores'
#: own precision says nothing more
MAX_BINS = 100_000
N_BINS = Param(
    "n_bins",
    10,
    Integer(1, MAX_BINS),
    f"The number of equal-width bins on [0, 1] (the last closed); a whole number from 1 to "
    f"{MAX_BINS}.",
)
CALIBRATION_STRATEGY = Param(
    "strategy",
    "uniform",
    Options(("uniform", "quantile")),
    "How the bins are cut (scikit-learn's calibration_curve strategy): uniform, n_bins\n"
    "equal-width bins on [0, 1]; quantile, edges at the group's percentiles\n"
    "k / n_bins (k = 0 .. n_bins), so each bin holds about as many rows.",
)
#: torchmetrics' ``thresholds=N`` of its binned curves: the grid i / (N - 1), i = 0 .. N - 1
THRESHOLDS = Param(
    "thresholds",
    100,
    Integer(2, MAX_BINS),
    f"The number of thresholds, i / (thresholds - 1) for i = 0 .. thresholds - 1 (torchmetrics'\n"
    f"linspace(0, 1, thresholds)); a whole number from 2 to {MAX_BINS}.",
)
CALIBRATION_NORM = Param(
    "norm",
    "l1",
    Options(("l1", "l2", "max")),
    "How the bins' gaps |mean prob - share of positives| combine (torchmetrics'\n"
    "norm): l1, their mean weighted by the bins' shares of the rows; l2, the root of\n"
    "the weighted mean of their squares; max, the largest gap of a non-empty bin.",
)
SCORE_AVERAGE = Param(
    "average",
    "macro",
    Options(("micro", "macro", "weighted", "samples")),
    "micro: pool every (row, label) cell; macro: mean over labels; weighted:\n"
    "mean weighted by each label's positives; samples: mean over rows. Labels:\n"
    "those true or scored in some row of the group.",
    key="score_average",
)
BRIER_AVERAGE = Param(
    "average",
    "macro",
    Options(("micro", "macro", "samples")),
    "micro: the mean over every (row, label) cell; macro: the mean over labels of each\n"
    "label's Brier score; samples: the mean over rows of each row's mean over the labels.\n"
    "The three are one number (every label has the group's rows, every row the group's\n"
    "labels); offered as the label-score measures offer it. Labels: those true or scored\n"
    "in some row of the group.",
    key="brier_average",
)
PERSISTENCE = Param(
    "p",
    0.8,
    Number(low=0, high=1),
    "Persistence: the chance that the user goes on to the next item; a number > 0 and\n"
    "< 1 (0.8 by default; ranx has no default).",
)
THRESHOLD = Param("threshold", None, Number(finite=False), "Keep the labels scored >= threshold.")
THRESHOLD_BINS = Param(
    "n_bins",
    None,
    Nullable(Integer(1, MAX_BINS), note="or NULL for exact thresholds"),
    "Bin the scores (probabilities in [0, 1]) into this many equal-width bins and\n"
    "take the bin edges as candidate thresholds; default: every distinct score.",
    key="threshold_bins",
)
DROP_INTERMEDIATE = Param(
    "drop_intermediate",
    False,
    Boolean(),
    "Drop the thresholds whose point lies on the straight segment between its\n"
    "neighbours (scikit-learn's rule: second differences of fp and tp both 0); the\n"
    "+inf point and the first and last thresholds always stay. False by default, all\n"
    "points (scikit-learn's default is True).",
)
SCALE_BY_HALF = Param(
    "scale_by_half",
    "auto",
    AutoBoolean(),
    "Whether the Brier score is halved, scikit-learn's scale_by_half: 'auto' (the\n"
    "default) halves it for fewer than 3 classes (the binary score stays the mean of\n"
    "(prob - actual)², in [0, 1]) and keeps multiclass scores in [0, 2]; True and\n"
    "False force it (a binary score unhalved counts both classes: twice the mean).",
)
#: every parameter declared with a constraint, by its check key (one SQL check macro each)
PARAMS = {
    p.check_key: p
    for p in (
        BETA,
        ZERO_DIVISION,
        N_LABELS,
        ALPHA,
        COST_FN,
        COST_FP,
        CORRECTION,
        AVERAGE,
        KAPPA_WEIGHTS,
        KAPPA_LABELS,
        CLASS_LABELS,
        K,
        TOP_K,
        PERSISTENCE,
        THRESHOLD,
        TABLE_BETA,
        N_BINS,
        CALIBRATION_STRATEGY,
        THRESHOLDS,
        CALIBRATION_NORM,
        SCORE_AVERAGE,
        BRIER_AVERAGE,
        THRESHOLD_BINS,
        DROP_INTERMEDIATE,
        SCALE_BY_HALF,
    )
}
