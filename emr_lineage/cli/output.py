"""How every ``emr-lineage`` command ends: the exit codes and the one-line errors of docs/cli.md.

Commands use :class:`Command` (``@click.command(cls=Command)``); it turns usage errors, an
:class:`~emr_lineage.errors.EmrLineageError`, an OS error or a surprise into one ``error:`` line on
stderr with its exit code, and Ctrl-C or SIGTERM into ``interrupted`` and 130. ``--debug`` (or
``EMR_LINEAGE_DEBUG=1``) shows the traceback of a surprise instead.
"""

from __future__ import annotations

import contextlib
import functools
import os
import select
import shutil
import signal
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn

import click

from emr_lineage.errors import EXIT_CANNOT_RUN, EXIT_INTERRUPTED, EXIT_OUTPUT_CLOSED, EmrLineageError

if TYPE_CHECKING:  # only a type here: the graph commands must not pay for importing AWS and settings
    from emr_lineage.lineage.contracts.check import EdgeDiff

DEBUG_ENV_VAR = "EMR_LINEAGE_DEBUG"


def one_line(message: object) -> str:
    """``message`` with its whitespace (newlines included) folded into single spaces."""
    return " ".join(str(message).split())


def fail(message: object, exit_code: int = EXIT_CANNOT_RUN) -> NoReturn:
    """Print ``error: <message>`` on stderr and exit."""
    click.echo(f"error: {one_line(message)}", err=True)
    sys.exit(exit_code)


def warn(message: object) -> None:
    """Print ``warning: <message>`` on stderr (a deprecated spelling, a note that changes nothing)."""
    click.echo(f"warning: {one_line(message)}", err=True)


def debugging() -> bool:
    return bool(os.environ.get(DEBUG_ENV_VAR))


def _os_error(exc: OSError) -> str:
    where = exc.filename or ""
    return f"{where}: {exc.strerror or exc}".lstrip(": ")


class Command(click.Command):
    """A command that ends as docs/cli.md says, whatever goes wrong."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        return _one_line_usage_errors(ctx, lambda: super(Command, self).parse_args(ctx, args))

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.Abort, SystemExit):
            raise
        except click.ClickException as exc:
            fail(exc.format_message(), exc.exit_code if exc.exit_code != 1 else EXIT_CANNOT_RUN)
        except EmrLineageError as exc:
            fail(exc, exc.exit_code)
        except KeyboardInterrupt:
            fail("interrupted", EXIT_INTERRUPTED)
        except OSError as exc:
            if isinstance(exc, BrokenPipeError) and _stdout_closed():
                _end_quietly()
            if debugging():
                raise
            fail(_os_error(exc))
        except Exception as exc:  # the CLI promises no tracebacks
            if debugging():
                raise
            fail(f"unexpected {type(exc).__name__}: {exc} (run with --debug for the traceback)")


def _stdout_closed() -> bool:
    """Whether nothing reads stdout any more (a pipe whose reader ended), not some other broken pipe (a socket)."""
    try:
        poll = select.poll()
        poll.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & select.POLLERR for _, events in poll.poll(0))
    except (OSError, ValueError):  # no stdout, or not a file descriptor
        return False


def _end_quietly() -> NoReturn:
    """End as Unix tools do when what reads their output stops (``| head``): no message, status 141."""
    with contextlib.suppress(OSError, ValueError):  # the interpreter's last flush must not fail again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    sys.exit(EXIT_OUTPUT_CLOSED)


def _one_line_usage_errors(ctx: click.Context, parse: Any) -> Any:
    """Run click's parsing; a usage error (unknown option or command, bad value) is one line, exit 2."""
    try:
        return parse()
    except click.UsageError as exc:
        fail(f"{exc.format_message()} (see: {ctx.command_path} --help)")


class Group(click.Group):
    """A group of commands (``emr-lineage``, ``emr-lineage schemas``): its usage errors are one line
    too, a group given no command shows its help (exit 0), and SIGTERM reads as Ctrl-C, so every
    command cleans up the same way."""

    command_class = Command
    group_class = type  # subgroups are of this same class

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("invoke_without_command", False)
        kwargs.setdefault("no_args_is_help", True)
        super().__init__(*args, **kwargs)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        # Not while the shell completes a word: the help would exit the completion.
        if not args and self.no_args_is_help and not ctx.resilient_parsing:
            click.echo(ctx.get_help())
            ctx.exit(0)
        return _one_line_usage_errors(ctx, lambda: super(Group, self).parse_args(ctx, args))

    def resolve_command(self, ctx: click.Context, args: list[str]) -> Any:
        return _one_line_usage_errors(ctx, lambda: super(Group, self).resolve_command(ctx, args))

    def main(self, *args: Any, **kwargs: Any) -> Any:
        # rich (its tables) and click (--help) end a run whose output was closed with status 1 themselves.
        try:
            return super().main(*args, **kwargs)
        except SystemExit as exc:
            if exc.code not in (0, None) and _stdout_closed():
                _end_quietly()
            raise

    def invoke(self, ctx: click.Context) -> Any:
        previous = signal.signal(signal.SIGTERM, _interrupt)
        try:
            return super().invoke(ctx)
        finally:
            signal.signal(signal.SIGTERM, previous)


