"""The code uses other packages through their public API only.

A private attribute of Django, DRF, django-csp, redis-py or any other package (a name with a
leading underscore), or a copy of one of their internal classes, breaks silently or loudly
at the next minor upgrade. Two checks hold the rule: a list of the internals this project
once leaned on, and a general one: every `obj._name` the code reads must name something the
project itself defines (a function, class, attribute or field), or be one of the few names
with a leading underscore that their package documents as public.
"""
import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Issue 37, part 1 removes the uses still present (the recall view's replay of DRF's dispatch,
# FlatQuerySerializer, the middleware's django-csp and messages internals, hotpath.py); strict,
# so the mark has to go in the same change that makes these pass.
STILL_PRESENT = pytest.mark.xfail(strict=True, reason="issue 37 part 1: internals still used on main")
SCANNED = ("reviews", "memory_portal", "bench")
# The internals found in this code base before: each now has a public replacement.
KNOWN_INTERNALS = re.compile(
    r"_writable_fields|initialize_request\(|perform_content_negotiation\(|\._csp_|request\._messages"
    r"|\._wrapped\b|ServerBindingCursor"
)
# Underscored names their packages document as public API.
DOCUMENTED = {
    "_meta",  # Django: the Model _meta API
    "_default_manager", "_base_manager",  # Django: Model._default_manager, documented
    "_replace", "_asdict", "_fields", "_make", "_field_defaults",  # collections.namedtuple
    "_exit",  # os._exit
    "_missing_", "_generate_next_value_", "_value_", "_name_", "_ignore_",  # enum
}


def _sources() -> list[Path]:
    return sorted(
        path for folder in SCANNED for path in (ROOT / folder).rglob("*.py")
        if "migrations" not in path.parts
    )


def _project_sources() -> list[Path]:
    # Names the project defines may be read anywhere, tests' own helpers included.
    return _sources() + sorted((ROOT / "tests").rglob("*.py"))


def _defined_names(tree: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for leaf in ast.walk(target):
                    if isinstance(leaf, ast.Attribute):
                        names.add(leaf.attr)
                    elif isinstance(leaf, ast.Name):
                        names.add(leaf.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "setattr" and len(node.args) > 1:
            if isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str):
                names.add(node.args[1].value)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and re.fullmatch(r"_[a-z]\w*", node.value):
            names.add(node.value)  # __slots__ entries, namedtuple field names
    return names


def _private_reads(tree: ast.AST) -> list[tuple[int, str]]:
    return [
        (node.lineno, node.attr)
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and re.fullmatch(r"_[a-z]\w*", node.attr)
    ]


@STILL_PRESENT
def test_no_known_internal_of_another_package_is_used():
    offenders = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in _sources()
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if KNOWN_INTERNALS.search(line)
    ]
    assert offenders == []


@STILL_PRESENT
def test_every_private_attribute_read_is_the_projects_own():
    defined = set(DOCUMENTED)
    for path in _project_sources():
        defined |= _defined_names(ast.parse(path.read_text(), str(path)))
    offenders = [
        f"{path.relative_to(ROOT)}:{line}: .{name}"
        for path in _sources()
        for line, name in _private_reads(ast.parse(path.read_text(), str(path)))
        if name not in defined
    ]
    assert offenders == []


def test_the_general_check_catches_a_private_read_of_another_package():
    # The check must not be vacuous: a read of DRF's private field cache is caught.
    tree = ast.parse("def f(serializer):\n    return serializer._declared_fields\n")
    assert _private_reads(tree) == [(2, "_declared_fields")]
    assert "_declared_fields" not in _defined_names(tree)
