"""Malformed declarations. Importing this module must not raise; ``check`` reports each.

A few valid declarations sit beside them (``VALID`` in expected.py): near misses
that ``check`` must accept.
"""

from datetime import timedelta

from django.db import models
from django.db.models import Q

from django_workflow import (
    Every,
    Join,
    Receive,
    Retry,
    Route,
    Step,
    Timeout,
    Transition,
    Undo,
    WorkflowModel,
)
from django_workflow.policies import has_perm, is_staff

go = Transition("go", to="done")


class NoWorkflow(WorkflowModel):
    pass


class UnknownOption(WorkflowModel):
    class Workflow:
        stat_attribute = "status"
        start = Step(go)
        done = Step()


class NoSteps(WorkflowModel):
    class Workflow:
        log = True


class OnlyTerminal(WorkflowModel):
    class Workflow:
        done = Step(terminal=True)


class TwoInitial(WorkflowModel):
    class Workflow:
        a = Step(go, initial=True)
        b = Step(go, initial=True)
        done = Step()


class TerminalInitial(WorkflowModel):
    class Workflow:
        start = Step(go)
        done = Step(initial=True)


class TerminalWithExits(WorkflowModel):
    class Workflow:
        start = Step(go)
        done = Step(Transition("back", to="start"), terminal=True)


class ManualWithAction(WorkflowModel):
    class Workflow:
        start = Step(go, action="act")
        done = Step()

    def act(self):
        pass


class AutomaticWithoutOnSuccess(WorkflowModel):
    class Workflow:
        start = Step(action="act")

    def act(self):
        pass


class OnSuccessWithoutAction(WorkflowModel):
    class Workflow:
        start = Step(on_success="done")
        done = Step()


class UnconditionalRouteNotLast(WorkflowModel):
    n = models.IntegerField(default=0)

    class Workflow:
        start = Step(
            action="act",
            on_success=[Route("done"), Route("other", when=Q(n=1))],
            on_error="done",
        )
        other = Step()
        done = Step()

    def act(self):
        pass


class TwoUnconditionalRoutes(WorkflowModel):
    class Workflow:
        start = Step(Transition("go", Route("done"), Route("other")))
        other = Step()
        done = Step()


class NoWayOutOnFailure(WorkflowModel):
    n = models.IntegerField(default=0)

    class Workflow:
        start = Step(action="act", on_success=[Route("done", when=Q(n=1))])
        done = Step()

    def act(self):
        pass


class AutomaticStepLeftByATimeout(WorkflowModel):
    """Valid: a transition timeout takes out a record no on_success route matched."""

    n = models.IntegerField(default=0)

    class Workflow:
        start = Step(
            Timeout("give_up", fire_after="1d", transition_to="done"),
            action="act",
            on_success=[Route("done", when=Q(n=1))],
        )
        done = Step()

    def act(self):
        pass


class UnknownTarget(WorkflowModel):
    class Workflow:
        start = Step(Transition("go", to="nowhere"))


class UnknownOnError(WorkflowModel):
    class Workflow:
        start = Step(action="act", on_success="done", on_error="nowhere")
        done = Step()

    def act(self):
        pass


class UnknownRouteTarget(WorkflowModel):
    n = models.IntegerField(default=0)

    class Workflow:
        start = Step(Transition("go", Route("nowhere", when=Q(n=1)), Route("done")))
        done = Step()


class Unreachable(WorkflowModel):
    class Workflow:
        start = Step(go)
        island = Step(Transition("leave", to="done"))
        done = Step()


class TransitionWithBoth(WorkflowModel):
    class Workflow:
        start = Step(Transition("go", Route("done"), to="done"))
        done = Step()


class TransitionWithNeither(WorkflowModel):
    class Workflow:
        start = Step(Transition("go"), Transition("finish", to="done"))
        done = Step()


class DuplicateTransition(WorkflowModel):
    class Workflow:
        start = Step(go, Transition("go", to="other"))
        other = Step()
        done = Step()


class MissingActionMethod(WorkflowModel):
    class Workflow:
        start = Step(action="not_there", on_success="done")
        done = Step()


class ActionIsAField(WorkflowModel):
    score = models.IntegerField(default=0)

    class Workflow:
        start = Step(action="score", on_success="done")
        done = Step()


class NameCollidesWithField(WorkflowModel):
    approve = models.BooleanField(default=False)

    class Workflow:
        start = Step(Transition("approve", to="done"))
        done = Step()