class GroupArgument(click.Argument):
    """An argument of a :class:`CommandGroup`'s own command line: its commands' usage lines do not name it."""

    def get_usage_pieces(self, ctx: click.Context) -> list[str]:
        return []


class CommandGroup(Group, Command):
    """A command that also has commands (``runs`` lists runs, ``runs compare A B`` compares two): a first word
    that names one of its commands runs that command with the rest of the line (a command's name later in
    the line is refused, with where it goes); anything else is the group's own command line (options and
    arguments anywhere), run by its own callback."""

    allow_interspersed_args = True
    allow_extra_args = False  # a word its own line does not take is an error, not dropped
    _SUBCOMMAND = "emr_lineage.cli.output.CommandGroup.subcommand"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("invoke_without_command", True)
        kwargs.setdefault("no_args_is_help", False)
        super().__init__(*args, **kwargs)
        plain = [p.name for p in self.params if isinstance(p, click.Argument) and not isinstance(p, GroupArgument)]
        if plain:
            raise TypeError(f"{self.name}: the arguments {plain} are not GroupArgument (cls=GroupArgument)")

    def collect_usage_pieces(self, ctx: click.Context) -> list[str]:
        # Its subcommand_metavar spells both command lines, its own arguments too.
        return [self.options_metavar or "", self.subcommand_metavar or ""]

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        commands = self.list_commands(ctx)
        if args and args[0] in commands:
            ctx.meta[self._SUBCOMMAND] = args
            args = []  # the group's own parameters take their defaults
        elif not ctx.resilient_parsing and (misplaced := self._command_after_options(args, commands)):
            line = f"{ctx.command_path} {misplaced}"
            fail(f"{misplaced} comes first: {line} ... (see: {line} --help)")
        return Command.parse_args(self, ctx, args)

    def _command_after_options(self, args: list[str], commands: list[str]) -> str | None:
        """A command's name among ``args`` where it is no option's value (``runs --events E compare A B``)."""
        valued = {o for p in self.params if isinstance(p, click.Option) and not p.is_flag for o in p.opts}
        options = args[: args.index("--")] if "--" in args else args  # after --, a word is an argument
        pairs = zip(options, options[1:], strict=False)
        return next((word for before, word in pairs if word in commands and before not in valued), None)

    def invoke(self, ctx: click.Context) -> Any:
        subcommand = ctx.meta.pop(self._SUBCOMMAND, None)
        if subcommand is None:
            return Command.invoke(self, ctx)
        name, command, args = self.resolve_command(ctx, subcommand)
        ctx.invoked_subcommand = name
        with command.make_context(name, args, parent=ctx) as sub_ctx:
            return command.invoke(sub_ctx)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


# How each status of a contract edge is shown.
CONTRACT_STYLES = {"matched": "green", "missing": "red", "unexpected": "yellow", "optional-missing": "dim"}
# Off a terminal (CI logs, pipes, tests) tables are not folded: identifiers stay whole and greppable.
_UNFOLDED_WIDTH = 400


@functools.cache
def _stdout_console_class() -> type:
    from rich.console import Console

    class StdoutConsole(Console):
        def on_broken_pipe(self) -> None:  # rich's own ends with status 1, a failed check's
            _end_quietly()

    return StdoutConsole


def stdout_console(*, tables: bool = True, **options: Any) -> Any:
    """A rich console on stdout whose reader stopping ends the command as it ends every command (141);
    ``tables``: folded to the terminal, else whole (no style guessed from the text)."""
    if tables:
        width = shutil.get_terminal_size((160, 40)).columns if sys.stdout.isatty() else _UNFOLDED_WIDTH
        options = {"width": max(width, 100), "highlight": False, "soft_wrap": False, **options}
    return _stdout_console_class()(file=sys.stdout, **options)


def print_contract_rows(title: str, rows: Sequence[EdgeDiff]) -> None:
    """The edges of a contract result as one table on stdout (folded to the terminal, else whole)."""
    from rich.table import Table

    console = stdout_console()
    table = Table(title=title)
    for column in ("status", "job", "direction", "dataset", "hint"):
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(row.status, row.job, row.direction, row.dataset, row.hint, style=CONTRACT_STYLES.get(row.status))
    console.print(table)
