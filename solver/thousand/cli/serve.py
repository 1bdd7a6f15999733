"""`thousand serve`: the advisor and scorekeeper as a web page."""

from __future__ import annotations

from pathlib import Path

import click

from thousand.base.i18n import _

from .options import (
    tables_option,
)

__all__ = ["lan_address", "serve"]


def lan_address() -> str:
    """This machine's address on the local network (the route a UDP socket would take; no
    packet is sent)."""
    import socket

    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("10.255.255.255", 1))
            return s.getsockname()[0]
    except OSError:
        return "127.0.0.1"


@click.command()
@click.option(
    "--host",
    default=None,
    help="Address to listen on (default 127.0.0.1, this machine alone; with --lan 0.0.0.0).",
)
@click.option(
    "--lan",
    is_flag=True,
    help="Share the page with the phones of the local network: listen beyond loopback, print the "
    "address and its QR code; each game opens on another phone only with its link (a secret token).",
)
@click.option(
    "--https",
    "https",
    is_flag=True,
    help="Serve over HTTPS with a certificate of the table's own authority (made once, kept in --certs): "
    "the phones that install the authority can install the page and open it without the server.",
)
@click.option(
    "--certs",
    "certs_dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Folder of the table's authority and certificate (default: ~/.local/state/thousand/tls).",
)
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="Port.")
@click.option(
    "--allow-host",
    "allow_hosts",
    multiple=True,
    metavar="NAME",
    help="Another name the page is opened by (a DNS name of this machine, a reverse proxy's); "
    "requests naming any other host are refused (loopback and the --lan address always work).",
)
@click.option(
    "--games",
    "games_dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Folder of the saved games (default: ~/.local/state/thousand/web).",
)
@tables_option
def serve(
    host: str | None,
    lan: bool,
    https: bool,
    certs_dir: str | None,
    port: int,
    allow_hosts: tuple[str, ...],
    games_dir: str | None,
    tables_dir: str | None,
) -> None:
    """The advisor and scorekeeper as a web page for a phone at the table (needs the web
    extra: pip install -e '.[web]')."""
    from thousand.base.errors import ThousandError as _Missing

    try:
        import uvicorn

        from thousand.web.app import create_app
    except ImportError as exc:
        raise _Missing(
            _("thousand serve needs the web extra ({0}): pip install -e '.[web]'").format(exc.name)
        ) from None

    from thousand.base.untrusted import cut, ensure_private_folder
    from thousand.web.store import default_folder

    folder = Path(games_dir) if games_dir else default_folder()
    try:
        ensure_private_folder(folder)
    except OSError as exc:
        raise _Missing(_("cannot use {0} for the saved games: {1}").format(folder, exc.strerror or exc)) from None
    host = host or ("0.0.0.0" if lan else "127.0.0.1")
    local = host in ("127.0.0.1", "localhost", "::1")
    address = lan_address() if host in ("0.0.0.0", "::") else host
    scheme, certs, tls = "http", None, {}
    if https:
        from thousand.web.tls import table_certificates

        certs = table_certificates(address, Path(certs_dir) if certs_dir else None)
        scheme, tls = "https", {"ssl_certfile": str(certs.cert), "ssl_keyfile": str(certs.key)}
    # beyond loopback every game needs its token from another device, whatever the flag
    lan_url = None if local else f"{scheme}://{address}:{port}/"
    bad = [h for h in allow_hosts if not h or any(c in h for c in "/@ ")]
    if bad:
        raise _Missing(_("--allow-host takes a host name, not {0!r}").format(cut(bad[0])))
    hosts = (*allow_hosts, *(() if host in ("0.0.0.0", "::") else (host,)))
    app = create_app(folder, tables_dir, lan_url, authority=certs.ca if certs else None, hosts=hosts)
    click.echo(
        _("thousand serve: {0}://{1}:{2}/ (games saved in {3})").format(
            scheme, "localhost" if local else host, port, folder
        )
    )
    if certs:
        click.echo(
            _(
                "HTTPS with the table's own authority {0} (SHA-256 {1}): install it once on each phone, from "
                "the page's link or {2}table-ca.crt, and the page installs there and opens without the server"
            ).format(certs.ca, certs.fingerprint, lan_url or f"https://localhost:{port}/")
        )
    if not local:
        click.echo(
            _(
                "listening on {0}: the devices of the local network can open the page; a game opens on "
                "another device only with its link, shown on the page; stop with Ctrl-C"
            ).format(host)
        )
        click.echo(_("on a phone: {0}").format(lan_url))
        try:
            import io

            import segno
        except ImportError:  # the web extra brings it; the address above is enough
            pass
        else:
            qr = io.StringIO()
            segno.make(lan_url, error="m").terminal(out=qr, compact=True)
            click.echo(qr.getvalue(), nl=False)
    uvicorn.run(app, host=host, port=port, log_level="warning", **tls)
