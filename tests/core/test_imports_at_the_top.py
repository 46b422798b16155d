"""Imports sit at the top of a module, where a reader and import-linter see them. One inside
a function hides a dependency (and, before, a cycle between layers); it stays only where
a comment on its line or the line above says why (a heavy package only one path needs, a
registration that must wait for the app registry)."""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("reviews", "memory_portal")


def imports_inside_functions(source: str) -> list[tuple[int, bool]]:
    """(line, explained) of each import statement inside a function of ``source``."""
    lines = source.splitlines()
    found = {}  # by line: an import in a nested function is inside both functions
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for inner in ast.walk(node):
                if isinstance(inner, (ast.Import, ast.ImportFrom)):
                    line = lines[inner.lineno - 1]
                    above = lines[inner.lineno - 2].strip() if inner.lineno > 1 else ""
                    found[inner.lineno] = "#" in line or above.startswith("#")
    return sorted(found.items())


def test_an_import_inside_a_function_says_why():
    unexplained = [
        f"{path.relative_to(ROOT)}:{line}"
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        if "migrations" not in path.parts
        for line, explained in imports_inside_functions(path.read_text(encoding="utf-8"))
        if not explained
    ]
    assert not unexplained, f"imports inside functions without a comment saying why: {unexplained}"


def test_the_check_sees_an_unexplained_import_and_accepts_an_explained_one():
    source = (
        "def plain():\n"
        "    import json\n"
        "\n"
        "def explained():\n"
        "    # Imported here: only this path needs it.\n"
        "    import csv\n"
        "    import zlib  # heavy, and rarely used\n"
        "    def nested():\n"
        "        import gzip\n"
    )
    assert imports_inside_functions(source) == [(2, False), (6, True), (7, True), (9, False)]
