"""Types for the generated API (docs/types.md): mypy with the plugin, and pyright with the
stubs ``manage.py workflow_stubs`` writes, accept the good calls of a snippet and report
each bad one (an undeclared transition, a wrong keyword, a state that is no step).

The real tools run as subprocesses over the example project's models."""

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import models

from django_workflow import Step, Transition, WorkflowModel
from django_workflow.management.commands.workflow_stubs import stub_path
from django_workflow.stubs.surface import surface
from django_workflow.stubs.writing import module_stub
from django_workflow.workflow_model import WorkflowQuerySet
from tests.helpers import ROOT

REPO = ROOT
BIN = Path(sys.executable).parent
#: The type checkers read no database: they run once, in the SQLite pass.
ON_POSTGRES = os.environ.get("WORKFLOW_TEST_DB") == "postgres"

# Each bad line ends with `# bad: <what is wrong>`, a key of EXPECTED.
SNIPPET = """\
from datetime import datetime

from example_project.approvals.models import Document
from example_project.support.models import Ticket
from tests.testapp.models import AbstractReview, Article, CandidateProxy, UrgentReview


def good(doc: Document, ticket: Ticket, user: object) -> None:
    doc.submit(user, comment="Ready")
    doc.transition("approve", user, data={"round": 1})
    ticket.triage(priority="urgent", comment="Customer is down")
    ticket.claim(user)
    ticket.assign(None, actor=user)
    Document.objects.actionable_by(user).transition("submit", user)
    Document.objects.filter(title="Plan").transition("request_changes")
    doc.remind_approvers()
    if doc.state == "in_review":
        due: datetime | None = doc.next_due_at
        print(due, ticket.waiting_on_customer_customer_reminder_fired_count)


def good_own_and_inherited(article: Article, review: UrgentReview) -> None:
    article.state = "any text: the model declares its own state field"
    article.publish()
    review.refuse(comment="Out of scope")  # declared on an abstract base, two classes up
    review.transition("accept")


def good_abstract(review: AbstractReview) -> None:
    review.accept()
    if review.state == "submitted":
        review.transition("refuse", comment="Typed with the abstract base")


async def good_async(doc: Document) -> Document:
    return await doc.atransition("submit", comment="Ready")


def bad(doc: Document, ticket: Ticket) -> None:
    doc.sumbit()  # bad: undeclared
    doc.transition("sumbit")  # bad: undeclared by name
    ticket.triage(priorty="urgent")  # bad: wrong keyword
    ticket.triage(priority=2)  # bad: wrong value for the field
    doc.state = "drafted"  # bad: no such step
    Document.objects.transition("sumbit")  # bad: undeclared in bulk


def bad_inherited(review: UrgentReview, candidate: CandidateProxy) -> None:
    review.transition("publish")  # bad: another model's transition
    candidate.transition("publish")  # bad: undeclared on a proxy


async def bad_async(ticket: Ticket) -> None:
    await ticket.atransition("triage", priorty="urgent")  # bad: wrong keyword, async
"""


