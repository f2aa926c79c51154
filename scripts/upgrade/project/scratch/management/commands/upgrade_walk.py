"""``manage.py upgrade_walk SNAPSHOT``: after the upgrade, walk time forward from NOW.

First the database is compared with the snapshot the old release wrote (the upgrade
itself must change no record), then the tasks the old release queued in django-q2's ORM
broker run as a worker would run them, then ``workflow_worker --once`` runs at each
instant of the walk (the clock moved by time_machine), and each record is checked:
nothing lost (each owed effect runs once, each due deadline fires once, the buffered
event is applied once the earlier one arrives, the vote completes, the claim and the SLA
clock are kept), nothing twice (log rows counted) and nothing early (nothing fires a
second before its instant). Exits 1 listing every failed assertion.
"""

import io
import json
import logging
import pydoc
import sys
import traceback
from datetime import timedelta
from pathlib import Path

import time_machine
from django.apps import apps
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand

from django_workflow import AlreadyVoted, WorkflowPermissionDenied, deliver
from scratch.state import NOW, differences, log_rows, package_model, record, snapshot, summary

#: What each record's log gains after the upgrade, (trigger, transition name) in order.
#: Fewer rows is something lost, more is something done twice.
NEW_LOG_ROWS = {
    "Reminder:early": [("timeout", "nudge")],
    "Reminder:late": [("timeout", "nudge")],
    "Digest:mid-series": [("timeout", "tick")] * 3,
    "Job:halted": [],
    "Job:flaky": [("automatic", "work")],
    "Parcel:effect-ran": [],
    "Parcel:effect-owed": [("timeout", "on_enter")],
    "Parcel:moved-on": [("timeout", "on_enter"), ("timeout", "on_enter")],
    "Document:one-vote": [("vote", "approve"), ("manual", "approve")],
    "Document:to-withdraw": [("vote", "approve")],
    "Ticket:held": [("assignment", "release")],
    "Case:sla": [("timeout", "resolution.warn"), ("timeout", "resolution.breach")],
    "Payment:pay_1": [("event", "authorise"), ("event", "settle")],
    "Article:retracted-before": [],
    "Article:retract-after": [("manual", "retract")],
}


def seconds(delta):
    return int(delta.total_seconds())


