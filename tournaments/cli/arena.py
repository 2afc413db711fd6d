"""``nap arena``: the command line's side of an arena: signing in, its people, following a submission.

Every command here is a client of the arena's API (:mod:`tournaments.arena.client`, the
standard library's HTTP): it asks the arena at ``--arena URL``, else ``$NAP_ARENA_URL``,
else the one ``nap arena login`` saved, with ``$NAP_ARENA_TOKEN`` or the saved token.
``nap bot submit FOLDER --arena`` uploads a bot through :func:`submit_folder`, and
``--wait`` there and on ``nap arena status`` follows it with :func:`follow`.

The arena itself (``nap arena serve``) is a command of this group too; whatever it needs
is imported when it runs, so that these commands stay quick to start.
"""

from __future__ import annotations

import io
import os
import sys
import time
from typing import TYPE_CHECKING, Final, Self

import click
from rich.console import Console

from tournaments.arena.client import (
    TOKEN_VARIABLE,
    URL_VARIABLE,
    ArenaClient,
    ClientError,
    Connection,
    SubmissionView,
    checked_token,
    config_path,
    connect,
    normalize_url,
    read_config,
    sent_in_clear,
    write_config,
)
from tournaments.cli.app import echo_json, friendly, json_option, print_table
from tournaments.plan.manifest import read_manifest
from tournaments.plan.versions import pack

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from tournaments.arena.client import Step

__all__ = ["OUTAGE_S", "POLL_S", "arena", "follow", "pause", "submit_folder"]

POLL_S: Final = 2.0
"""How often ``--wait`` asks the arena about the submission it follows (one small request)."""
OUTAGE_S: Final = 300.0
"""How long ``--wait`` keeps asking an arena that does not answer (restarting, say) before it gives up."""
EXIT_REFUSED: Final = 1
EXIT_STOPPED: Final = 130
"""``--wait`` stopped by Ctrl-C (the submission goes on in the arena), as a shell counts SIGINT."""

arena_option = click.option(
    "--arena",
    "arena_url",
    metavar="URL",
    default=None,
    help=f"The arena's address (default: ${URL_VARIABLE}, else the one nap arena login saved).",
)


def pause(seconds: float) -> None:
    """Wait ``seconds`` between two questions to the arena (a test makes its time pass without waiting)."""
    time.sleep(seconds)


def _client(arena_url: str | None) -> ArenaClient:
    return ArenaClient(connect(url=arena_url, environ=os.environ))


def _note(text: str) -> None:
    """A line for the person on stderr: stdout keeps only what the command gives (a token, JSON)."""
    click.echo(text, err=True)


@click.group()
def arena() -> None:
    """Take part in an arena: sign in, submit bots and follow them, manage its people.

    \b
    A participant, with the token the arena's organiser gave them:
      nap arena login URL              check the token and save it (asked without echo)
      nap bot submit mybot --arena     upload a bot; prints its submission's number
      nap arena status N --wait        follow it until it is placed on the ladder, or refused
    An organiser, with an admin token:
      nap arena user add alice         alice's token, shown once
      nap arena user list              everyone, with their valid tokens
      nap arena user revoke alice      revoke all of alice's tokens

    The arena is --arena URL, else $NAP_ARENA_URL, else the one nap arena login saved; the
    token $NAP_ARENA_TOKEN, else the saved one ($XDG_CONFIG_HOME/nap/arena.toml, by default
    ~/.config/nap/arena.toml, readable by you only). The saved token is sent only to the
    arena it was saved for.
    """  # noqa: D301 - click's no-rewrap marker is the \b character itself


