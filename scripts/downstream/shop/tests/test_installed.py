import sysconfig
from pathlib import Path

from django.test import SimpleTestCase

import django_workflow


class InstalledPackageTests(SimpleTestCase):
    def test_the_package_is_the_installed_wheel_not_a_checkout(self):
        location = Path(django_workflow.__file__).resolve()
        site_packages = Path(sysconfig.get_paths()["purelib"]).resolve()
        self.assertTrue(
            location.is_relative_to(site_packages),
            f"django_workflow comes from {location}, not from {site_packages}",
        )
        # The package data a wheel must carry.
        package = location.parent
        for name in (
            "py.typed",
            "templates/admin/django_workflow/panel.html",
            "templates/django_workflow/actions.html",
            "static/django_workflow/workflow.css",
            "migrations/0001_initial.py",
        ):
            self.assertTrue((package / name).is_file(), f"the installed package lacks {name}")
