"""The same two-step workflow written with django_workflow and with django-fsm-2."""

from django.contrib.contenttypes.models import ContentType
from django.db import models, transaction
from django.utils import timezone
from django_fsm import ConcurrentTransitionMixin, FSMField, transition

from django_workflow import Step, Timeout, Transition, WorkflowModel


class Ours(WorkflowModel):
    class Workflow:
        log = True
        open = Step(Transition("flip", to="closed"))
        closed = Step(Transition("flop", to="open"))


class PeerLog(models.Model):
    """The peer's log row, shaped like django_workflow's TransitionLog."""

    content_type = models.ForeignKey(ContentType, on_delete=models.CASCADE)
    object_id = models.CharField(max_length=255)
    from_state = models.CharField(max_length=100)
    to_state = models.CharField(max_length=100)
    transition_name = models.CharField(max_length=200)
    triggered_by = models.CharField(max_length=20)
    occurred_at = models.DateTimeField(default=timezone.now)
    actor_repr = models.CharField(max_length=255, blank=True)


class Peer(ConcurrentTransitionMixin, models.Model):
    state = FSMField(default="open", db_index=True)
    state_entered_at = models.DateTimeField(default=timezone.now)

    @transition(field=state, source="open", target="closed")
    def flip(self):
        self.state_entered_at = timezone.now()

    @transition(field=state, source="closed", target="open")
    def flop(self):
        self.state_entered_at = timezone.now()

    def run(self, name, actor=None):
        """One guarded transition, saved with its log row in one transaction."""
        before = self.state
        with transaction.atomic(using=self._state.db):
            getattr(self, name)()
            self.save()
            PeerLog.objects.using(self._state.db).create(
                content_type=ContentType.objects.db_manager(self._state.db).get_for_model(Peer),
                object_id=str(self.pk),
                from_state=before,
                to_state=self.state,
                transition_name=name,
                triggered_by="manual",
                actor_repr="" if actor is None else str(actor),
            )


class Deadlined(WorkflowModel):
    """Twenty steps; s00 carries an action timeout, s01 and s03 transition timeouts."""

    class Workflow:
        s00 = Step(
            Transition("next", to="s01"), Timeout("reminder", fire_after="2d", action="remind")
        )
        s01 = Step(
            Transition("next", to="s02"), Timeout("expire", fire_after="7d", transition_to="s02")
        )
        s02 = Step(Transition("next", to="s03"))
        s03 = Step(
            Transition("next", to="s04"), Timeout("expire", fire_after="7d", transition_to="s04")
        )
        s04 = Step(Transition("next", to="s05"))
        s05 = Step(Transition("next", to="s06"))
        s06 = Step(Transition("next", to="s07"))
        s07 = Step(Transition("next", to="s08"))
        s08 = Step(Transition("next", to="s09"))
        s09 = Step(Transition("next", to="s10"))
        s10 = Step(Transition("next", to="s11"))
        s11 = Step(Transition("next", to="s12"))
        s12 = Step(Transition("next", to="s13"))
        s13 = Step(Transition("next", to="s14"))
        s14 = Step(Transition("next", to="s15"))
        s15 = Step(Transition("next", to="s16"))
        s16 = Step(Transition("next", to="s17"))
        s17 = Step(Transition("next", to="s18"))
        s18 = Step(Transition("next", to="s19"))
        s19 = Step()

    def remind(self):
        pass


class Chain(WorkflowModel):
    """Five automatic steps in a row."""

    class Workflow:
        one = Step(action="work", on_success="two")
        two = Step(action="work", on_success="three")
        three = Step(action="work", on_success="four")
        four = Step(action="work", on_success="five")
        five = Step(action="work", on_success="done")
        done = Step()

    def work(self):
        pass


class BenchAlarm(WorkflowModel):
    """A precise deadline that notes when it fired."""

    ring_at = models.DateTimeField(null=True)
    rang_at = models.DateTimeField(null=True)

    class Workflow:
        scheduler = "precise"
        armed = Step(
            Timeout("ring", fire_at="ring_at", action="ring"),
            Timeout("give_up", fire_after="1d", transition_to="done"),
        )
        done = Step()

    def ring(self):
        self.rang_at = timezone.now()


def _eight_reminders():
    steps = {}
    for index in range(20):
        name = f"s{index:02d}"
        following = f"s{index + 1:02d}" if index < 19 else None
        children = [Transition("next", to=following)] if following else []
        if index < 8:
            children.append(Timeout("reminder", fire_after="2d", action="remind"))
        steps[name] = Step(*children)
    return type("Workflow", (), steps)


class Polled(WorkflowModel):
    """Twenty steps, eight of them with a reminder: eight deadlines to poll."""

    Workflow = _eight_reminders()

    def remind(self):
        pass


class Reminded(WorkflowModel):
    """One action timeout with a no-op action, fired record by record."""

    class Workflow:
        waiting = Step(
            Transition("answer", to="answered"),
            Timeout("remind", fire_after="1d", action="remind"),
        )
        answered = Step()

    def remind(self):
        pass


class Bystander(models.Model):
    """Another writer's table: its writes must never wait long on a firing."""

    touched = models.IntegerField(default=0)
