"""The deprecated spellings of the last release (:func:`deprecated_alias`; a command's old name is
``emr_lineage.cli.app.RENAMED``) and the options that no longer do anything (:func:`retired_option`): hidden,
each one ``warning:`` line when given (:func:`deprecated`; docs/cli.md, "Vocabulary")."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import click

from emr_lineage.cli.output import fail, warn

Decorator = Callable[[Any], Any]


def deprecated(old: str, new: str) -> None:
    """The one ``warning: OLD is deprecated and will be removed in the next release; use NEW`` line on stderr of
    a deprecated spelling, an option's or a command's."""
    warn(f"{old} is deprecated and will be removed in the next release; use {new}")


class _DeprecatedAlias(click.Option):
    """A hidden option of the last release's spelling: given, it prints one ``warning:`` line and hands
    its value (converted) to the new option, which then checks it as if it had been given."""

    def __init__(self, decls: Sequence[str], *, new: str, new_spelling: str, convert: Callable[[Any], Any], **kwargs):
        super().__init__(list(decls), hidden=True, expose_value=False, **kwargs)
        self.new, self.new_spelling, self.convert = new, new_spelling, convert

    def handle_parse_result(self, ctx: click.Context, opts: Mapping[str, Any], args: list[str]) -> tuple[Any, list]:
        if self.name not in opts:
            return None, args
        old = self.opts[0]
        if self.new in opts:
            fail(f"{old} and {self.new_spelling.split()[0]} both given; give only {self.new_spelling.split()[0]}")
        deprecated(old, self.new_spelling)
        # The new option is processed after this one (click processes the options not given last).
        opts[self.new] = self.convert(opts[self.name])  # type: ignore[index]
        return None, args


def deprecated_alias(
    old: str,
    new: str,
    new_spelling: str,
    *,
    convert: Callable[[Any], Any] = lambda value: value,
    is_flag: bool = False,
    metavar: str | None = None,
) -> Decorator:
    """A hidden ``old`` option that stands for the option whose parameter is ``new``: ``warning: OLD is
    deprecated and will be removed in the next release; use NEW_SPELLING`` on stderr, once."""
    name = "deprecated_" + old.lstrip("-").replace("-", "_")
    return click.option(
        old,
        name,
        cls=_DeprecatedAlias,
        new=new,
        new_spelling=new_spelling,
        convert=convert,
        is_flag=is_flag,
        metavar=metavar,
    )


def retired_option(old: str, why: str, *, is_flag: bool = False, metavar: str | None = None) -> Decorator:
    """A hidden option that no longer does anything: given, one ``warning: OLD no longer applies: WHY``."""

    def warn_once(_ctx: click.Context, _param: click.Parameter, value: Any) -> None:
        if value not in (None, False):
            warn(f"{old} no longer applies and will be removed in the next release: {why}")

    return click.option(
        old,
        "retired_" + old.lstrip("-").replace("-", "_"),
        hidden=True,
        expose_value=False,
        is_flag=is_flag,
        metavar=metavar,
        callback=warn_once,
    )