@arena.command("login")
@click.argument("url", required=False)
@friendly
def login(url: str | None) -> None:
    """Sign in to the arena at URL: check a token with it, then save both for the next commands.

    The token is asked for without echo or, when stdin is not a terminal, read from its
    first line (echo "$TOKEN" | nap arena login URL). It is saved with URL in
    $XDG_CONFIG_HOME/nap/arena.toml (~/.config/nap/arena.toml), which only you may read;
    a later login replaces them. Without URL: $NAP_ARENA_URL, else the arena saved before.
    """
    environ = os.environ
    if url is None:
        url = environ.get(URL_VARIABLE) or read_config(config_path(environ)).url
        if url is None:
            msg = "give the arena's address: nap arena login URL"
            raise ClientError(msg)
    address = normalize_url(url)
    token = checked_token(_read_token(address), "the token given")
    given = Connection(url=address, token=token, token_source="the token given")  # noqa: S106 - its source
    me = ArenaClient(given).me()
    path = config_path(environ)
    write_config(path, url=address, token=token)
    click.echo(f"signed in to {address} as {me.name} ({', '.join(me.scopes)}); saved in {path}")
    if environ.get(TOKEN_VARIABLE):
        _note(f"note: ${TOKEN_VARIABLE} is set, and goes before the saved token until you unset it")
    if environ.get(URL_VARIABLE) and normalize_url(environ[URL_VARIABLE]) != address:
        _note(f"note: ${URL_VARIABLE} names another arena, asked instead of this one until you unset it")
    if sent_in_clear(address):
        _note(
            "note: http:// sends your token unencrypted over the network: prefer the arena's https:// address"
        )


def _read_token(address: str) -> str:
    """The token typed at a prompt without echo, or the first line of stdin when it is not a terminal."""
    if sys.stdin.isatty():
        typed: str = click.prompt(
            f"token for {address}", hide_input=True, err=True, default="", show_default=False
        )
    else:
        typed = sys.stdin.readline()
    if not typed.strip():
        msg = "no token given: paste the token the arena's organiser gave you"
        raise ClientError(msg)
    return typed.strip()


# People


@arena.group("user")
def user() -> None:
    """The arena's people and their tokens (an admin's commands; anyone may make their own new token)."""


@user.command("add")
@click.argument("name")
@click.option("--admin", is_flag=True, help="An organiser: may add people and see everything of everyone's.")
@json_option
@arena_option
@friendly
def user_add(name: str, admin: bool, as_json: bool, arena_url: str | None) -> None:  # noqa: FBT001 - click flags
    """Add NAME to the arena, with a token that is shown this once.

    The token alone goes to stdout (the rest to stderr), so that a script can keep it:
    TOKEN=$(nap arena user add alice). Give it to NAME privately; they sign in with
    nap arena login URL. A lost token cannot be shown again: nap arena user token NAME
    makes a new one.
    """
    client = _client(arena_url)
    token = client.add_person(name, admin=admin)
    if as_json:
        echo_json({"name": name, "admin": admin, "token": token})
        return
    _note(f"added {name}{' (admin)' if admin else ''} to {client.url}; their token, shown only this once:")
    click.echo(token)
    _note(f"give it to {name} privately: they sign in with nap arena login {client.url}")


@user.command("list")
@json_option
@arena_option
@friendly
def user_list(as_json: bool, arena_url: str | None) -> None:  # noqa: FBT001 - a click flag
    """Everyone in the arena: admin or not, how many valid tokens, since when."""
    people = _client(arena_url).people()
    if as_json:
        echo_json(
            [
                {"name": p.name, "admin": p.admin, "created_at": p.created_at, "tokens": p.tokens}
                for p in people
            ]
        )
        return
    rows = [(p.name, "admin" if p.admin else "", str(p.tokens), _when(p.created_at)) for p in people]
    print_table(("name", "admin", "valid tokens", "added (UTC)"), rows)


@user.command("revoke")
@click.argument("name")
@arena_option
@friendly
def user_revoke(name: str, arena_url: str | None) -> None:
    """Revoke every token of NAME: none of them signs in any more (their submissions stay)."""
    revoked = _client(arena_url).revoke(name)
    if revoked == 0:
        click.echo(f"{name} had no valid token")
        return
    click.echo(
        f"revoked {revoked} token{'s' if revoked != 1 else ''} of {name} "
        f"(nap arena user token {name} makes a new one)"
    )


@user.command("token")
@click.argument("name")
@json_option
@arena_option
@friendly
def user_token(name: str, as_json: bool, arena_url: str | None) -> None:  # noqa: FBT001 - a click flag
    """A new token for NAME (an admin's, or your own), shown this once; the older ones stay valid.

    The token alone goes to stdout (the rest to stderr). To replace a leaked token:
    nap arena user revoke NAME, then this.
    """
    client = _client(arena_url)
    token = client.new_token(name)
    if as_json:
        echo_json({"name": name, "token": token})
        return
    _note(f"a new token for {name} at {client.url}, shown only this once:")
    click.echo(token)


