"""Only the engine writes a workflow's derived state (docs/decisions.md, "The map"): the
step, the entry instant, the fired columns, ``next_due_at``, the holder (``assignee``,
``assigned_at``), the SLA clocks (``sla_*``), and the derived tables: attempts, owed
effects, votes, queued runs, deliveries and the log (``WorkAttempt``, ``PendingEffect``,
``WorkflowVote``, ``QueuedRun``, ``EventDelivery``, ``TransitionLog``). Every other module
of the package reads them, and hands a write over to ``django_workflow.engine``; inside
the engine, SQL written by hand lives in ``engine/sql/`` alone.

The scan reads each module's syntax: a write call (``update``, ``bulk_update``,
``update_or_create``, ``delete``, ``save``, ``create``…) whose receiver comes from a
derived table, or whose values name a workflow column, directly or through a variable
assigned from one, is a write; so is a string holding an ``INSERT``, ``UPDATE`` or
``DELETE`` statement. It is a guard against a new writer, not a proof.
"""

import ast
import re

import pytest

from tests.helpers import ROOT

PACKAGE = ROOT / "django_workflow"

#: Where writes are expected, and why.
ALLOWED = {
    # The writer.
    "engine",
    # The package's own migrations create and alter these tables.
    "migrations",
}

#: What names the rows of a derived table, in a receiver.
ATTEMPT_ROWS = (
    "workattempt",
    "pendingeffect",
    "pending_effect",
    "retrying.rows",
    "attempts_read.rows",
    "workflowvote",
    "queuedrun",
    "eventdelivery",
    "transitionlog",
)
#: What names a workflow column, in the values written.
COLUMNS = (
    "next_due_at",
    "state_entered_at",
    "state_attribute",
    "state_column",
    "fired",
    "rearm",
    "assignee",
    "assigned_at",
    "sla_",
)
#: The modules whose functions return attempt rows to read.
ROW_READERS = ("attempts_read", "owed_effects_read")
ROW_WRITES = {
    "create",
    "bulk_create",
    "update",
    "bulk_update",
    "update_or_create",
    "get_or_create",
    "delete",
    "save",
}
COLUMN_WRITES = {"update", "bulk_update", "update_or_create", "get_or_create", "save"}


def _mentions(nodes, markers, tainted, words=()):
    """Whether ``nodes`` (or the keyword names ``words``) name a marker or a tainted variable."""
    text = " ".join([*(ast.unparse(node) for node in nodes), *words]).lower()
    names = {n.id for node in nodes for n in ast.walk(node) if isinstance(n, ast.Name)}
    return any(marker in text for marker in markers) or bool(names & tainted)


def _writes_columns(call, tainted):
    """Whether a write call's values name a column (``QuerySet.update`` takes keywords alone:
    a positional argument is a dict's or a set's ``update``)."""
    keywords = call.keywords
    values = [kw.value for kw in keywords] + ([] if call.func.attr == "update" else call.args)
    words = [kw.arg for kw in keywords if kw.arg]
    return _mentions(values, COLUMNS, tainted, words)


def _own_nodes(scope):
    """The nodes of ``scope``, less those of the functions defined in it (scopes of their own)."""
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            stack.extend(ast.iter_child_nodes(node))


def _tainted(nodes, attempt_rows=ATTEMPT_ROWS):
    """The variables assigned from attempt rows, and those assigned from column names (or
    from such variables), followed until nothing more is found."""
    assignments = []
    for node in nodes:
        if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign) and node.value:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            named = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            assignments.append((node.value, named))
    rows, columns, size = set(), set(), -1
    while size != len(rows) + len(columns):
        size = len(rows) + len(columns)
        for value, named in assignments:
            if _mentions([value], attempt_rows, rows):
                rows |= named
            if _mentions([value], COLUMNS, columns):
                columns |= named
    return rows, columns


def _row_sources(tree, scopes):
    """The markers of attempt rows in a module: the known ones, and ``name(`` for each of
    its functions returning them (``rows(model, db)`` in the module that defines it) and of
    each name imported from the modules that read them."""
    imported = {
        f"{alias.asname or alias.name}(".lower()
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").endswith(ROW_READERS)
        for alias in node.names
    }
    markers = (*ATTEMPT_ROWS, *imported)
    while True:
        found = {
            f"{scope.name.lower()}("
            for scope in scopes
            for node in _own_nodes(scope)
            if isinstance(node, ast.Return)
            and node.value is not None
            and _mentions([node.value], markers, _tainted(list(_own_nodes(scope)), markers)[0])
        }
        if found <= set(markers):
            return markers
        markers = (*markers, *found)


