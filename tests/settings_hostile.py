"""The test settings plus an app of deliberately broken workflow declarations."""

from tests.settings import *  # noqa: F403

INSTALLED_APPS = [*INSTALLED_APPS, "tests.hostile"]  # noqa: F405