# Submissions


@arena.command("status")
@click.argument("number", metavar="[ID]", type=click.IntRange(1), required=False)
@click.option(
    "--wait",
    is_flag=True,
    help="Follow submission ID (default: your latest) until it is placed or refused; see the exit status.",
)
@click.option(
    "--owner", metavar="NAME", help="Only NAME's submissions (an admin's; an admin sees everyone's)."
)
@json_option
@arena_option
@friendly
def status(number: int | None, wait: bool, owner: str | None, as_json: bool, arena_url: str | None) -> None:  # noqa: FBT001 - click flags
    """Your submissions to the arena, or submission ID with its whole admission log.

    A submission goes queued, building, checking, placing (its placement blocks against
    the anchors), then placed with a provisional rating; or refused, with the reason, at
    any step. --wait follows one, printing each step of its admission as it comes (it
    asks every 2 s, and keeps asking for 5 minutes while the arena does not answer).

    \b
    Exit status with --wait:
      0    placed (or retired since by your newer versions)
      1    refused; or the arena could not be asked (the line says which)
      130  stopped with Ctrl-C (the submission goes on in the arena)
    """  # noqa: D301 - click's no-rewrap marker is the \b character itself
    client = _client(arena_url)
    if number is None and not wait:
        _list_submissions(client, owner=owner, as_json=as_json)
        return
    if number is None:
        mine = client.submissions(owner=owner)
        if not mine:
            msg = "no submission to follow: nap bot submit FOLDER --arena uploads a bot"
            raise ClientError(msg)
        number = mine[-1].id
    if wait:
        code = follow(client, number, as_json=as_json)
        if code:
            raise SystemExit(code)
        return
    found_one = client.submission(number)
    if as_json:
        echo_json(found_one.document)
        return
    for line in _header(found_one):
        click.echo(line)
    for step in found_one.steps or ():
        click.echo(_step_line(step))


def _list_submissions(client: ArenaClient, *, owner: str | None, as_json: bool) -> None:
    found = client.submissions(owner=owner)
    if as_json:
        echo_json([s.document for s in found])
    elif not found:
        click.echo("no submissions yet: nap bot submit FOLDER --arena uploads a bot")
    else:
        _submissionsprint_table(found)


def follow(client: ArenaClient, number: int, *, as_json: bool = False, header: bool = True) -> int:
    """Follow submission ``number`` until placed or refused, printing each new step; the exit status.

    A question the arena does not answer (it is restarting, or stopping: 503) is asked again
    for up to :data:`OUTAGE_S`; a progress line on stderr (a terminal's only) says where it
    is. ``as_json``: print only the last answer, as one JSON document; ``header``: begin with
    the submission's first line (who, which bot, its status).
    """
    try:
        found = _followed(client, number, quiet=as_json, header=header)
    except KeyboardInterrupt:
        _note(f"stopped following; submission {number} goes on in the arena: nap arena status {number}")
        return EXIT_STOPPED
    if as_json:
        echo_json(found.document)
    elif found.status == "refused":
        click.echo(f"submission {number} refused: {found.reason or 'no reason given'}")
    else:
        click.echo(f"submission {number} {found.status}" + (f" as {found.entry}" if found.entry else ""))
    return EXIT_REFUSED if found.status == "refused" else 0


def _followed(client: ArenaClient, number: int, *, quiet: bool, header: bool) -> SubmissionView:
    """Ask about submission ``number`` every :data:`POLL_S` until it is final; it then."""
    shown, waited, down = 0, 0.0, 0.0
    with _Progress() as progress:
        while True:
            try:
                found = client.submission(number)
            except ClientError as exc:
                if not exc.transient or down >= OUTAGE_S:
                    raise
                if down == 0:
                    progress.say([f"{exc}; asking again for up to {OUTAGE_S / 60:g} minutes"], err=True)
                down += POLL_S
            else:
                if down:
                    progress.say([f"the arena at {client.url} answers again"], err=True)
                down = 0.0
                steps = found.steps or ()
                if not quiet:
                    first = _header(found)[:1] if header and shown == 0 else []
                    progress.say([*first, *(_step_line(step) for step in steps[shown:])])
                shown = len(steps)
                if found.final:
                    return found
                progress.update(f"submission {number}: {found.status} ({_elapsed(waited)} so far)")
            pause(POLL_S)
            waited += POLL_S