class NameCollidesWithModelMethod(WorkflowModel):
    class Workflow:
        start = Step(Transition("delete", to="done"))
        done = Step()


class NameNotAnIdentifier(WorkflowModel):
    class Workflow:
        start = Step(Transition("go now", to="done"))
        done = Step()


class NameNotAString(WorkflowModel):
    class Workflow:
        start = Step(Transition(7, to="done"), go)
        done = Step()


class SharedNameDifferentPolicies(WorkflowModel):
    class Workflow:
        start = Step(Transition("go", to="middle"), policy=is_staff)
        middle = Step(go, policy=has_perm("hostile.change_sharednamedifferentpolicies"))
        done = Step()


class ChildNotATransition(WorkflowModel):
    class Workflow:
        start = Step("go", go)
        done = Step()


class WhenNotAQ(WorkflowModel):
    class Workflow:
        start = Step(Transition("go", Route("done", when="score > 3"), Route("done")))
        done = Step()


class RouteNotARoute(WorkflowModel):
    class Workflow:
        start = Step(action="act", on_success=["done"], on_error="done")
        done = Step()

    def act(self):
        pass


class RetryNotARetry(WorkflowModel):
    class Workflow:
        start = Step(action="act", on_success="done", retry=3)
        done = Step()

    def act(self):
        pass


class AcceptUnknownField(WorkflowModel):
    class Workflow:
        start = Step(Transition("go", to="done", accept=["reason"]))
        done = Step()


class AcceptStateField(WorkflowModel):
    class Workflow:
        start = Step(Transition("go", to="done", accept=["state"]))
        done = Step()


class PolicyNotCallable(WorkflowModel):
    class Workflow:
        start = Step(go, policy="admins only")
        done = Step()


class PoliciesNameUnknown(WorkflowModel):
    class Workflow:
        policies = {"aprove": is_staff}
        start = Step(go)
        done = Step()


class RetryOnManualStep(WorkflowModel):
    class Workflow:
        start = Step(go, retry=Retry(max_attempts=3))
        done = Step()


class TimeLimitOnManualStep(WorkflowModel):
    class Workflow:
        start = Step(go, time_limit="5m")
        done = Step()


class BadCron(WorkflowModel):
    class Workflow:
        check_interval = "every minute"
        start = Step(go)
        done = Step()


class BadTimeZone(WorkflowModel):
    class Workflow:
        time_zone = "Mars/Olympus_Mons"
        start = Step(go)
        done = Step()


class TimeZoneFieldMissing(WorkflowModel):
    class Workflow:
        time_zone_field = "tz"
        start = Step(go)
        done = Step()


class UndoWithoutLog(WorkflowModel):
    class Workflow:
        undo = Undo(within="30m")
        start = Step(go)
        done = Step()


class UndoableWithoutLog(WorkflowModel):
    class Workflow:
        start = Step(Transition("go", to="done", undoable=True))
        done = Step()


class UndoableWithoutUndo(WorkflowModel):
    class Workflow:
        log = True
        start = Step(Transition("go", to="done", undoable=True))
        done = Step()


class UndoWithoutUndoable(WorkflowModel):
    class Workflow:
        log = True
        undo = Undo(within="30m")
        start = Step(go)
        done = Step()


class BadTimeLimit(WorkflowModel):
    class Workflow:
        start = Step(action="act", on_success="done", time_limit="soon")
        done = Step()

    def act(self):
        pass


class BadRetryAttempts(WorkflowModel):
    class Workflow:
        start = Step(action="act", on_success="done", retry=Retry(max_attempts=0))
        done = Step()

    def act(self):
        pass


class BadRetryBackoff(WorkflowModel):
    class Workflow:
        start = Step(action="act", on_success="done", retry=Retry(3, backoff="3 fortnights"))
        done = Step()

    def act(self):
        pass


class BadUndoWindow(WorkflowModel):
    class Workflow:
        log = True
        undo = Undo(within=(30, "parsecs"))
        start = Step(go)
        done = Step()


class BadStateAttribute(WorkflowModel):
    class Workflow:
        state_attribute = "2-state"
        start = Step(go)
        done = Step()


class UnknownScheduler(WorkflowModel):
    class Workflow:
        scheduler = "cron"
        start = Step(go)
        done = Step()


class LogNotABool(WorkflowModel):
    class Workflow:
        log = "yes"
        start = Step(go)
        done = Step()