def writes(source, filename="<snippet>"):
    """``(line, what)`` of each write of derived state in ``source``."""
    found = []
    tree = ast.parse(source, filename)
    scopes = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    attempt_rows = _row_sources(tree, scopes)
    for scope in [tree, *scopes]:
        nodes = list(_own_nodes(scope))
        rows, columns = _tainted(nodes, attempt_rows)
        for node in nodes:
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            method = node.func.attr
            if method == "update" and not node.keywords:  # a dict's or a set's
                continue
            if method in ROW_WRITES and _mentions([node.func.value], attempt_rows, rows):
                found.append((node.lineno, f"attempt rows .{method}()"))
            elif method in COLUMN_WRITES and _writes_columns(node, columns):
                found.append((node.lineno, f"a workflow column .{method}()"))
    return sorted(set(found))


def modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE)
        if relative.parts[0] not in ALLOWED:
            yield relative


def test_no_module_outside_the_engine_writes_derived_state():
    found = [
        f"django_workflow/{module}:{line}: {what}"
        for module in modules()
        for line, what in writes((PACKAGE / module).read_text(), str(module))
    ]
    assert found == []


@pytest.mark.parametrize(
    "violation",
    [
        "def f(rows): rows.update(next_due_at=None)",
        "def f(rows, workflow): rows.update(**{workflow.state_attribute: 'done'})",
        "def f(model, records): model.objects.bulk_update(records, [NEXT_DUE_AT])",
        "def f(rows):\n    changes = {fired_column('a', 'b'): None}\n    rows.update(**changes)",
        "def f(record): record.save(update_fields=[STATE_ENTERED_AT])",
        "def f(rows, user): rows.update(assignee=user)",
        "def f(rows): rows.update(**{ASSIGNEE_ID: None, ASSIGNED_AT: None})",
        "def f(record): record.save(update_fields=['assignee', 'assigned_at'])",
        "def f(model, db): retrying.rows(model, db).filter(halted=True).delete()",
        "def f(model, db):\n    halted = retrying.rows(model, db)\n    halted.delete()",
        "from ..reading.attempts_read import rows\n"
        "def f(model, db): rows(model, db).update(halted=False)",
        "def f(): WorkAttempt.objects.create(work='step:x')",
        "def f(apps):\n    owed = apps.get_model('django_workflow', 'PendingEffect')\n"
        "    owed.objects.filter(step='a').update(step='b')",
    ],
)
def test_the_scan_sees_a_write(violation):
    assert writes(violation)


@pytest.mark.parametrize(
    "reading",
    [
        "def f(model, db): return retrying.rows(model, db).filter(halted=True).exists()",
        "def f(rows): return rows.filter(next_due_at__lte=now).values_list('pk')",
        "def f(record): record.save(update_fields=['title'])",
        "def f(rows): rows.update(title='x')",
        "def f(fired, rows): fired.update(rows)",
    ],
)
def test_the_scan_lets_reads_and_other_columns_be(reading):
    assert writes(reading) == []


#: A statement that writes, as SQL text: what only ``engine/sql/`` may hold.
SQL_WRITE = re.compile(
    r"\b(INSERT\s+INTO|DELETE\s+FROM)\b|^\s*UPDATE\s|\bUPDATE\s+\S+\s+SET\b", re.I
)


def _texts(tree):
    """``(line, text)`` of each string: an f-string's parts joined, its values as ``x``;
    docstrings aside."""
    skip = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            skip.add(id(body[0].value))
        if isinstance(node, ast.JoinedStr):
            skip.update(id(part) for part in node.values)
            parts = [p.value if isinstance(p, ast.Constant) else "x" for p in node.values]
            yield node.lineno, "".join(parts)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            yield node.lineno, node.value


def sql_writes(source, filename="<snippet>"):
    """``(line, text)`` of each string that holds a writing SQL statement."""
    tree = ast.parse(source, filename)
    return sorted((line, text[:60]) for line, text in _texts(tree) if SQL_WRITE.search(text))


def test_sql_that_writes_lives_in_engine_sql_alone():
    found = [
        f"django_workflow/{path.relative_to(PACKAGE)}:{line}: {text}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.relative_to(PACKAGE).parts[:2] != ("engine", "sql")
        and path.relative_to(PACKAGE).parts[0] != "migrations"
        for line, text in sql_writes(path.read_text())
    ]
    assert found == []


def test_the_hand_written_statements_are_seen_where_they_live():
    assert sql_writes((PACKAGE / "engine" / "sql" / "writes.py").read_text())


@pytest.mark.parametrize(
    "statement",
    [
        'SQL = "INSERT INTO django_workflow_transitionlog (step) VALUES (%s)"',
        "def f(table): return f'UPDATE {table} SET state = %s WHERE id = %s'",
        'def f(cursor): cursor.execute("DELETE FROM django_workflow_workflowvote")',
        'def f(t): return "update " + t + " set x = 1"',
    ],
)
def test_the_scan_sees_sql_that_writes(statement):
    assert sql_writes(statement)


def test_the_scan_lets_reading_sql_and_prose_be():
    assert sql_writes('SQL = "SELECT id FROM t FOR UPDATE SKIP LOCKED"') == []
    assert sql_writes('def f():\n    """One UPDATE and one INSERT INTO the log."""') == []
