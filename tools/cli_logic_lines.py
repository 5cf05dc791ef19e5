"""Count the command line's code lines and how many of them are logic (issue 50, item 3: "a thin command line").

Usage: `python tools/cli_logic_lines.py [--per-file] [DIR]` (DIR defaults to schedrl/cli). Reads the files with `ast`;
imports nothing of schedrl. Prints `code lines: N`, `logic lines: M` (and, with --per-file, both per module).

The rule, per Python statement (a statement spans lineno..end_lineno; only its code lines count):

* code lines: lines that are neither blank, nor a comment, nor part of a docstring (module, class or function).
* Not logic:
  - `import` / `from ... import` statements;
  - `def` and `class` header lines (signature and decorators): structure, not logic; their bodies are judged
    statement by statement;
  - argparse definitions: a statement whose value is a call of `ArgumentParser`, `add_argument`, `add_parser`,
    `add_subparsers`, `add_argument_group`, `add_mutually_exclusive_group` or `set_defaults` (also when assigned
    or returned);
  - printing: a call of `print`, `.write`/`.flush` on `sys.stdout`/`sys.stderr`, or `parser.error`/`.print_help`;
  - calls into a lower layer: an expression statement, assignment or `return` whose value is one call (possibly
    awaited) of a name imported from `schedrl.*` outside `schedrl.cli` (or an attribute of such a name), the
    arguments being plain (names, attributes, constants, `args.X`, keyword arguments of those);
  - `pass`, `return` of nothing or of a name/constant, bare `raise` and `raise SystemExit(...)`.
* Logic: every other code line, compound statements' header lines (`if`, `for`, `while`, `with`, `try`, `except`,
  `match`) included: branching, loops, arithmetic, formatting of data, data structures built in the CLI.

The rule is mechanical and errs toward "logic" (a lower-layer call with computed arguments counts as logic): the number
is for watching the trend, before and after a change, on the same rule.
"""

from __future__ import annotations

import argparse
import ast
import io
import sys
import tokenize
from pathlib import Path

ARGPARSE = {"ArgumentParser", "add_argument", "add_parser", "add_subparsers", "add_argument_group",
            "add_mutually_exclusive_group", "set_defaults"}
PRINTING = {"print"}
PRINT_METHODS = {"error", "print_help", "print_usage"}


def code_lines(source: str, tree: ast.Module) -> set[int]:
    """Line numbers holding code: tokens other than comments/newlines, docstrings taken out."""
    lines: set[int] = set()
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
            tokenize.ENCODING, tokenize.ENDMARKER}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type not in skip:
            lines.update(range(token.start[0], token.end[0] + 1))
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                lines.difference_update(range(first.lineno, first.end_lineno + 1))
    return lines


def lower_names(tree: ast.Module) -> set[str]:
    """Names bound by imports from schedrl outside schedrl.cli (anywhere in the file)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.startswith("schedrl") and not node.module.startswith("schedrl.cli"):
                names.update(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("schedrl") and not alias.name.startswith("schedrl.cli"):
                    names.add(alias.asname or alias.name.split(".")[0])
    return names


def _root(node: ast.AST) -> str | None:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _plain(node: ast.AST) -> bool:
    if isinstance(node, (ast.Name, ast.Constant)):
        return True
    if isinstance(node, ast.Attribute):
        return _plain(node.value)
    if isinstance(node, ast.Starred):
        return _plain(node.value)
    return False


def _callee(call: ast.Call) -> str | None:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


def _is_print(call: ast.Call) -> bool:
    name = _callee(call)
    if name in PRINTING:
        return True
    func = call.func
    if isinstance(func, ast.Attribute):
        if name in ("write", "flush") and isinstance(func.value, ast.Attribute) and func.value.attr in ("stdout", "stderr"):
            return True
        if name in PRINT_METHODS:
            return True
    return False


def _value(stmt: ast.stmt) -> ast.AST | None:
    if isinstance(stmt, (ast.Expr, ast.Return)):
        return stmt.value
    if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        return stmt.value
    return None


def not_logic(stmt: ast.stmt, lower: set[str]) -> bool:
    """Whether a simple statement is an import, an argparse definition, printing, a plain lower-layer call or trivial."""
    if isinstance(stmt, (ast.Import, ast.ImportFrom, ast.Pass)):
        return True
    if isinstance(stmt, ast.Return) and (stmt.value is None or _plain(stmt.value)):
        return True
    if isinstance(stmt, ast.Raise):
        exc = stmt.exc
        return exc is None or (isinstance(exc, ast.Call) and _callee(exc) == "SystemExit")
    value = _value(stmt)
    if isinstance(value, ast.Await):
        value = value.value
    if not isinstance(value, ast.Call):
        return False
    if _callee(value) in ARGPARSE or _is_print(value):
        return True
    if _root(value.func) in lower:
        args = list(value.args) + [k.value for k in value.keywords]
        return all(_plain(a) for a in args)
    return False


def count(path: Path) -> tuple[int, int]:
    """(code lines, logic lines) of one file."""
    source = path.read_text()
    tree = ast.parse(source)
    code = code_lines(source, tree)
    lower = lower_names(tree)
    quiet: set[int] = set()

    def visit(body: list[ast.stmt]) -> None:
        for stmt in body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                start = min([d.lineno for d in stmt.decorator_list] + [stmt.lineno])
                quiet.update(range(start, stmt.body[0].lineno))
                visit(stmt.body)
                continue
            children = [getattr(stmt, field) for field in ("body", "orelse", "finalbody") if hasattr(stmt, field)]
            children += [handler.body for handler in getattr(stmt, "handlers", [])]
            children += [case.body for case in getattr(stmt, "cases", [])]
            if children:
                for child in children:
                    visit(child)
            elif not_logic(stmt, lower):
                quiet.update(range(stmt.lineno, stmt.end_lineno + 1))

    visit(tree.body)
    return len(code), len(code - quiet)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", nargs="?", default=str(Path(__file__).resolve().parents[1] / "schedrl" / "cli"))
    parser.add_argument("--per-file", action="store_true", help="one line per module")
    args = parser.parse_args(argv)
    root = Path(args.dir)
    files = sorted(root.rglob("*.py"))
    if not files:
        print(f"error: no Python files under {root}", file=sys.stderr)
        return 2
    total_code = total_logic = 0
    for path in files:
        code, logic = count(path)
        total_code += code
        total_logic += logic
        if args.per_file:
            print(f"{path.relative_to(root)}: {code} code, {logic} logic")
    print(f"code lines: {total_code}")
    print(f"logic lines: {total_logic}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