STEPS = "Literal['draft', 'in_review', 'approved', 'expired']"
#: What is wrong on a bad line: part of mypy's message, part of pyright's.
EXPECTED = {
    "undeclared": (
        '"Document" has no attribute "sumbit"',
        'Cannot access attribute "sumbit" for class "Document"',
    ),
    "undeclared by name": (
        'Argument 1 to "transition" of "WorkflowModel" has incompatible type '
        "\"Literal['sumbit']\"; expected \"Literal['submit', 'approve', 'request_changes']\"",
        'Argument of type "Literal[\'sumbit\']" cannot be assigned to parameter "name"',
    ),
    "wrong keyword": (
        'Unexpected keyword argument "priorty" for "triage" of "Ticket"',
        'No parameter named "priorty"',
    ),
    "wrong value for the field": (
        'Argument "priority" to "triage" of "Ticket" has incompatible type "int"; expected "str"',
        'Argument of type "Literal[2]" cannot be assigned to parameter "priority" of type "str"',
    ),
    "no such step": (
        f'expression has type "Literal[\'drafted\']", variable has type "{STEPS}"',
        f'Type "Literal[\'drafted\']" is not assignable to type "{STEPS}"',
    ),
    "undeclared in bulk": (
        'Argument 1 to "transition" of "WorkflowQuerySet" has incompatible type '
        "\"Literal['sumbit']\"",
        'Argument of type "Literal[\'sumbit\']" cannot be assigned to parameter "name"',
    ),
    "another model's transition": (
        'Argument 1 to "transition" of "WorkflowModel" has incompatible type '
        "\"Literal['publish']\"; expected \"Literal['accept', 'refuse']\"",
        'Argument of type "Literal[\'publish\']" cannot be assigned to parameter "name"',
    ),
    "undeclared on a proxy": (
        'Argument 1 to "transition" of "WorkflowModel" has incompatible type '
        "\"Literal['publish']\"",
        'Argument of type "Literal[\'publish\']" cannot be assigned to parameter "name"',
    ),
    "wrong keyword, async": (
        'Unexpected keyword argument "priorty" for "atransition" of "WorkflowModel"',
        'No overloads for "atransition" match the provided arguments',
    ),
}


def expected(tool: str) -> dict[int, str]:
    """The bad lines (1-based) and the part of the message ``tool`` must report there."""
    found = {}
    for number, line in enumerate(SNIPPET.splitlines(), start=1):
        match = re.search(r"# bad: (.*)$", line)
        if match:
            found[number] = EXPECTED[match.group(1)][0 if tool == "mypy" else 1]
    return found


def assert_reports(tool: str, errors: dict[int, list[str]]) -> None:
    wanted = expected(tool)
    assert set(errors) == set(wanted), f"{tool} reported {errors}"
    for line, part in wanted.items():
        assert any(part in message for message in errors[line]), (tool, line, errors[line])


@pytest.mark.skipif(ON_POSTGRES, reason="the type checkers read no database (SQLite pass)")
def test_mypy_with_the_plugin_accepts_the_good_calls_and_reports_each_bad_one(tmp_path):
    (tmp_path / "snippet.py").write_text(SNIPPET)
    (tmp_path / "mypy.ini").write_text(
        # The imported modules' own code is test.sh's to check: only the snippet reports.
        "[mypy]\nstrict = True\nfollow_imports = silent\n"
        f"mypy_path = {REPO}\ncache_dir = {tmp_path / 'cache'}\n"
        "plugins = mypy_django_plugin.main, django_workflow.mypy\n"
        "[mypy.plugins.django-stubs]\ndjango_settings_module = tests.settings\n"
    )
    result = run([BIN / "mypy", "--config-file", "mypy.ini", "snippet.py"], tmp_path)

    errors: dict[int, list[str]] = {}
    for line in result.stdout.splitlines():
        match = re.match(r"snippet\.py:(\d+): error: (.*)", line)
        if match:
            errors.setdefault(int(match.group(1)), []).append(match.group(2))
    assert "error:" in result.stdout, result.stdout + result.stderr
    assert_reports("mypy", errors)


@pytest.mark.skipif(ON_POSTGRES, reason="the type checkers read no database (SQLite pass)")
def test_the_mypy_plugin_alone_sets_django_up_from_django_stubs_setting(tmp_path):
    (tmp_path / "snippet.py").write_text(
        "from example_project.approvals.models import Document\n"
        "\n"
        "def move(doc: Document) -> None:\n"
        "    doc.submit(comment='Ready')\n"
        "    doc.sumbit()\n"
    )
    (tmp_path / "mypy.ini").write_text(
        f"[mypy]\nfollow_imports = silent\nmypy_path = {REPO}\n"
        f"cache_dir = {tmp_path / 'cache'}\nplugins = django_workflow.mypy\n"
        "[mypy.plugins.django-stubs]\ndjango_settings_module = example_project.settings\n"
    )
    environment = {"DJANGO_SETTINGS_MODULE": ""}  # the config file's setting, not this
    result = run([BIN / "mypy", "--config-file", "mypy.ini", "snippet.py"], tmp_path, environment)

    assert result.stdout.splitlines()[:-1] == [
        'snippet.py:5: error: "Document" has no attribute "sumbit"; maybe "submit"?  [attr-defined]'
    ], result.stdout + result.stderr