class _Progress:
    """``--wait``'s progress line on stderr, where stdout is a terminal too (a pipe gets the lines alone).

    It is drawn from the first :meth:`update` on, and taken down while lines are printed,
    so that none lands in the middle of it.
    """

    def __init__(self) -> None:
        screen = Console(stderr=True) if sys.stdout.isatty() else Console(file=io.StringIO())
        self._status = screen.status("")
        self._drawn = False

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self._status.stop()

    def update(self, text: str) -> None:
        """Show ``text`` on the progress line."""
        self._status.update(text)
        if not self._drawn:
            self._status.start()
            self._drawn = True

    def say(self, lines: Sequence[str], *, err: bool = False) -> None:
        """Print ``lines`` (on stderr: ``err``) above the progress line."""
        if not lines:
            return
        self._status.stop()
        for line in lines:
            click.echo(line, err=err)
        if self._drawn:
            self._status.start()


def submit_folder(folder: Path, *, arena_url: str | None, wait: bool) -> int:
    """``nap bot submit FOLDER --arena``: upload the folder's pack; the exit status (``wait``: follow it).

    The manifest is read first, so that a bad one is refused before anything is sent; the
    arena builds and checks the bot itself.
    """
    manifest = read_manifest(folder)
    client = _client(arena_url)
    data = pack(manifest.folder)
    submission = client.submit(data)
    click.echo(
        f"submitted {manifest.name} {manifest.version} ({len(data):,} bytes) to {client.url}: "
        f"submission {submission.id}, {submission.status}"
    )
    if wait:
        return follow(client, submission.id, header=False)
    where = "" if client.url == client.connection.default_url else f" --arena {client.url}"
    click.echo(f"follow it: nap arena status {submission.id} --wait{where}")
    return 0


# How submissions read


def _header(found: SubmissionView) -> list[str]:
    bot = " ".join(part for part in (found.name, found.version) if part) or "(manifest not read yet)"
    lines = [f"submission {found.id} by {found.owner}: {bot}, {found.status}"]
    if found.entry:
        lines[0] += f" (entry {found.entry})"
    if found.rating is not None:
        lines.append(f"rating: {_rating(found)} chips a session against the anchors")
    if found.reason:
        lines.append(f"{found.status}: {found.reason}")
    lines.append(f"submitted {_when(found.submitted_at)} UTC")
    return lines


def _step_line(step: Step) -> str:
    first, *rest = step.text.splitlines() or [""]
    indent = " " * 20
    return "\n".join([f"  {step.at[11:19]}  {step.step:<9} {first}", *(indent + line for line in rest)])


def _rating(found: SubmissionView) -> str:
    if found.rating is None:
        return ""
    mean, half, blocks = found.rating
    spread = "" if half is None else f" ± {half:.2f}"
    return f"{mean:+.2f}{spread} ({blocks} blocks)"


def _submissionsprint_table(found: Sequence[SubmissionView]) -> None:
    owners = len({s.owner for s in found}) > 1
    headers = (
        "id",
        *(("owner",) if owners else ()),
        "bot",
        "version",
        "status",
        "entry",
        "rating",
        "submitted (UTC)",
        "note",
    )
    rows = [
        (
            str(s.id),
            *((s.owner,) if owners else ()),
            s.name or "",
            s.version or "",
            s.status,
            s.entry or "",
            _rating(s),
            _when(s.submitted_at),
            s.reason or "",
        )
        for s in found
    ]
    print_table(headers, rows)


def _when(at: str) -> str:
    """An ISO 8601 time as ``2025-06-01 10:00:00``."""
    return at[:19].replace("T", " ")


def _elapsed(seconds: float) -> str:
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes}:{rest:02d}"


def _serve() -> None:
    """``nap arena serve`` joins the group (its module imports the server only when it runs)."""
    from tournaments.cli.arena_serve import serve  # noqa: PLC0415 - a module of the group's own

    arena.add_command(serve)


_serve()
