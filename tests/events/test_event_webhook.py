"""Events over HTTP and replays from a file (docs/events.md): the webhook checks the
HMAC-SHA256 signature in constant time and answers 401/400/413/202; ``workflow_deliver``
delivers JSON lines."""

import hashlib
import hmac
import json

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from django_workflow import deliver
from django_workflow.models import EventDelivery
from tests.testapp.models import Payment

pytestmark = pytest.mark.django_db

URL = "/hooks/events/"
SECRET = "whsec_test"


@pytest.fixture(autouse=True)
def secret(settings):
    settings.DJANGO_WORKFLOW = {"EVENT_SECRET": SECRET, "EVENT_MAX_BODY": 2048}


@pytest.fixture
def payment():
    return Payment.objects.create(psp_ref="pay_1")


def signed(body, secret=SECRET):
    return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def post(body, signature=None, client=None):
    body = body if isinstance(body, bytes) else json.dumps(body).encode()
    headers = {} if signature is None else {"X-Workflow-Signature": signature}
    client = client or Client(enforce_csrf_checks=True)
    return client.post(URL, body, content_type="application/json", headers=headers)


EVENT = {"event": "psp.authorised", "key": "pay_1", "id": "evt_1"}


def test_a_signed_event_is_delivered_without_a_csrf_token(payment):
    body = json.dumps(EVENT).encode()
    response = post(body, signed(body))

    assert response.status_code == 202
    assert response.json() == {"outcome": "applied", "record": payment.pk}
    assert Payment.objects.get(pk=payment.pk).state == "authorised"


def test_the_signature_may_name_its_algorithm(payment):
    body = json.dumps(EVENT).encode()
    assert post(body, f"sha256={signed(body)}").status_code == 202


def test_a_repeat_answers_duplicate(payment):
    body = json.dumps(EVENT).encode()
    post(body, signed(body))
    assert post(body, signed(body)).json() == {"outcome": "duplicate", "record": payment.pk}


def test_a_buffered_event_names_no_record():
    body = json.dumps({**EVENT, "key": "pay_later", "data": {}, "seq": 1}).encode()
    assert post(body, signed(body)).json() == {"outcome": "buffered", "record": None}


@pytest.mark.parametrize(
    "signature",
    [None, "", "0" * 64, signed(b"another body"), signed(json.dumps(EVENT).encode(), "wrong")],
)
def test_an_unsigned_or_badly_signed_request_is_refused_and_changes_nothing(payment, signature):
    response = post(EVENT, signature)

    assert response.status_code == 401
    assert response["WWW-Authenticate"] == 'HMAC-SHA256 header="X-Workflow-Signature"'
    assert not EventDelivery.objects.exists()
    assert Payment.objects.get(pk=payment.pk).state == "pending"


def test_without_a_secret_every_request_is_refused(settings, payment):
    settings.DJANGO_WORKFLOW = {}
    body = json.dumps(EVENT).encode()
    assert post(body, signed(body, "")).status_code == 401


@pytest.mark.parametrize(
    "body, said",
    [
        (b"{not json", "not JSON"),
        (b"[1, 2]", "JSON object"),
        (json.dumps({"event": "psp.authorised", "key": "pay_1"}).encode(), "missing: id,"),
        (json.dumps({**EVENT, "extra": 1}).encode(), "unknown: extra."),
        (json.dumps({**EVENT, "event": "psp.nothing"}).encode(), "psp.nothing"),
        (json.dumps({**EVENT, "seq": "first"}).encode(), "seq"),
    ],
)
def test_a_signed_body_that_holds_no_deliverable_event_is_a_bad_request(payment, body, said):
    response = post(body, signed(body))

    assert response.status_code == 400 and said in response.json()["error"]
    assert not EventDelivery.objects.exists()


def test_a_body_over_the_limit_is_refused_unread(payment):
    body = json.dumps({**EVENT, "data": {"note": "x" * 3000}}).encode()
    assert post(body, signed(body)).status_code == 413
    assert not EventDelivery.objects.exists()


def test_only_post_is_answered():
    assert Client().get(URL).status_code == 405


def test_a_replay_delivers_each_line_in_order(tmp_path, payment, capsys):
    lines = [
        {"event": "psp.authorised", "key": "pay_1", "id": "a1"},
        {"event": "psp.authorised", "key": "pay_1", "id": "a1"},
        {"event": "psp.settled", "key": "pay_1", "id": "s1", "data": {"settled_amount": 5}},
        {"event": "psp.refunded", "key": "pay_9", "id": "r1"},
    ]
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n\n")

    call_command("workflow_deliver", str(path))

    assert capsys.readouterr().out.strip() == "4 delivered: 2 applied, 1 duplicate, 1 unmatched."
    assert Payment.objects.get(pk=payment.pk).settled_amount == 5


