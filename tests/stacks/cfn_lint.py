"""cfn-lint on one template, with its rules loaded once per process.

``cfnlint.api.lint_file`` loads every rule again on each call (about 0.3 s of CPU: a few hundred
modules and the JSON they read), which the stack tests would pay for each of some twenty templates.
The command line loads them once for all the templates it is given; so does this, with the same
configuration ``lint_file`` uses (its defaults, the template's own metadata directives included).
"""

from __future__ import annotations

import functools
from pathlib import Path

from cfnlint.config import ConfigMixIn
from cfnlint.rules import Match
from cfnlint.runner import Runner
from cfnlint.runner.template.runner import run_template_by_file_path


@functools.cache
def _default_rules():
    return Runner(ConfigMixIn([])).rules


def lint_template(path: Path) -> list[Match]:
    """What ``cfnlint.api.lint_file(path)`` finds in the template at ``path``."""
    config = ConfigMixIn(["--template", str(path)])
    return list(run_template_by_file_path(str(path), config, _default_rules(), ignore_bad_template=False))
