from django.test import TestCase

from django_workflow import deliver
from shop.models import Payment

from .helpers import rows


class EventTests(TestCase):
    def test_an_early_event_waits_for_the_one_before_it(self):
        payment = Payment.objects.create(psp_ref="pay_81f2")

        settled = deliver("psp.settled", "pay_81f2", id="evt_2", data={"settled_amount": 1200})
        self.assertEqual(settled.outcome, "buffered")
        payment.refresh_from_db()
        self.assertEqual(payment.current_step, "pending")

        authorised = deliver("psp.authorised", "pay_81f2", id="evt_1")
        self.assertEqual(authorised.outcome, "applied")
        self.assertEqual(authorised.record.pk, payment.pk)
        payment.refresh_from_db()
        self.assertEqual(payment.current_step, "settled")
        self.assertEqual(payment.settled_amount, 1200)
        self.assertEqual(
            [(row.to_state, row.data) for row in rows(payment, "event")],
            [
                ("authorised", {"event": "psp.authorised", "id": "evt_1"}),
                ("settled", {"event": "psp.settled", "id": "evt_2"}),
            ],
        )

        again = deliver("psp.authorised", "pay_81f2", id="evt_1")
        self.assertEqual(again.outcome, "duplicate")
        self.assertEqual(len(rows(payment, "event")), 2)

    def test_an_event_before_its_record_is_applied_when_the_record_is_created(self):
        early = deliver("psp.authorised", "pay_new", id="evt_9")
        self.assertEqual((early.outcome, early.record), ("buffered", None))
        payment = Payment.objects.create(psp_ref="pay_new")
        payment.refresh_from_db()
        self.assertEqual(payment.current_step, "authorised")
