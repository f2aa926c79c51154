"""How a check message reads in ``manage.py check`` (docs/checks.md, docs/tutorial.md)."""

from django_workflow import Step, Timeout, Transition
from django_workflow.checks import check_model


class Claim:
    """The tutorial's workflow with its typo: ``to="aproved"``."""

    review = Step(
        Transition("approve", to="aproved"),
        Transition("reject", to="rejected"),
        Timeout("reminder", fire_after="60s", action="remind_manager"),
    )
    approved = Step()
    rejected = Step()


def remind_manager(self):
    pass


def test_a_misspelt_target_is_one_error_naming_the_model_once(declare):
    model = declare(Claim, remind_manager=remind_manager)
    [message] = check_model(model)
    assert message.id == "django_workflow.E012"
    assert str(message) == (
        f"{model._meta.label}: (django_workflow.E012) step 'review', transition 'approve' "
        "names step 'aproved', which is not declared.\n"
        "\tHINT: Did you mean 'approved'? Declared steps: review, approved, rejected."
    )


def test_a_step_no_transition_reaches_is_still_unreachable_once_every_name_resolves(declare):
    class Workflow:
        review = Step(Transition("reject", to="rejected"))
        approved = Step()
        rejected = Step()

    [message] = check_model(declare(Workflow))
    assert message.id == "django_workflow.E013"
    assert message.msg == "step 'approved' cannot be reached from the initial step 'review'."


def test_a_name_close_to_none_declared_gets_no_guess(declare):
    class Workflow:
        review = Step(Transition("approve", to="zzz"))
        done = Step()

    [message] = check_model(declare(Workflow))
    assert message.hint == "Declared steps: review, done."