class StateFieldNotChar(WorkflowModel):
    state = models.IntegerField(default=0)

    class Workflow:
        start = Step(go)
        done = Step()


class StepNameUnderscore(WorkflowModel):
    class Workflow:
        _start = Step(go)
        done = Step()


class WaitStepWithoutExit(WorkflowModel):
    class Workflow:
        waiting = Step(Timeout("ping", fire_after="1d", action="ping"))

    def ping(self):
        pass


class TimeoutWithBothFireAfterAndFireAt(WorkflowModel):
    due = models.DateTimeField(null=True)

    class Workflow:
        start = Step(go, Timeout("t", fire_after="1d", fire_at="due", transition_to="done"))
        done = Step()


class TimeoutWithNeitherFireAfterNorFireAt(WorkflowModel):
    class Workflow:
        start = Step(go, Timeout("t", transition_to="done"))
        done = Step()


class FireAtWithField(WorkflowModel):
    due = models.DateTimeField(null=True)

    class Workflow:
        start = Step(go, Timeout("t", fire_at="due", field="due", transition_to="done"))
        done = Step()


class TimeoutWithBothActionAndTransition(WorkflowModel):
    class Workflow:
        start = Step(go, Timeout("t", fire_after="1d", action="act", transition_to="done"))
        done = Step()

    def act(self):
        pass


class TimeoutWithNeitherActionNorTransition(WorkflowModel):
    class Workflow:
        start = Step(go, Timeout("t", fire_after="1d"))
        done = Step()


class TimeoutFieldUnknown(WorkflowModel):
    class Workflow:
        start = Step(go, Timeout("t", fire_after="1d", field="nope", transition_to="done"))
        done = Step()


class TimeoutFieldNotADateTime(WorkflowModel):
    due = models.DateField(null=True)

    class Workflow:
        start = Step(go, Timeout("t", fire_after="1d", field="due", transition_to="done"))
        done = Step()


class FireAtUnknown(WorkflowModel):
    class Workflow:
        start = Step(go, Timeout("t", fire_at="nope", transition_to="done"))
        done = Step()


class TwoDeadlinesOneColumn(WorkflowModel):
    class Workflow:
        start = Step(
            go,
            Every("a", interval="1d", action="act", last_fired_field="pinged_at"),
            Every("b", interval="2d", action="act", last_fired_field="pinged_at"),
        )
        done = Step()

    def act(self):
        pass


class FiredColumnDeclaredWrong(WorkflowModel):
    start_t_fired_at = models.DateTimeField(default=None)

    class Workflow:
        start = Step(go, Timeout("t", fire_after="1d", action="act"))
        done = Step()

    def act(self):
        pass


class LastFiredFieldIsStateEnteredAt(WorkflowModel):
    class Workflow:
        start = Step(
            go, Every("e", interval="1d", action="act", last_fired_field="state_entered_at")
        )
        done = Step()

    def act(self):
        pass


class LastFiredFieldIsTheState(WorkflowModel):
    class Workflow:
        start = Step(go, Every("e", interval="1d", action="act", last_fired_field="state"))
        done = Step()

    def act(self):
        pass


class EveryWithoutAction(WorkflowModel):
    class Workflow:
        start = Step(go, Every("e", interval="1d"))
        done = Step()


class UntilNotLongerThanInterval(WorkflowModel):
    class Workflow:
        start = Step(go, Every("e", interval="2d", action="act", until="2d"))
        done = Step()

    def act(self):
        pass


class BelowThePollingFloor(WorkflowModel):
    class Workflow:
        start = Step(go, Timeout("t", fire_after="59s", transition_to="done"))
        done = Step()


class BelowThePreciseFloor(WorkflowModel):
    class Workflow:
        scheduler = "precise"
        start = Step(go, Timeout("t", fire_after=timedelta(milliseconds=500), transition_to="done"))
        done = Step()


class EveryBelowTheFloor(WorkflowModel):
    class Workflow:
        start = Step(go, Every("e", interval="30s", action="act"))
        done = Step()

    def act(self):
        pass


class ShorterThanItsCheckInterval(WorkflowModel):
    class Workflow:
        check_interval = "0 * * * *"
        start = Step(go, Timeout("t", fire_after="10m", transition_to="done"))
        done = Step()


