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
SCANNED = ("reviews", "memory_portal", "bench", "tests")
# The internals found in this code base before: each now has a public replacement.
# Each with an example line it must catch, so that a pattern that stopped matching fails too.
KNOWN_INTERNAL_EXAMPLES = {
    # DRF's dispatch and serializer internals: a view's own get() under DRF's dispatch.
    r"initialize_request\(": "self.request = self.initialize_request(request)",
    r"perform_content_negotiation\(": "self.perform_content_negotiation(request, force=True)",
    r"\bformat_kwarg\b": "self.format_kwarg = None",
    r"_writable_fields|_readable_fields": "def _writable_fields(self):",
    # django-csp, Django's messages and lazy objects: the libraries' own middlewares.
    r"\._csp_": "getattr(request, '_csp_nonce', None) or response._csp_exempt",
    r"request\._messages": "request._messages = storage",
    r"\._wrapped\b": "if messages._wrapped is empty:",
    # Django's database backend: the documented OPTIONS "server_side_binding".
    r"ServerBindingCursor|django\.db\.backends\.utils": "from django.db.backends.utils import CursorWrapper",
    # redis-py's connections: a client's or a pipeline's commands (xadd).
    r"\b(send_packed_command|pack_command|read_response)\(": "connection.send_packed_command([packed])",
    r"connection_pool\.connection_(class|kwargs)": "client.connection_pool.connection_class(**kwargs)",
    # drf-spectacular's AutoSchema: a postprocessing hook (SPECTACULAR_SETTINGS).
    r"_get_response_(bodies|for_code)": "responses = super()._get_response_bodies(direction)",
    # Django's OutputWrapper: its own isatty().
    r"[\"']_out[\"']|\._out\b": 'getattr(stream, "_out", sys.stderr)',
    # Django's connection wrapper: its transaction state is undocumented (the pending on_commit
    # callbacks, the savepoint stack, the rollback flags) and `transaction.get_connection()`
    # says it is private; reviews/transactions.py answers through the documented API.
    r"\.(run_on_commit|savepoint_ids|savepoint_state|needs_rollback|in_atomic_block|commit_on_exit"
    r"|closed_in_transaction|run_commit_hooks_on_set_autocommit_on|atomic_blocks)\b":
        "if connection.in_atomic_block and any(func == callback for _, func, _ in connection.run_on_commit):",
    r"\btransaction\.get_connection\(": "if transaction.get_connection().needs_rollback:",
    # Any base class's private method.
    r"\bsuper\(\)\._[a-z]": "return super()._build(value)",
}
KNOWN_INTERNALS = re.compile("|".join(f"(?:{pattern})" for pattern in KNOWN_INTERNAL_EXAMPLES))
# Underscored names their packages document as public API.
DOCUMENTED = {
    "_meta",  # Django: the Model _meta API
    "_default_manager", "_base_manager",  # Django: Model._default_manager, documented
    "_replace", "_asdict", "_fields", "_make", "_field_defaults",  # collections.namedtuple
    "_exit",  # os._exit
    "_missing_", "_generate_next_value_", "_value_", "_name_", "_ignore_",  # enum
    "_state",  # Django: Model._state (adding, db), documented with the model instance reference
}
# Built-ins that read an attribute named by a string: getattr(request, "_messages") is a read.
READING_BUILTINS = ("getattr", "hasattr")


def _sources() -> list[Path]:
    return sorted(
        path for folder in SCANNED for path in (ROOT / folder).rglob("*.py")
        if "migrations" not in path.parts and "vendor" not in path.parts
    )


def _project_sources() -> list[Path]:
    # Names the project defines may be read anywhere, tests' own helpers included.
    return _sources() + sorted((ROOT / "tests").rglob("*.py"))


def _named_reads(tree: ast.AST) -> list[ast.Constant]:
    """The attribute names given as text to getattr() or hasattr()."""
    return [
        node.args[1] for node in ast.walk(tree)
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) in READING_BUILTINS and len(node.args) > 1
        and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)
    ]


def _defined_names(tree: ast.AST) -> set[str]:
    names = set()
    read_by_name = {id(constant) for constant in _named_reads(tree)}  # a read defines nothing
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
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in read_by_name
              and re.fullmatch(r"_[a-z]\w*", node.value)):
            names.add(node.value)  # __slots__ entries, namedtuple field names
    return names


def _private_reads(tree: ast.AST) -> list[tuple[int, str]]:
    attributes = [(node.lineno, node.attr) for node in ast.walk(tree) if isinstance(node, ast.Attribute)]
    by_name = [(node.lineno, node.value) for node in _named_reads(tree)]
    return sorted((line, name) for line, name in attributes + by_name if re.fullmatch(r"_[a-z]\w*", name))


@pytest.mark.parametrize("pattern", KNOWN_INTERNAL_EXAMPLES)
def test_each_known_internal_pattern_catches_its_example(pattern):
    assert re.search(pattern, KNOWN_INTERNAL_EXAMPLES[pattern])


def test_no_known_internal_of_another_package_is_used():
    offenders = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in _sources()
        if path != Path(__file__).resolve()  # the patterns' own examples
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if KNOWN_INTERNALS.search(line)
    ]
    assert offenders == []


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
    # Named as text, it is a read all the same, and does not count as the project's own name.
    tree = ast.parse("def f(request):\n    return getattr(request, '_messages', None)\n")
    assert _private_reads(tree) == [(2, "_messages")]
    assert "_messages" not in _defined_names(tree)
