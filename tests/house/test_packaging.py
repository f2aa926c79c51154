"""The package's metadata as ``python -m build`` reads it: no deprecated forms."""

import re
import tomllib

from tests.helpers import ROOT

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_the_license_is_an_spdx_expression_not_a_table():
    assert PYPROJECT["project"]["license"] == "MIT"


def test_the_build_needs_a_setuptools_that_reads_spdx_licenses():
    [setuptools] = [r for r in PYPROJECT["build-system"]["requires"] if r.startswith("setuptools")]
    floor = re.fullmatch(r"setuptools>=(\d+)", setuptools)
    assert floor and int(floor[1]) >= 77  # the first release reading `license = "MIT"`
