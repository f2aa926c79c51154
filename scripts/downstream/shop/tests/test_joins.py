from django.test import TestCase

from shop.models import Line, Order

from .helpers import moves, rows


class JoinAndCascadeTests(TestCase):
    def test_the_order_ships_once_every_line_is_done(self):
        order = Order.objects.create(reference="A-1")
        first = Line.objects.create(order=order, sku="bolt")
        second = Line.objects.create(order=order, sku="nut")
        order.close()
        self.assertEqual(order.current_step, "picking")

        first.pack()
        order.refresh_from_db()
        self.assertEqual(order.current_step, "picking")

        second.void()
        order.refresh_from_db()
        self.assertEqual(order.current_step, "shipping")
        [join] = rows(order, "join")
        self.assertEqual((join.from_state, join.to_state), ("picking", "shipping"))
        self.assertEqual(join.data, {"child": f"shop.Line {second.pk}"})

    def test_an_order_without_lines_moves_on_at_once(self):
        order = Order.objects.create(reference="A-2")
        order.close()
        order.refresh_from_db()
        self.assertEqual(order.current_step, "shipping")

    def test_cancelling_the_order_voids_its_open_lines(self):
        order = Order.objects.create(reference="B-1")
        packed = Line.objects.create(order=order, sku="bolt")
        open_lines = [Line.objects.create(order=order, sku=sku) for sku in ("nut", "washer")]
        packed.pack()
        order.close()

        order.cancel(comment="Customer changed their mind")
        self.assertEqual(order.current_step, "cancelled")
        self.assertEqual(moves(order)[-1], ("picking", "cancelled", "manual", "cancel"))
        self.assertEqual(
            order.history().last().data,
            {"cascaded": 2, "cascade": {"lines": {"moved": 2, "stayed": 1}}},
        )
        for line in open_lines:
            line.refresh_from_db()
            self.assertEqual(line.current_step, "void")
            self.assertEqual(moves(line)[-1], ("open", "void", "cascade", "void"))
        packed.refresh_from_db()
        self.assertEqual(packed.current_step, "packed")
