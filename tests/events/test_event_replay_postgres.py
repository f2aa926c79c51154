"""A provider's export replayed with ``manage.py workflow_deliver`` on PostgreSQL
(docs/events.md, "Replays"): ``WORKFLOW_REPLAY_SIZE`` deliveries (10,000 unless told;
the page quotes a run of 100,000), a fifth of them repeats and three in ten out of order,
numbered with ``seq``.

Per record, what was applied is what the sender intended, less the reports that came
after a newer one (``stale``): each applied once, with one log row, in rising ``seq``, so
no record ever goes back; every repeat is a ``duplicate``. The expected outcome of each
line is worked out here from the stream alone, line by line, as the page's "Ordering with
seq" and "Each event once" describe.
"""

import json
import os
import random
import time
from collections import Counter, defaultdict
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection

from django_workflow.models import EventDelivery, TransitionLog
from tests.testapp.models import Tracking

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="the replay runs on PostgreSQL"),
]

SIZE = int(os.environ.get("WORKFLOW_REPLAY_SIZE", "10000"))
DUPLICATES, REORDERED = 0.2, 0.3
#: Status reports the carrier sends per consignment, ``seq`` 1 to 8.
REPORTS = 8
EVENT = "carrier.status"


def report(number, seq):
    ref = f"trk_{number}"
    data = {"status": f"report {seq}"}
    return {"event": EVENT, "key": ref, "id": f"{ref}.{seq}", "data": data, "seq": seq}


def intended(consignments, rng):
    """Every consignment's reports in the sender's order, consignments interleaved."""
    turns = [number for number in range(consignments) for _ in range(REPORTS)]
    rng.shuffle(turns)
    sent = Counter()
    stream = []
    for number in turns:
        sent[number] += 1
        stream.append(report(number, sent[number]))
    return stream


def as_delivered(deliveries, size, rng):
    """``deliveries`` grown to ``size`` with repeats at random places, then three in ten
    lines moved (swapped in pairs)."""
    stream = list(deliveries)
    for _ in range(size - len(deliveries)):
        stream.insert(rng.randrange(len(stream) + 1), rng.choice(deliveries))
    for _ in range(int(size * REORDERED / 2)):
        i, j = rng.randrange(size), rng.randrange(size)
        stream[i], stream[j] = stream[j], stream[i]
    return stream


def expected(stream):
    """Each line's outcome, and per consignment the ids applied in order."""
    seen, highest = set(), defaultdict(int)
    outcomes, applied = [], defaultdict(list)
    for line in stream:
        if line["id"] in seen:
            outcomes.append("duplicate")
            continue
        seen.add(line["id"])
        if line["seq"] <= highest[line["key"]]:
            outcomes.append("stale")
            continue
        highest[line["key"]] = line["seq"]
        applied[line["key"]].append(line["id"])
        outcomes.append("applied")
    return outcomes, applied


def replayed(stream, path):
    """``workflow_deliver`` run on the stream written as JSON lines: what it said, and
    how long it took."""
    path.write_text("".join(json.dumps(line) + "\n" for line in stream))
    said = StringIO()
    started = time.monotonic()
    call_command("workflow_deliver", str(path), stdout=said)
    return said.getvalue().strip(), time.monotonic() - started


def test_a_replayed_export_applies_each_intended_report_once_and_never_goes_back(tmp_path, capsys):
    rng = random.Random(25)
    consignments = round(SIZE / (1 + DUPLICATES)) // REPORTS
    deliveries = intended(consignments, rng)
    unique = len(deliveries)
    stream = as_delivered(deliveries, SIZE, rng)
    Tracking.objects.bulk_create(Tracking(tracking_ref=f"trk_{n}") for n in range(consignments))
    outcomes, applied = expected(stream)

    said, seconds = replayed(stream, tmp_path / "export.jsonl")
    with capsys.disabled():
        print(f"\n{SIZE} deliveries replayed in {seconds:.1f} s ({SIZE / seconds:.0f}/s)")

    counts = Counter(outcomes)
    assert said == (
        f"{SIZE} delivered: {counts['applied']} applied, {counts['duplicate']} duplicate, "
        f"{counts['stale']} stale."
    )
    # The stream did what it was built for.
    assert counts["duplicate"] == SIZE - unique and counts["stale"] > 0.05 * SIZE
    # Every line's stored outcome is the expected one; repeats are duplicate rows.
    first = {}
    for line, outcome in zip(stream, outcomes, strict=True):
        first.setdefault(line["id"], outcome)
    rows = EventDelivery.objects.filter(event=EVENT).values_list("event_id", "outcome")
    stored = list(rows.iterator(chunk_size=10_000))
    assert {i: o for i, o in stored if o != "duplicate"} == first
    assert Counter(i for i, o in stored if o == "duplicate") == Counter(
        line["id"] for line, outcome in zip(stream, outcomes, strict=True) if outcome == "duplicate"
    )
    # Per consignment, the log holds one row per applied report, in the expected order.
    refs = dict(Tracking.objects.values_list("pk", "tracking_ref"))
    logged = defaultdict(list)
    log = TransitionLog.objects.filter(content_type__model="tracking", triggered_by="event")
    for object_id, name, moved, data in log.order_by("pk").values_list(
        "object_id", "transition_name", "to_state", "data"
    ):
        assert (name, moved, data["event"]) == ("report", "travelling", EVENT)
        logged[refs[int(object_id)]].append(data["id"])
    assert logged == applied
    # No consignment went back: applied seqs rise, and the last report sent holds.
    for ref, ids in logged.items():
        seqs = [int(event_id.rsplit(".", 1)[1]) for event_id in ids]
        assert seqs == sorted(set(seqs)), ref
    statuses = set(Tracking.objects.values_list("status", flat=True))
    assert statuses == {f"report {REPORTS}"}