class Command(BaseCommand):
    help = "Walk time forward after the upgrade and check every record's state."
    requires_system_checks = []  # `check` is a step of its own in scripts/upgrade.sh

    def add_arguments(self, parser):
        parser.add_argument("snapshot")

    def handle(self, *args, **options):
        self.before = json.loads(Path(options["snapshot"]).read_text())
        self.failures = []
        self.when = "NOW"
        self._show_workflow_log()
        with time_machine.travel(NOW, tick=False) as clock:
            self.clock = clock
            try:
                self.walk()
            except Exception:  # the rest of the walk depends on what raised: reported here
                self.stdout.write(traceback.format_exc())
                self.check(False, f"the walk stopped: {traceback.format_exc().splitlines()[-1]}")
        if self.failures:
            self.stdout.write(f"  {len(self.failures)} assertion(s) failed:")
            for failure in self.failures:
                self.stdout.write(f"    - {failure}")
            sys.exit(1)
        self.stdout.write("  every assertion held")

    # The walk -------------------------------------------------------------------------

    def walk(self):
        self.step(timedelta(0), "before any work: the upgrade kept every record as it was")
        found = differences(self.before, snapshot())
        self.check(
            not found,
            "the database after migrate holds what the old release left",
            f"CHANGED BY THE UPGRADE ({len(found)} difference(s) below)",
        )
        for line in found[:20]:
            self.stdout.write(f"      changed: {line}")

        self.step(timedelta(0), "the tasks the old release queued, run as a worker runs them")
        self.run_queued_tasks()
        self.step(timedelta(0), "the upgraded worker's first start (workflow_worker --once)")
        self.worker()
        self.now_checks()

        self.step(timedelta(minutes=5, seconds=59), "a second before job 'flaky''s retry")
        self.worker()
        self.job("flaky", step="running", runs=0, why="its retry is due at NOW+6m", early=True)
        self.step(timedelta(minutes=6), "job 'flaky''s retry is due")
        self.worker()
        self.job("flaky", step="done", runs=1, why="attempt 2 of 3 runs and succeeds")
        self.job("halted", step="running", runs=0, why="halted before the upgrade")

        self.step(timedelta(minutes=9, seconds=59), "a second before the digest's third tick")
        self.worker()
        self.amount(
            "Digest", "mid-series", "ticks", 2, "ticks (the third is due at NOW+10m)", early=True
        )
        self.step(timedelta(minutes=10), "the digest's third tick")
        self.worker()
        self.amount("Digest", "mid-series", "ticks", 3, "ticks, the third at NOW+10m")
        self.amount("Digest", "mid-series", "active_tick_fired_count", 3, "the every's count")

        self.step(timedelta(minutes=29, seconds=59), "a second before reminder 'late' is due")
        self.worker()
        self.amount("Reminder", "late", "nudges", 0, "nudges (due at NOW+30m)", early=True)
        self.step(timedelta(minutes=30), "reminder 'late' is due")
        self.worker()
        self.amount("Reminder", "late", "nudges", 1, "nudges, fired at NOW+30m")
        self.instant("Reminder", "late", "waiting_nudge_fired_at", NOW + timedelta(minutes=30))
        self.amount("Reminder", "early", "nudges", 1, "nudges (fired at NOW, not again)")

        self.step(timedelta(hours=1), "people and events act after the upgrade")
        self.worker()
        self.people_act()

        self.step(timedelta(hours=1, minutes=10), "the digest's fourth tick")
        self.worker()
        self.amount("Digest", "mid-series", "ticks", 4, "ticks")
        self.step(timedelta(hours=1, minutes=59, seconds=59), "a second before the SLA warning")
        self.worker()
        self.sla(consumed=timedelta(hours=3, minutes=59, seconds=59), warnings=0)
        self.step(timedelta(hours=2), "the SLA warning: 4 h of the 8 h consumed")
        self.worker()
        self.sla(consumed=timedelta(hours=4), warnings=1)
        self.step(timedelta(hours=2, minutes=10), "the digest's fifth and last tick")
        self.worker()
        self.amount("Digest", "mid-series", "ticks", 5, "ticks")
        self.step(timedelta(hours=3, minutes=10), "times=5: no sixth tick")
        self.worker()
        self.amount("Digest", "mid-series", "ticks", 5, "ticks (times=5)")

        self.step(timedelta(hours=5, minutes=59, seconds=59), "a second before the SLA breach")
        self.worker()
        self.marked("Case", "sla", "sla_resolution_breached_at", None, "the SLA breach")
        self.step(timedelta(hours=6), "the SLA breach: 8 h consumed")
        self.worker()
        self.marked("Case", "sla", "sla_resolution_breached_at", NOW + timedelta(hours=6), "")

        self.step(timedelta(hours=21, minutes=59, seconds=59), "a second before the release")
        self.worker()
        self.holder("mia", "still held: release_after 1d runs from the claim at NOW-2h")
        self.step(timedelta(hours=22), "the claim has sat a day: released")
        self.worker()
        self.holder(None, "released by the worker, a day after the claim")

        self.step(timedelta(days=3), "days later: nothing more fires; the final count")
        self.worker()
        call_command("workflow_deliver", buffered=True, stdout=io.StringIO())
        self.final_checks()

    def now_checks(self):
        self.amount("Reminder", "early", "nudges", 1, "nudges (its timeout was due at T0+1h)")
        self.instant("Reminder", "early", "waiting_nudge_fired_at", NOW)
        self.amount("Reminder", "late", "nudges", 0, "nudges (due at NOW+30m)", early=True)
        self.instant("Reminder", "late", "next_due_at", NOW + timedelta(minutes=30))
        self.amount(
            "Digest", "mid-series", "ticks", 2, "ticks (the third is due at NOW+10m)", early=True
        )
        self.instant("Digest", "mid-series", "next_due_at", NOW + timedelta(minutes=10))
        self.amount("Parcel", "effect-owed", "labels", 1, "labels: its owed on_enter ran")
        self.amount("Parcel", "effect-ran", "labels", 1, "labels: its on_enter ran before")
        self.amount("Parcel", "moved-on", "labels", 1, "labels: the packing entry's on_enter")
        self.amount("Parcel", "moved-on", "notices", 1, "notices: the shipped entry's on_enter")
        owed = package_model("PendingEffect").objects.count()
        self.check(owed == 0, f"no on_enter effect is still owed (PendingEffect rows: {owed})")
        self.job("halted", step="running", runs=0, why="halted before the upgrade")
        attempt = self.attempt_row("halted")
        self.check(
            attempt is not None and attempt.halted and attempt.attempts == 3,
            "job 'halted' keeps its halted attempt row with its 3 attempts spent: "
            f"{self.describe(attempt)}",
        )
        self.job("flaky", step="running", runs=0, why="its retry is due at NOW+6m", early=True)
        attempt = self.attempt_row("flaky")
        self.check(
            attempt is not None and attempt.attempts == 1 and not attempt.halted,
            f"job 'flaky' keeps its one spent attempt: {self.describe(attempt)}",
        )
        document = record("Document", "one-vote")
        voters = [str(voter) for voter in document.votes("approve")]
        self.check(voters == ["alice"], f"document 'one-vote' keeps alice's vote: {voters}")
        self.holder("mia", "the claim made before the upgrade is held")
        self.sla(consumed=timedelta(hours=2), warnings=0)
        self.payment("pending", {"evt_settle": "buffered"}, "the settlement still waits")
        out = io.StringIO()
        call_command("workflow_deliver", buffered=True, stdout=out)
        self.payment(
            "pending",
            {"evt_settle": "buffered"},
            f"the buffered sweep leaves it waiting ({out.getvalue().strip()})",
        )
        article = record("Article", "retracted-before")
        self.check(
            article.current_step == "retracted",
            f"article 'retracted-before' stays retracted: {article.current_step}",
        )

    def people_act(self):
        users = {user.username: user for user in get_user_model().objects.all()}
        document = record("Document", "one-vote")
        try:
            document.approve(actor=users["alice"])
            self.check(False, "alice could vote again: her vote from before the upgrade", "LOST")
        except AlreadyVoted:
            self.check(True, "alice's vote from before the upgrade still counts once")
        document = record("Document", "one-vote")
        self.call(lambda: document.approve(actor=users["bob"]), "bob votes")
        document = record("Document", "one-vote")
        self.check(
            document.current_step == "approved",
            f"the quorum of 2 completed with bob's vote: {document.current_step}",
            "LOST",
        )
        withdrawn = record("Document", "to-withdraw")
        self.call(
            lambda: withdrawn.retract("approve", actor=users["alice"]),
            "API of 0.3.0 (docs/votes.md): record.retract('approve', actor=alice) withdraws "
            "her vote on a model without a `retract` transition",
        )
        voters = [str(voter) for voter in record("Document", "to-withdraw").votes("approve")]
        self.check(voters == [], f"alice's vote on 'to-withdraw' is withdrawn: {voters}")

        ticket = record("Ticket", "held")
        try:
            ticket.resolve(actor=users["bob"])
            self.check(False, "bob resolved a ticket mia holds in a claim step", "LOST")
        except WorkflowPermissionDenied:
            self.check(True, "only mia, who holds the ticket, may resolve it")

        article = record("Article", "retract-after")
        try:
            article.retract()
            self.check(True, "article.retract() is the transition")
        except Exception as error:  # reported, then the walk goes on
            self.check(
                False,
                "article.retract() is not the `retract` transition: "
                f"{type(error).__name__}: {error}",
            )
            self.stdout.write("      (the walk goes on with article.transition('retract'))")
            record("Article", "retract-after").transition("retract")
        article = record("Article", "retract-after")
        self.check(
            article.current_step == "retracted", f"article retracted: {article.current_step}"
        )

        self.payment("pending", {"evt_settle": "buffered"}, "the settlement waits to this day")
        delivery = deliver("psp.authorised", "pay_1", id="evt_auth", seq=1)
        self.check(delivery.outcome == "applied", f"the authorisation is {delivery.outcome}")
        self.payment(
            "settled",
            {"evt_settle": "applied", "evt_auth": "applied"},
            "the buffered settlement is applied once the authorisation arrived",
        )
        payment = record("Payment", "pay_1")
        self.check(
            payment.settled_amount == 1200,
            f"the settlement's data reached the record: {payment.settled_amount}",
        )
        again = deliver("psp.settled", "pay_1", id="evt_settle", data={"settled_amount": 9})
        self.check(again.outcome == "duplicate", f"its repeat is {again.outcome}, not applied")

    def final_checks(self):
        self.amount("Reminder", "early", "nudges", 1, "nudges")
        self.amount("Reminder", "late", "nudges", 1, "nudges")
        self.amount("Digest", "mid-series", "ticks", 5, "ticks (times=5)")
        self.instant("Digest", "mid-series", "next_due_at", None)
        self.amount("Parcel", "effect-ran", "labels", 1, "labels")
        self.amount("Parcel", "effect-owed", "labels", 1, "labels")
        self.amount("Parcel", "moved-on", "labels", 1, "labels")
        self.amount("Parcel", "moved-on", "notices", 1, "notices")
        self.job("flaky", step="done", runs=1, why="ran once after its retry")
        self.job("halted", step="running", runs=0, why="halted: nobody retried it")
        self.sla(consumed=None, warnings=1)
        for key, expected in NEW_LOG_ROWS.items():
            model_name, name = key.split(":", 1)
            before = self.before["records"][key]["log_rows"]
            rows = log_rows(record(model_name, name))[before:]
            got = [(row["triggered_by"], row["transition_name"]) for row in rows]
            self.check(
                got == expected,
                f"{key}: log rows since the upgrade {got}, expected {expected}",
                "LOST" if len(got) < len(expected) else "TWICE" if len(got) > len(expected) else "",
            )
        remaining = apps.get_model("django_q", "OrmQ").objects.count()
        self.stdout.write(f"      tasks left in the ORM broker: {remaining}")
        self.stdout.write("    the final state:")
        self.stdout.write("  " + summary(snapshot()).replace("\n", "\n  "))

    # Checks -----------------------------------------------------------------------------

    def check(self, ok, message, verdict=""):
        """Print and record one assertion; a failed one is prefixed with its ``verdict``:
        LOST, TWICE, EARLY, or nothing for a state that is simply not what it should be."""
        if not ok and verdict:
            message = f"{verdict}: {message}"
        self.stdout.write(f"    {'ok  ' if ok else 'FAIL'} {message}")
        if not ok:
            self.failures.append(f"at {self.when}: {message}")

    @staticmethod
    def counted(actual, expected, early=False):
        """Below ``expected`` something was lost; above it something ran twice, or, for a
        check made before an instant (``early``), ran before its time."""
        if actual < expected:
            return "LOST"
        return "EARLY" if early else "TWICE"

    def amount(self, model_name, key, field, expected, what, early=False):
        actual = getattr(record(model_name, key), field)
        self.check(
            actual == expected,
            f"{model_name} '{key}' {what}: {actual}, expected {expected}",
            self.counted(actual, expected, early),
        )

    def instant(self, model_name, key, field, expected):
        actual = getattr(record(model_name, key), field)
        self.check(
            actual == expected,
            f"{model_name} '{key}' {field} = {self.show(actual)}, expected {self.show(expected)}",
        )

    def marked(self, model_name, key, field, expected, what):
        actual = getattr(record(model_name, key), field)
        self.check(
            actual == expected,
            f"{model_name} '{key}' {field} = {self.show(actual)}, "
            f"expected {self.show(expected)} {what}".rstrip(),
            "EARLY" if expected is None else "LOST" if actual is None else "",
        )

    def job(self, name, *, step, runs, why, early=False):
        job = record("Job", name)
        self.check(
            job.current_step == step and job.runs == runs,
            f"job '{name}' in {job.current_step}, its action ran {job.runs} time(s); "
            f"expected {step}, {runs} ({why})",
            self.counted(job.runs, runs, early) if job.runs != runs else "",
        )

    def holder(self, username, what):
        ticket = record("Ticket", "held")
        holder = ticket.assignee.username if ticket.assignee_id else None
        verdict = "LOST" if username else "LOST (not released)"
        self.check(holder == username, f"ticket holder: {holder} ({what})", verdict)

    def sla(self, *, consumed, warnings):
        case = record("Case", "sla")
        clock = case.sla("resolution")
        if consumed is not None:
            self.check(
                clock.consumed == consumed and clock.state == "running",
                f"SLA clock {clock.state}, consumed {clock.consumed} "
                f"(expected running, {consumed})",
                self.counted(clock.consumed, consumed) if clock.consumed != consumed else "",
            )
        self.check(
            case.warnings == warnings,
            f"SLA warnings sent: {case.warnings}, expected {warnings}",
            self.counted(case.warnings, warnings, early=warnings == 0),
        )

    def payment(self, step, outcomes, what):
        payment = record("Payment", "pay_1")
        deliveries = package_model("EventDelivery").objects.filter(key="pay_1")
        found = {row.event_id: row.outcome for row in deliveries.exclude(outcome="duplicate")}
        self.check(
            payment.current_step == step and found == outcomes,
            f"{what}: payment {payment.current_step}, deliveries {found}",
            "EARLY" if step == "pending" and found.get("evt_settle") == "applied" else "LOST",
        )

    def call(self, action, what):
        try:
            action()
            self.check(True, what)
        except Exception as error:  # reported, then the walk goes on
            self.check(False, f"{what}: {type(error).__name__}: {error}")

    def attempt_row(self, job_name):
        job = record("Job", job_name)
        rows = package_model("WorkAttempt").objects.filter(
            object_id=str(job.pk), content_type__model="job"
        )
        return rows.order_by("-pk").first()

    @staticmethod
    def describe(attempt):
        if attempt is None:
            return "no attempt row"
        return (
            f"{attempt.work}: {attempt.attempts} attempt(s), halted={attempt.halted}, "
            f"retry_at={attempt.retry_at}"
        )

    @staticmethod
    def show(value):
        if value is None:
            return "None"
        delta = value - NOW
        sign = "+" if delta >= timedelta(0) else "-"
        return f"{value.isoformat()} (NOW{sign}{abs(delta)})"

    # Running ----------------------------------------------------------------------------

    def step(self, delta, title):
        self.clock.move_to(NOW + delta)
        self.when = "NOW" if not delta else f"NOW+{delta}"
        self.stdout.write(f"  -- {self.when} ({(NOW + delta).isoformat()}): {title}")

    def worker(self):
        out = io.StringIO()
        try:
            call_command("workflow_worker", once=True, stdout=out)
        except Exception:
            self.check(False, f"workflow_worker --once raised:\n{traceback.format_exc()}")
            return
        for line in out.getvalue().splitlines():
            if line.startswith("done:") or "due instant" in line:
                self.stdout.write(f"      worker: {line}")

    def run_queued_tasks(self):
        """What the old release queued, run as django-q2's worker runs a task: its function
        looked up by name, called with the task's arguments."""
        from django_q.signing import SignedPackage

        queued = apps.get_model("django_q", "OrmQ")
        rows = list(queued.objects.order_by("pk"))
        self.stdout.write(f"      {len(rows)} task(s) waiting")
        for row in rows:
            task = SignedPackage.loads(row.payload)
            func = task["func"]
            function = func if callable(func) else pydoc.locate(func)
            described = f"{func}{tuple(task.get('args', ()))}"
            if function is None:
                self.check(False, f"the queued task {described} names no function now", "LOST")
                continue
            try:
                result = function(*task.get("args", ()), **task.get("kwargs", {}))
            except Exception as error:
                self.check(
                    False, f"the queued task {described} raised {type(error).__name__}: {error}"
                )
                continue
            row.delete()
            self.stdout.write(f"      ran {described} -> {result!r}")

    def _show_workflow_log(self):
        """The worker's INFO lines (what fired, for whom), indented under the walk."""
        handler = logging.StreamHandler(self.stdout)
        handler.setFormatter(logging.Formatter("      log: %(levelname)s %(name)s: %(message)s"))
        logging.getLogger("django_workflow").addHandler(handler)
