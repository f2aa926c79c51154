"""The templates, the static files and the template tags come with the installed package."""

from django.contrib.auth.models import User
from django.template import engines
from django.test import RequestFactory, TestCase, override_settings
from django.urls import reverse

from shop.models import Ticket


class AdminAndStaticTests(TestCase):
    def setUp(self):
        self.admin = User.objects.create_superuser("admin", "admin@example.com", "x")
        self.ticket = Ticket.objects.create(subject="Printer on fire")

    def test_the_change_page_shows_the_workflow_panel(self):
        self.client.force_login(self.admin)
        response = self.client.get(reverse("admin:shop_ticket_change", args=[self.ticket.pk]))
        self.assertEqual(response.status_code, 200)
        page = response.content.decode()
        self.assertIn('id="workflow-panel"', page)
        self.assertIn('data-transition="take"', page)
        self.assertIn("django_workflow/workflow.css", page)

    def test_the_changelist_and_a_transition_button(self):
        self.client.force_login(self.admin)
        response = self.client.get(reverse("admin:shop_ticket_changelist"))
        self.assertEqual(response.status_code, 200)
        self.assertContains(response, "Printer on fire")

    @override_settings(ROOT_URLCONF="shop.test_urls")
    def test_the_stylesheet_is_served(self):
        response = self.client.get("/static/django_workflow/workflow.css")
        self.assertEqual(response.status_code, 200)
        body = b"".join(response.streaming_content)
        self.assertIn(b"workflow", body)

    def test_the_template_tags_render_for_a_person(self):
        request = RequestFactory().get("/tickets/1/")
        request.user = self.admin
        template = engines["django"].from_string(
            "{% load workflow %}{% workflow_actions ticket %}{% workflow_history ticket %}"
            "{% workflow_slas ticket %}"
        )
        html = template.render({"ticket": self.ticket}, request)
        self.assertIn("workflow-actions-box", html)
        self.assertIn('data-transition="take"', html)
        self.assertIn("SLA", html)