def test_a_replay_reports_unreadable_lines_and_delivers_the_others(tmp_path, payment, capsys):
    path = tmp_path / "events.jsonl"
    path.write_text('{"event": "psp.authorised"\n' + json.dumps(EVENT) + "\n")

    with pytest.raises(CommandError, match="1 line"):
        call_command("workflow_deliver", str(path))

    captured = capsys.readouterr()
    assert captured.err.startswith("line 1:") and "1 applied" in captured.out
    assert Payment.objects.get(pk=payment.pk).state == "authorised"


def test_a_replay_lists_a_line_of_no_utf8_and_a_seq_beyond_64_bits_and_goes_on(
    tmp_path, payment, capsys
):
    # Release 3 stopped at the first (UnicodeDecodeError, OverflowError): the rest was lost.
    path = tmp_path / "events.jsonl"
    huge = json.dumps({**EVENT, "id": "x1", "seq": -(10**30)}).encode()
    path.write_bytes(b'{"event": "\xff\xfe"}\n' + huge + b"\n" + json.dumps(EVENT).encode())

    with pytest.raises(CommandError, match="2 line"):
        call_command("workflow_deliver", str(path))

    captured = capsys.readouterr()
    assert [line[:7] for line in captured.err.splitlines()] == ["line 1:", "line 2:"]
    assert "seq is a whole number of at most 64 bits" in captured.err
    assert "1 applied" in captured.out
    assert Payment.objects.get(pk=payment.pk).state == "authorised"


def test_a_replay_of_a_missing_file_is_an_error(tmp_path):
    with pytest.raises(CommandError, match="Cannot read"):
        call_command("workflow_deliver", str(tmp_path / "nothing.jsonl"))


def test_buffered_events_are_looked_at_again_on_demand(time_machine, capsys):
    time_machine.move_to("2026-03-02 09:00Z", tick=False)
    keyless = Payment.objects.create(psp_ref="pay_draft")
    deliver("psp.authorised", "pay_1", id="a1")  # its record does not hold the key yet
    deliver("psp.authorised", "pay_gone", id="g1")  # no record will ever come
    Payment.objects.filter(pk=keyless.pk).update(psp_ref="pay_1")  # no move: no hook
    time_machine.move_to("2026-03-02 12:00Z", tick=False)
    call_command("workflow_deliver", "--buffered")
    time_machine.move_to("2026-03-03 10:00Z", tick=False)
    call_command("workflow_deliver", "--buffered")

    assert capsys.readouterr().out.splitlines() == [
        "2 buffered: 1 applied, 1 buffered.",
        "1 buffered: 1 expired.",
    ]
    assert Payment.objects.get(pk=keyless.pk).state == "authorised"
    outcomes = dict(EventDelivery.objects.values_list("event_id", "outcome"))
    assert outcomes == {"a1": "applied", "g1": "expired"}


def test_the_command_wants_a_file_or_buffered():
    with pytest.raises(CommandError, match="not both"):
        call_command("workflow_deliver")


def test_only_event_max_body_decides_how_large_a_body_may_be(settings, payment):
    # Release 3 read request.body: past DATA_UPLOAD_MAX_MEMORY_SIZE (2.5 MiB) Django
    # answered its own HTML 400 whatever EVENT_MAX_BODY said.
    settings.DJANGO_WORKFLOW = {"EVENT_SECRET": SECRET, "EVENT_MAX_BODY": 4 * 2**20}
    body = json.dumps(EVENT).encode() + b" " * (3 * 2**20)  # JSON allows the blanks
    response = post(body, signed(body))
    assert response.status_code == 202 and response.json()["outcome"] == "applied"
    settings.DJANGO_WORKFLOW = {"EVENT_SECRET": SECRET, "EVENT_MAX_BODY": 2**20}
    response = post(body, signed(body))
    assert response.status_code == 413 and response.json()["error"].startswith("The body is")


def test_a_replay_reads_standard_input_even_when_it_is_a_text_stream(monkeypatch, payment, capsys):
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(EVENT) + "\n"))
    call_command("workflow_deliver", "-")
    assert capsys.readouterr().out.strip() == "1 delivered: 1 applied."