@pytest.mark.skipif(ON_POSTGRES, reason="the type checkers read no database (SQLite pass)")
def test_mypy_rechecks_a_model_whose_declaration_changed_in_another_module(tmp_path):
    shutil.copytree(REPO / "example_project", tmp_path / "example_project")
    approvals = tmp_path / "example_project" / "approvals"
    (approvals / "names.py").write_text('SUBMIT = "submit"\n')
    source = (approvals / "models.py").read_text()
    source = source.replace('Transition("submit"', "Transition(SUBMIT")
    source = source.replace(
        "from django.db import models\n",
        "from django.db import models\n\nfrom .names import SUBMIT\n",
    )
    (approvals / "models.py").write_text(source)
    (tmp_path / "snippet.py").write_text(
        "from example_project.approvals.models import Document\n"
        "\n"
        "def move(doc: Document) -> None:\n"
        "    doc.submit()\n"
    )
    (tmp_path / "mypy.ini").write_text(
        f"[mypy]\nfollow_imports = silent\nmypy_path = {tmp_path}:{REPO}\n"
        f"cache_dir = {tmp_path / 'cache'}\n"
        "plugins = mypy_django_plugin.main, django_workflow.mypy\n"
        "[mypy.plugins.django-stubs]\ndjango_settings_module = example_project.settings\n"
    )
    mypy = [BIN / "mypy", "--config-file", "mypy.ini", "snippet.py"]
    assert "Success" in run(mypy, tmp_path).stdout

    (approvals / "names.py").write_text('SUBMIT = "send_for_review"\n')  # models.py unchanged
    result = run(mypy, tmp_path)

    assert 'snippet.py:4: error: "Document" has no attribute "submit"' in result.stdout, (
        result.stdout + result.stderr
    )


@pytest.mark.skipif(ON_POSTGRES, reason="the type checkers read no database (SQLite pass)")
def test_pyright_with_stubs_beside_the_modules_accepts_the_good_calls_and_reports_each_bad_one(
    tmp_path,
):
    pyright = pyright_or_skip(tmp_path)
    for package in ("example_project", "tests"):
        shutil.copytree(REPO / package, tmp_path / package)
    run([sys.executable, "-m", "django", "workflow_stubs"], tmp_path)
    assert (tmp_path / "example_project" / "support" / "models.pyi").exists()
    assert (tmp_path / "tests" / "testapp" / "models" / "people.pyi").exists()
    (tmp_path / "snippet.py").write_text(SNIPPET)
    config = {"include": ["snippet.py"], "extraPaths": [str(REPO)], "typeCheckingMode": "basic"}
    (tmp_path / "pyrightconfig.json").write_text(json.dumps(config))

    result = run([pyright, "--outputjson", "--pythonpath", sys.executable], tmp_path)

    errors: dict[int, list[str]] = {}
    for diagnostic in json.loads(result.stdout)["generalDiagnostics"]:
        if diagnostic["severity"] == "error":
            line = diagnostic["range"]["start"]["line"] + 1
            errors.setdefault(line, []).append(diagnostic["message"])
    assert_reports("pyright", errors)


def test_workflow_stubs_check_fails_on_missing_or_stale_stubs_and_writes_nothing(tmp_path):
    with pytest.raises(CommandError, match="missing or out of date"):
        call_command("workflow_stubs", out=str(tmp_path), check=True)
    assert not any(tmp_path.iterdir())

    call_command("workflow_stubs", out=str(tmp_path))
    stub = tmp_path / "example_project" / "approvals" / "models.pyi"
    assert 'state: _wf_typing.Literal["draft", "in_review", "approved", "expired"]' in (
        stub.read_text()
    )
    call_command("workflow_stubs", out=str(tmp_path), check=True)  # up to date: no error

    stub.write_text(stub.read_text().replace('"expired"', '"lapsed"'))
    with pytest.raises(CommandError, match=re.escape(str(stub))):
        call_command("workflow_stubs", out=str(tmp_path), check=True)
    assert '"lapsed"' in stub.read_text()