class TimeoutActionMissing(WorkflowModel):
    class Workflow:
        start = Step(go, Timeout("t", fire_after="1d", action="not_there"))
        done = Step()


class TimeoutTargetUnknown(WorkflowModel):
    class Workflow:
        start = Step(go, Timeout("t", fire_after="1d", transition_to="nowhere"))
        done = Step()


class DuplicateDeadlineNames(WorkflowModel):
    class Workflow:
        start = Step(
            go,
            Timeout("t", fire_after="1d", transition_to="done"),
            Timeout("t", fire_after="2d", transition_to="done"),
        )
        done = Step()


class TimeoutCronInvalid(WorkflowModel):
    class Workflow:
        start = Step(
            go, Timeout("t", fire_after="1d", transition_to="done", check_interval="hourly")
        )
        done = Step()


class TimeoutDurationInvalid(WorkflowModel):
    class Workflow:
        start = Step(go, Timeout("t", fire_after="2 fortnights", transition_to="done"))
        done = Step()


class CalculationNotAnExpression(WorkflowModel):
    class Workflow:
        calculations = {"due": "submitted_at + 2 days"}
        start = Step(go, Timeout("t", fire_after="1d", field="due", transition_to="done"))
        done = Step()


class RetryOnTransitionTimeout(WorkflowModel):
    class Workflow:
        start = Step(
            go, Timeout("t", fire_after="1d", transition_to="done", retry=Retry(max_attempts=3))
        )
        done = Step()


class HolidaysNotACalendar(WorkflowModel):
    class Workflow:
        holidays = 25
        start = Step(go)
        done = Step()


class HolidaysMethodMissing(WorkflowModel):
    class Workflow:
        holidays = "national_holidays"
        start = Step(go)
        done = Step()


class TimeLimitInBusinessDays(WorkflowModel):
    class Workflow:
        start = Step(action="act", on_success="done", time_limit="1bd")
        done = Step()

    def act(self):
        pass


class QuorumNotAWholeNumber(WorkflowModel):
    class Workflow:
        start = Step(Transition("approve", to="done", quorum="2"))
        done = Step()


class QuorumOutOfAnAutomaticStep(WorkflowModel):
    class Workflow:
        start = Step(Transition("approve", to="done", quorum=2), action="act", on_success="done")
        done = Step()

    def act(self):
        pass


class CascadeOverAnUnknownRelation(WorkflowModel):
    class Workflow:
        start = Step(Transition("cancel", to="done", cascade={"lines": "void"}))
        done = Step()


class CascadeToAPlainModel(WorkflowModel):
    class Workflow:
        start = Step(Transition("cancel", to="done", cascade={"notes": "void"}))
        done = Step()


class PlainNote(models.Model):
    owner = models.ForeignKey(CascadeToAPlainModel, related_name="notes", on_delete=models.CASCADE)

    def __str__(self) -> str:
        return f"note {self.pk}"


class CascadeToAnUndeclaredTransition(WorkflowModel):
    class Workflow:
        start = Step(Transition("cancel", to="done", cascade={"items": "scrap"}))
        done = Step()


class CascadedItem(WorkflowModel):
    owner = models.ForeignKey(
        CascadeToAnUndeclaredTransition, related_name="items", on_delete=models.CASCADE
    )

    class Workflow:
        open = Step(Transition("void", to="void"))
        void = Step()


class JoinOverAnUnknownRelation(WorkflowModel):
    class Workflow:
        start = Step(Transition("close", to="waiting"))
        waiting = Step(Join("lines", all_in=["done"], to="done"))
        done = Step()


class JoinOverAPlainModel(WorkflowModel):
    class Workflow:
        start = Step(Transition("close", to="waiting"))
        waiting = Step(Join("notes", all_in=["done"], to="done"))
        done = Step()


class PlainJoinNote(models.Model):
    owner = models.ForeignKey(JoinOverAPlainModel, related_name="notes", on_delete=models.CASCADE)

    def __str__(self) -> str:
        return f"note {self.pk}"


class JoinOnUnknownChildSteps(WorkflowModel):
    class Workflow:
        start = Step(Transition("close", to="waiting"))
        waiting = Step(Join("items", all_in=["shipped"], to="done"))
        done = Step()


class JoinToAnUnknownStep(WorkflowModel):
    class Workflow:
        start = Step(Transition("close", to="waiting"))
        waiting = Step(Join("items", all_in=["void"], to="done", any_in={"open": "stuck"}))
        done = Step()


