"""A synchronous test client of the web application on the well-kept ``httpx``: requests go
through ``httpx.ASGITransport`` straight into the application (no socket), from the client
address the test names, on one event loop that a blocking portal runs in its own thread,
so that threads may share the client as they share a server. Starlette's own TestClient is
built on the ``httpx2`` fork; the web layer has no lifespan, so nothing else is needed."""

from __future__ import annotations

from functools import partial

import anyio.from_thread
import httpx


class AppClient:
    """``with AppClient(app, client=(host, port)) as c: c.get(...)``, as the server's own page at
    ``base_url`` would ask (its ``Host``, its ``Origin``); ``raise_server_exceptions``
    (as Starlette's TestClient): an exception in the application is raised here rather than
    answered with a 500."""

    def __init__(
        self,
        app,
        raise_server_exceptions: bool = True,
        client: tuple[str, int] = ("testclient", 50000),
        base_url: str = "http://localhost",
    ):
        self._app, self._raise, self._client, self._base = app, raise_server_exceptions, client, base_url

    def __enter__(self) -> AppClient:
        self._portal_cm = anyio.from_thread.start_blocking_portal()
        self._portal = self._portal_cm.__enter__()
        transport = httpx.ASGITransport(app=self._app, raise_app_exceptions=self._raise, client=self._client)
        # as the server's own page in a browser: its Host, and its Origin on every request
        self._http = httpx.AsyncClient(transport=transport, base_url=self._base, headers={"Origin": self._base})
        return self

    def __exit__(self, *exc) -> None:
        self._portal.call(self._http.aclose)
        self._portal_cm.__exit__(*exc)

    def request(self, method: str, url: str, **kw) -> httpx.Response:
        if method in ("POST", "PUT", "DELETE") and not {"json", "content", "data", "files"} & kw.keys():
            kw["json"] = {}  # the page sends every change as JSON, an empty object when it has nothing to say
        return self._portal.call(partial(self._http.request, method, url, **kw))

    def get(self, url: str, **kw) -> httpx.Response:
        return self.request("GET", url, **kw)

    def post(self, url: str, **kw) -> httpx.Response:
        return self.request("POST", url, **kw)

    def put(self, url: str, **kw) -> httpx.Response:
        return self.request("PUT", url, **kw)

    def delete(self, url: str, **kw) -> httpx.Response:
        return self.request("DELETE", url, **kw)