def test_a_member_the_model_declares_itself_stays_as_written_in_the_stub(tmp_path):
    call_command("workflow_stubs", out=str(tmp_path))
    stub = (tmp_path / "tests" / "testapp" / "models" / "people.pyi").read_text()

    article = class_body(stub, "Article")  # declares its own `state` CharField
    assert [line for line in article if re.match(r" *state\b", line)] == [
        '    state = models.CharField(max_length=30, default="draft", db_index=True)'
    ]
    assert "    def publish(self, actor: _wf_typing.Any = ..." in "\n".join(article)


class ParcelQuerySet(WorkflowQuerySet):
    def heavy(self) -> "ParcelQuerySet":
        return self.filter(weight__gt=20)


class OwnManagerBase(WorkflowModel):
    objects = models.Manager.from_queryset(ParcelQuerySet)()

    class Meta:
        abstract = True


OWN_MANAGER_SOURCE = """
class Parcel(OwnManagerBase):
    weight = models.IntegerField()

    class Workflow:
        packed = Step(Transition("ship", to="shipped"))
        shipped = Step()
"""


def test_a_manager_of_the_projects_keeps_its_type_where_the_default_one_gets_the_models(declare):
    workflow = type(
        "Workflow",
        (),
        {"packed": Step(Transition("ship", to="shipped")), "shipped": Step()},
    )
    inherited = declare(workflow, weight=models.IntegerField())
    own = type(
        "Parcel",
        (OwnManagerBase,),
        {
            "__module__": __name__,
            "Meta": type("Meta", (), {"app_label": "testapp"}),
            "Workflow": workflow,
            "weight": models.IntegerField(),
        },
    )
    source = OWN_MANAGER_SOURCE.replace("Parcel(OwnManagerBase)", f"{inherited.__name__}(Base)")
    default_stub = module_stub(source, "models.py", __name__, [surface(inherited)])
    own_stub = module_stub(OWN_MANAGER_SOURCE, "models.py", __name__, [surface(own)])

    assert f"    objects: _wf_typing.ClassVar[_{inherited.__name__}WorkflowManager]" in (
        default_stub
    )
    assert "objects" not in "\n".join(class_body(own_stub, "Parcel"))
    assert "WorkflowManager" not in own_stub
    assert "    def ship(self, actor: _wf_typing.Any = ..." in own_stub


def test_a_models_package_gets_its_stub_as_the_package_init_under_out():
    package = Path("src/shop/models/__init__.py")
    module = Path("src/shop/models.py")

    assert stub_path("shop.models", package, Path("typings")) == Path(
        "typings/shop/models/__init__.pyi"
    )
    assert stub_path("shop.models", module, Path("typings")) == Path("typings/shop/models.pyi")
    assert stub_path("shop.models", package, None) == Path("src/shop/models/__init__.pyi")


def class_body(stub: str, name: str) -> list[str]:
    node = next(n for n in ast.parse(stub).body if getattr(n, "name", None) == name)
    return stub.splitlines()[node.lineno : node.end_lineno]


def pyright_or_skip(tmp_path: Path) -> Path:
    """pyright's pip package fetches a Node.js runtime on first use; without one (no
    network), the pyright test is skipped, saying why."""
    pyright = BIN / "pyright"
    if not pyright.exists():
        pytest.skip("pyright is not installed (pip install pyright, in the dev extra)")
    try:
        probe = subprocess.run(
            [pyright, "--version"], capture_output=True, text=True, timeout=300, cwd=tmp_path
        )
    except subprocess.TimeoutExpired:
        pytest.skip("pyright could not fetch its Node.js runtime within 5 minutes")
    if probe.returncode != 0:
        pytest.skip(f"pyright cannot run here (its Node.js runtime?): {probe.stderr.strip()}")
    return pyright


def run(command: list, cwd: Path, environment: dict | None = None) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(cwd), str(REPO)]),
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        **(environment or {}),
    }
    return subprocess.run(
        [str(part) for part in command], cwd=cwd, env=env, capture_output=True, text=True
    )