class JoinInAnAutomaticStep(WorkflowModel):
    class Workflow:
        start = Step(Join("items", all_in=["void"], to="done"), action="prepare", on_success="done")
        done = Step()

    def prepare(self):
        pass


class JoinedItem(WorkflowModel):
    unknown_steps = models.ForeignKey(
        JoinOnUnknownChildSteps, related_name="items", on_delete=models.CASCADE
    )
    unknown_target = models.ForeignKey(
        JoinToAnUnknownStep, related_name="items", on_delete=models.CASCADE
    )
    automatic = models.ForeignKey(
        JoinInAnAutomaticStep, related_name="items", on_delete=models.CASCADE
    )

    class Workflow:
        open = Step(Transition("void", to="void"))
        void = Step()


class ClaimWithoutAssignment(WorkflowModel):
    class Workflow:
        start = Step(Transition("finish", to="done"), claim=True)
        done = Step()


class ReleaseAfterUnreadable(WorkflowModel):
    class Workflow:
        assignment = True
        start = Step(Transition("finish", to="done"), claim=True, release_after="soon")
        done = Step()


class AssignPolicyWithoutAssignment(WorkflowModel):
    class Workflow:
        policies = {"assign": lambda actor, record, name: True}
        start = Step(Transition("finish", to="done"))
        done = Step()


class TransitionNamedLikeAnAssignmentMethod(WorkflowModel):
    class Workflow:
        assignment = True
        start = Step(Transition("release", to="done"))
        done = Step()


class HeldWithAReleaseAfter(WorkflowModel):
    class Workflow:
        assignment = True
        policies = {"assign": lambda actor, record, name: True}
        start = Step(Transition("finish", to="done"), claim=True, release_after="1bd")
        done = Step()


class ReceiveOfAnUnknownTransition(WorkflowModel):
    ref = models.CharField(max_length=20, unique=True)

    class Workflow:
        events = {"hostile.unknown": Receive(key="ref", transition="setle")}
        start = Step(Transition("settle", to="done"))
        done = Step()


class ReceiveOfAQuorumTransition(WorkflowModel):
    ref = models.CharField(max_length=20, unique=True)

    class Workflow:
        events = {"hostile.quorum": Receive(key="ref", transition="settle")}
        start = Step(Transition("settle", to="done", quorum=2))
        done = Step()


class ReceiveOnNoField(WorkflowModel):
    class Workflow:
        events = {"hostile.nofield": Receive(key="reference", transition="settle")}
        start = Step(Transition("settle", to="done"))
        done = Step()


class ReceiveWithAnUnreadableBuffer(WorkflowModel):
    ref = models.CharField(max_length=20, unique=True)

    class Workflow:
        events = {"hostile.buffer": Receive(key="ref", transition="settle", buffer="2bd")}
        start = Step(Transition("settle", to="done"))
        done = Step()


class ReceivingWithABuffer(WorkflowModel):
    ref = models.CharField(max_length=20, unique=True)

    class Workflow:
        events = {"hostile.valid": Receive(key="ref", transition="settle", buffer="6h")}
        start = Step(Transition("settle", to="done"))
        done = Step()


class _SameNumber:
    version = 2
    start = Step(Transition("go", to="done"))
    done = Step()


class PreviousVersionNotBelowTheCurrent(WorkflowModel):
    class Workflow:
        version = 2
        previous = [_SameNumber]
        start = Step(Transition("go", to="done"))
        done = Step()


class _StatusStored:
    state_attribute = "status"
    start = Step(Transition("go", to="done"))
    done = Step()


class VersionsStoringTheStepApart(WorkflowModel):
    class Workflow:
        version = 2
        previous = [_StatusStored]
        start = Step(Transition("go", to="done"))
        done = Step()


class _WithATypo:
    start = Step(Transition("go", to="dnoe"))
    done = Step()


class PreviousVersionWithAnUnknownTarget(WorkflowModel):
    class Workflow:
        version = 2
        previous = [_WithATypo]
        start = Step(Transition("go", to="done"))
        done = Step()


class _Legacy:
    start = Step(Transition("go", to="done"), Transition("park", to="parked"))
    parked = Step(Transition("go", to="done"))
    done = Step()


class VersionedWithAStepItDropped(WorkflowModel):
    class Workflow:
        version = 2
        previous = [_Legacy]
        start = Step(Transition("go", to="done"))
        done = Step()
