"""Order fulfilment: an automatic chain with an error step per link, recovery, deadlines.

Version 2 vets each paid order for fraud before reserving stock. Orders placed under
version 1 finish without the vetting, unless ``manage.py workflow_upgrade
fulfilment.Order --to 2`` moves them (docs: versions).
"""

from django.db import models

from django_workflow import Every, Step, Timeout, Transition, WorkflowModel


class FulfilmentError(Exception):
    pass


class OrderWorkflowV1:
    """The declaration before fraud vetting, kept while orders run on it."""

    version = 1
    log = True

    cart = Step(
        Transition("checkout", to="charging"),
        Timeout("abandonment", fire_after="3d", transition_to="abandoned"),
    )
    charging = Step(action="charge", on_success="reserving", on_error="payment_failed")
    reserving = Step(action="reserve", on_success="packing", on_error="awaiting_stock")
    packing = Step(action="pack", on_success="shipping", on_error="packing_failed")
    shipping = Step(action="ship", on_success="shipped", on_error="shipping_failed")
    shipped = Step(terminal=True)
    payment_failed = Step(
        Transition("retry_payment", to="charging"), Transition("cancel", to="cancelled")
    )
    awaiting_stock = Step(
        Transition("restocked", to="reserving"),
        Transition("cancel", to="cancelled"),
        Every("supplier_chase", interval="2d", action="chase_supplier"),
    )
    packing_failed = Step(Transition("repack", to="packing"))
    shipping_failed = Step(Transition("reship", to="shipping"))
    abandoned = Step(terminal=True)
    cancelled = Step(terminal=True)


class Order(WorkflowModel):
    item = models.CharField(max_length=200)
    quantity = models.PositiveIntegerField(default=1)
    #: Which link should fail next ("charge", "vet", "reserve", "pack", "ship"), for
    #: the demo.
    fail_next = models.CharField(max_length=20, blank=True)
    charged = models.BooleanField(default=False)
    reserved = models.BooleanField(default=False)
    packed = models.BooleanField(default=False)
    tracking_number = models.CharField(max_length=40, blank=True)
    supplier_chases = models.IntegerField(default=0)

    class Workflow(OrderWorkflowV1):
        version = 2
        previous = [OrderWorkflowV1]

        charging = Step(action="charge", on_success="vetting", on_error="payment_failed")
        # A payment the fraud vetting refuses fails like a declined card.
        vetting = Step(action="vet", on_success="reserving", on_error="payment_failed")

    def __str__(self) -> str:
        return f"{self.quantity} x {self.item}"

    def _maybe_fail(self, link: str) -> None:
        if self.fail_next == link:
            raise FulfilmentError(f"{link} failed")

    def charge(self) -> None:
        self._maybe_fail("charge")
        self.charged = True

    def vet(self) -> None:
        self._maybe_fail("vet")

    def reserve(self) -> None:
        self._maybe_fail("reserve")
        self.reserved = True

    def pack(self) -> None:
        self._maybe_fail("pack")
        self.packed = True

    def ship(self) -> None:
        self._maybe_fail("ship")
        self.tracking_number = f"TRK{self.pk:06d}"

    def chase_supplier(self) -> None:
        self.supplier_chases += 1
