"""Bounds on untrusted SQL, checked before and right after parsing, so validation cost stays linear.

sqlglot's tokenizer and parser are pure Python (about 30 KB/s on a busy core), its parser
recurses once per nesting level (about 45 parentheses exhaust Python's default stack), and a
long ``a OR b OR c ...`` parses into a left-deep chain thousands of levels deep on which every
"find my enclosing SELECT" walk is linear, making the column qualifier quadratic (a 20,000-term
OR took 252 s). So, in order:

1. the text length is capped (cheap, before anything else);
2. the text is tokenized once and the nesting of parentheses and ``CASE ... END`` is measured from
   the tokens (string literals and comments cannot fake it), before the parser sees them;
3. after parsing, chains of ``AND``/``OR`` are rebalanced into trees of logarithmic depth (the same
   predicate: both are associative, and validation never evaluates them), and the tree's depth
   and size are measured iteratively and capped.

Each violation is a :class:`SQLBoundsError` whose message names the limit and the measured value.

Example:
    >>> try:
    ...     parse_bounded("SELECT " + "(" * 40 + "1" + ")" * 40, "sqlite")
    ... except SQLBoundsError as exc:
    ...     print(str(exc)[:60])
    SQL nested too deeply: 40 levels of parentheses/CASE > the l
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from schemarag.runtime.core.errors import SQLValidationError


class SQLBoundsError(SQLValidationError):
    """SQL larger or deeper than :class:`SQLLimits` allows (rejected before any expensive work)."""


@dataclass(frozen=True)
class SQLLimits:
    """Size limits for one statement. Defaults fit any realistic generated query (BIRD's longest
    gold SQL is under 2 KB) while keeping the worst case of validation near one second."""

    max_chars: int = 20_000  # tokenizing + parsing this much takes ~0.7 s on a busy core
    max_nesting: int = 32  # parentheses / CASE levels; sqlglot's recursive parser needs ~20 frames each
    max_depth: int = 160  # expression-tree depth after rebalancing (generation is recursive too)
    max_nodes: int = 50_000  # expression-tree nodes
    qualify_max_nodes: int = 4_000  # above this sqlglot's column qualifier is skipped (DuckDB still binds)


DEFAULT_LIMITS = SQLLimits()


def parse_bounded(sql: str, dialect: str, limits: SQLLimits = DEFAULT_LIMITS) -> list[Any]:
    """Parse ``sql`` into statements within ``limits``; raises :class:`SQLBoundsError` or sqlglot's
    own ``SqlglotError`` (the caller reports it as a parse error)."""
    return parse_tokens(tokenize_bounded(sql, dialect, limits), sql, dialect, limits)


def tokenize_bounded(sql: str, dialect: str, limits: SQLLimits = DEFAULT_LIMITS) -> list[Any]:
    """Steps 1-2: the length cap, sqlglot's tokens for ``dialect``, and the nesting they show.

    A comment that stops the tokenizer (unclosed, or nested where the dialect nests) is reported
    as such (:func:`.comment_policy.unreadable_comment`), not as sqlglot's "Error tokenizing"."""
    import sqlglot
    from sqlglot.errors import TokenError
    from sqlglot.tokens import TokenType

    from schemarag.app.querygen.comment_policy import unreadable_comment

    if len(sql) > limits.max_chars:
        raise SQLBoundsError(
            f"SQL too long: {len(sql):,} characters > the limit of {limits.max_chars:,}; "
            "return one focused query"
        )
    tokenizer = sqlglot.Dialect.get_or_raise(dialect).tokenizer()
    try:
        tokens = tokenizer.tokenize(sql)
    except TokenError:
        read = tokenizer.tokens
        message = unreadable_comment(sql[read[-1].end + 1 if read else 0 :], dialect)
        if message:
            raise SQLValidationError(message) from None
        raise
    opening = {TokenType.L_PAREN, TokenType.CASE, TokenType.L_BRACKET}
    closing = {TokenType.R_PAREN, TokenType.END, TokenType.R_BRACKET}
    depth = deepest = 0
    for tok in tokens:
        if tok.token_type in opening:
            depth += 1
            deepest = max(deepest, depth)
        elif tok.token_type in closing:
            depth -= 1
    if deepest > limits.max_nesting:
        raise SQLBoundsError(
            f"SQL nested too deeply: {deepest} levels of parentheses/CASE > the limit of "
            f"{limits.max_nesting}; flatten the expression"
        )
    return tokens


def parse_tokens(tokens: list[Any], sql: str, dialect: str, limits: SQLLimits = DEFAULT_LIMITS) -> list[Any]:
    """Step 3: parse the tokens of :func:`tokenize_bounded`, rebalance, and cap size and depth."""
    import sqlglot

    try:
        parsed = sqlglot.Dialect.get_or_raise(dialect).parser().parse(tokens, sql)
    except RecursionError:  # e.g. thousands of unary NOTs: no parentheses, still recursive
        raise SQLBoundsError("SQL nested too deeply for the parser; flatten the expression") from None
    statements = [s for s in parsed if s is not None]
    for tree in statements:
        rebalance(tree)
        nodes, tree_depth = measure(tree)
        if nodes > limits.max_nodes:
            raise SQLBoundsError(
                f"SQL too large: {nodes:,} expression nodes > the limit of {limits.max_nodes:,}"
            )
        if tree_depth > limits.max_depth:
            raise SQLBoundsError(
                f"SQL expression too deep: depth {tree_depth} > the limit of {limits.max_depth} "
                "(a long chain of + or || operators?); use IN (...), SUM or fewer terms"
            )
    return statements


def measure(tree: Any) -> tuple[int, int]:
    """Node count and depth of ``tree``, iteratively (no recursion, linear)."""
    nodes = deepest = 0
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        nodes += 1
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in node.iter_expressions())
    return nodes, deepest


def rebalance(tree: Any) -> Any:
    """Rewrite every chain of 3+ ``AND`` (or ``OR``) into a balanced tree, in place, linearly.

    ``a OR b OR c OR d`` parses as ``((a OR b) OR c) OR d``; the balanced ``(a OR b) OR (c OR d)``
    is the same predicate with depth log2(n) instead of n.
    """
    from sqlglot import exp

    stack = [tree]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind in (exp.And, exp.Or) and type(node.parent) is not kind:
            operands = _chain(node, kind)
            if len(operands) > 2:
                balanced = _balanced(kind, operands)
                if node is tree:
                    tree = balanced
                else:
                    node.replace(balanced)
                stack.extend(operands)
                continue
        stack.extend(node.iter_expressions())
    return tree


def _chain(node: Any, kind: type) -> list[Any]:
    """The operands of a same-operator chain rooted at ``node``, left to right."""
    operands: list[Any] = []
    todo = [node]
    while todo:
        current = todo.pop()
        if type(current) is kind:
            todo.append(current.expression)
            todo.append(current.this)
        else:
            operands.append(current)
    return operands


def _balanced(kind: type, operands: list[Any]) -> Any:
    level = operands
    while len(level) > 1:
        level = [
            kind(this=level[i], expression=level[i + 1]) if i + 1 < len(level) else level[i]
            for i in range(0, len(level), 2)
        ]
    return level[0]
