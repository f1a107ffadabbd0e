"""The MCP server: toolsets registered on the SDK's low-level server, served over stdio.

Every tool call is parsed into its tool's request model, run, and answered with the
result as structuredContent plus the same JSON as text; ``ok: false`` sets isError.
No exception crosses the JSON-RPC boundary, and the stdio transport owns stdout, so
only JSON-RPC frames ever reach it (logs and the banner go to stderr).
"""

from __future__ import annotations

import base64
import logging
import os
import signal
import sys
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from functools import cached_property
from typing import Any, Final, cast

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.shared.exceptions import MCPError

from doiget import __version__, metrics
from doiget.config import KNOWN_TOOLSETS
from doiget.envelopes import Rendered
from doiget.errors import DoigetError, ErrorCode, quoted
from doiget.installed import servable
from doiget.owner import LOCAL, owned_by
from doiget.redaction import redact_known, redact_value
from doiget.runtime import Runtime
from doiget.server import dynamic
from doiget.server.dynamic import DynamicToolsets, Switches, switching
from doiget.server.framing import checked_stdio
from doiget.server.lifecycle import GRACE_SECONDS, draining
from doiget.server.oauth.scopes import INSUFFICIENT_SCOPE, ToolScopes
from doiget.server.snapshot import listing, stored
from doiget.server.tokens import holder
from doiget.server.toolset import ServedTool, Toolset

logger = logging.getLogger("doiget.server")

WAITING_NOTE: Final = (
    "doiget serve: waiting for an MCP client on stdin (JSON-RPC); this is not an interactive "
    "shell. Add doiget to your MCP client's configuration instead (see the README); "
    "Ctrl-C or Ctrl-D ends it."
)
INSTRUCTIONS: Final = "doiget finds, resolves, fetches and cites scholarly papers."
RESOURCE_PAGE: Final = 500
# What an approval asks of the user: one yes or no.
APPROVAL_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {"approve": {"type": "boolean", "title": "Approve this write"}},
    "required": ["approve"],
}
RESOURCE_NOT_FOUND: Final = -32002
# A resource that exists but cannot be served (a JSON-RPC implementation-defined code);
# the error's data is doiget's {code, message}.
RESOURCE_REFUSED: Final = -32000


def served_toolsets(runtime: Runtime) -> tuple[str, ...]:
    """The selected toolsets this install can run; each one left out is said on stderr."""
    served, off = servable(runtime.settings.toolsets, runtime.settings)
    for name, reason in off.items():
        logger.warning("the %s toolset is off: it %s", name, reason)
    return served


def build_toolsets(runtime: Runtime, names: Sequence[str]) -> list[Toolset]:
    """The toolsets ``names``; a toolset not named is not even imported."""
    return [_factory(name)(runtime) for name in names]


def _factory(name: str) -> Callable[[Runtime], Toolset]:
    if name == "papers":
        from doiget.server.papers_tools import papers_toolset

        return papers_toolset
    if name == "scholar":
        from doiget.server.scholar_tools import scholar_toolset

        return scholar_toolset
    if name == "library":
        from doiget.server.library_tools import library_toolset

        return library_toolset
    if name == "zotero":
        from doiget.server.zotero_tools import zotero_toolset

        return zotero_toolset
    from doiget.server.web_tools import web_toolset

    return web_toolset


class _Call:
    """Progress reporting for one tool call (silent when the client sent no token), and
    what it may ask of the client (its roots, the user's approval)."""

    def __init__(self, ctx: ServerRequestContext[Any]) -> None:
        self._ctx = ctx
        meta: Mapping[str, Any] = ctx.meta or {}
        self._token = meta.get("progress_token", meta.get("progressToken"))

    async def progress(self, done: float, total: int, message: str) -> None:
        if self._token is None:
            return
        try:
            await self._ctx.session.send_progress_notification(
                self._token,
                float(done),
                float(total),
                message,
                related_request_id=str(self._ctx.request_id),
            )
        except Exception:  # a closed client must not fail the work itself
            logger.debug("progress notification not delivered", exc_info=True)

    async def roots(self) -> list[str]:
        session = self._ctx.session
        wanted = types.ClientCapabilities(roots=types.RootsCapability())
        if not session.check_client_capability(wanted):
            return []
        with warnings.catch_warnings():  # roots are deprecated in a later protocol revision
            warnings.simplefilter("ignore")
            try:
                listed = await session.list_roots()
            except Exception:  # a client that cannot answer declares nothing
                logger.warning("the client's roots/list failed", exc_info=True)
                return []
        return [path for root in listed.roots if (path := _local_path(str(root.uri)))]

    async def confirm(self, message: str, details: Mapping[str, Any]) -> bool | None:
        session = self._ctx.session
        wanted = types.ClientCapabilities(elicitation=types.ElicitationCapability())
        if not session.check_client_capability(wanted):
            return None
        try:
            answer = await session.elicit_form(
                _asked(message, details), APPROVAL_SCHEMA, related_request_id=self._ctx.request_id
            )
        except Exception:  # a client that cannot answer has not approved anything
            logger.warning("the client's elicitation failed", exc_info=True)
            return None
        return answer.action == "accept" and (answer.content or {}).get("approve") is True


def _asked(message: str, details: Mapping[str, Any]) -> str:
    """The question put to the user: the message, then each detail on its own line."""
    lines = [f"{name}: {value}" for name, value in details.items() if value not in (None, "", [])]
    return "\n".join([message, *lines])


def _local_path(uri: str) -> str | None:
    """The local path a ``file://`` root names (None for another host or scheme)."""
    from urllib.parse import unquote, urlsplit

    parts = urlsplit(uri)
    if parts.scheme != "file" or parts.netloc not in ("", "localhost"):
        return None
    return unquote(parts.path) or None


def _ref_of(spec: ServedTool | None, arguments: Any) -> str | None:
    """The ref a papers tool was called with, echoed in its error."""
    field = spec.ref_field if spec else None
    ref = arguments.get(field) if field and isinstance(arguments, dict) else None
    return ref if isinstance(ref, str) else None


def _owner(ctx: ServerRequestContext[Any]) -> str:
    """Who the call is for: the token id over HTTP, else the one local owner."""
    scope = getattr(ctx.request, "scope", None)
    return holder(scope, LOCAL) if isinstance(scope, Mapping) else LOCAL


def _switches(ctx: ServerRequestContext[Any]) -> Switches:
    """The toolsets this call's connection has on. The SDK keeps per-connection state
    on the connection, which the low-level request context reaches through its session."""
    state: dict[str, Any] = ctx.session._connection.state
    switches = state.setdefault("doiget.toolsets", Switches())
    switches.announce = ctx.session.send_tool_list_changed
    return cast(Switches, switches)


class _ListChangingServer(Server[Any]):
    """The SDK server declaring ``tools.listChanged``: over stdio and in every HTTP
    session, whose initialisation the SDK's session manager builds itself."""

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        return super().create_initialization_options(
            notification_options or NotificationOptions(tools_changed=True),
            experimental_capabilities,
            extensions,
        )


def _tool_result(rendered: Rendered) -> types.CallToolResult:
    # The last gate before the wire: no tool output carries a known credential.
    rendered = replace(
        rendered, text=redact_known(rendered.text), structured=redact_value(rendered.structured)
    )
    content: list[Any] = [types.TextContent(type="text", text=rendered.text)]
    if rendered.link is not None:
        link = rendered.link
        content.append(
            types.ResourceLink(
                type="resource_link",
                uri=link.uri,
                name=link.name,
                mime_type=link.mime_type,
                size=link.size,
                description=link.description,
            )
        )
    return types.CallToolResult(
        _meta=rendered.meta,
        content=content,
        structured_content=rendered.structured,
        is_error=rendered.is_error,
    )


class DoigetServer:
    """Routes MCP requests to the tools and resources of the selected toolsets.

    The instructions and tools/list come from the generated listing when it covers the
    selected toolsets; the toolsets themselves are imported and built at first use.
    """

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self._toolsets: list[Toolset] | None = None
        dynamic_mode = runtime.settings.dynamic_toolsets
        if dynamic_mode:
            # Every toolset this install can serve may be enabled; the others say why not.
            self.served, off = servable(KNOWN_TOOLSETS, runtime.settings)
        else:
            self.served, off = served_toolsets(runtime), {}
        self.listing = listing(self.served)
        self.dynamic = DynamicToolsets(self._owners(), off) if dynamic_mode else None
        # The scopes tool calls need (OAuth over HTTP); None: every call is allowed.
        self.scopes: ToolScopes | None = None

    @property
    def toolsets(self) -> list[Toolset]:
        """The selected toolsets, built on first use."""
        if self._toolsets is None:
            self._toolsets = build_toolsets(self.runtime, self.served)
        return self._toolsets

    def _owners(self) -> dict[str, str]:
        """Each served tool's toolset."""
        if self.listing is not None:
            manifest = stored()
            return {tool["name"]: name for name in self.served for tool in manifest[name]["tools"]}
        return {spec.name: toolset.name for toolset in self.toolsets for spec in toolset.tools}

    def _entries(self) -> list[dict[str, Any]]:
        """The tools/list entries of every served tool (``doiget_toolsets`` included)."""
        if self.listing is not None:
            entries = list(self.listing.tools)
        else:
            entries = [tool_entry(spec).model_dump(by_alias=True) for spec in self.tools.values()]
        if self.dynamic is not None:
            entries.append(self._switch_entry)
        return entries

    @cached_property
    def _switch_entry(self) -> dict[str, Any]:
        assert self.dynamic is not None
        return tool_entry(self.dynamic.tool).model_dump(
            by_alias=True, exclude_none=True, mode="json"
        )

    def read_only_tools(self) -> frozenset[str]:
        """The tools whose annotations say they only read."""
        entries = self._entries()
        return frozenset(
            entry["name"]
            for entry in entries
            if (entry.get("annotations") or {}).get("readOnlyHint") is True
        )

    @cached_property
    def tools(self) -> dict[str, ServedTool]:
        """The selected toolsets' tools by name."""
        return {spec.name: spec for toolset in self.toolsets for spec in toolset.tools}

    def build(self) -> Server[Any]:
        """The SDK server with doiget's handlers."""
        if self.dynamic is not None:
            instructions = [dynamic.INSTRUCTIONS]
        elif self.listing is not None:
            instructions = self.listing.instructions
        else:
            instructions = [toolset.instructions for toolset in self.toolsets]
        kind = Server if self.dynamic is None else _ListChangingServer
        return kind(
            "doiget",
            version=__version__,
            instructions=" ".join([INSTRUCTIONS, *instructions]),
            on_list_tools=self.list_tools,
            on_call_tool=self.call_tool,
            on_list_resources=self.list_resources,
            on_list_resource_templates=self.list_resource_templates,
            on_read_resource=self.read_resource,
        )

    async def close(self) -> None:
        """Close every toolset built (index, provenance session), then the shared network."""
        for toolset in self._toolsets or ():
            if toolset.close is not None:
                try:
                    await toolset.close()
                except Exception:
                    logger.exception("closing the %s toolset failed", toolset.name)
        await self.runtime.aclose()

    # -- tools --------------------------------------------------------------------

    async def list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        entries = self._entries()
        if self.dynamic is not None:
            enabled = _switches(ctx).enabled
            entries = [entry for entry in entries if self.dynamic.listed(entry["name"], enabled)]
        return types.ListToolsResult(tools=[types.Tool.model_validate(entry) for entry in entries])

    async def call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        """Run a tool; counted and timed by tool and outcome when metrics are on."""
        began = time.perf_counter()
        switches = _switches(ctx) if self.dynamic is not None else Switches()
        with owned_by(_owner(ctx)), switching(switches):
            result = await self._call_tool(ctx, params, switches.enabled)
        tool = params.name if self._spec(params.name) is not None else "unknown"
        metrics.count("tool_calls", tool=tool, outcome="error" if result.is_error else "ok")
        metrics.observe("tool_call_seconds", time.perf_counter() - began, tool=tool)
        return result

    def _check_scope(self, ctx: ServerRequestContext[Any], tool: str | None, what: str) -> None:
        """Refuse a call of ``tool`` (None: a resource read, which needs the read scope)
        the caller's access token has not the scope for; ``what`` names it."""
        scope = getattr(ctx.request, "scope", None)
        if self.scopes is None or not isinstance(scope, Mapping):
            return
        wanted = self.scopes.read if tool is None else self.scopes.needed(tool)
        needed = self.scopes.lacking(scope, wanted)
        if needed is not None:
            raise MCPError(
                INSUFFICIENT_SCOPE,
                self.scopes.refusal_text(what, needed),
                {"scope": needed},
            )

    def _spec(self, name: str) -> ServedTool | None:
        if self.dynamic is not None and name == dynamic.NAME:
            return self.dynamic.tool
        return self.tools.get(name)

    async def _call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams, enabled: set[str]
    ) -> types.CallToolResult:
        self._check_scope(ctx, params.name, params.name)
        spec = self._spec(params.name)
        if spec is None:
            # Not a tool's failure but a bad request: the protocol's own answer to it.
            raise MCPError(
                types.INVALID_PARAMS,
                f"Unknown tool: {quoted(params.name)}; call tools/list for the tools this "
                "server offers.",
            )
        envelope = spec.envelope
        arguments = params.arguments
        if self.dynamic is not None and not self.dynamic.listed(params.name, enabled):
            refusal = self.dynamic.refusal(params.name)
            return _tool_result(envelope.failure(refusal, _ref_of(spec, arguments)))
        try:
            return _tool_result(envelope.success(await spec.call(arguments, _Call(ctx))))
        except DoigetError as error:
            return _tool_result(envelope.failure(error, _ref_of(spec, arguments)))
        except Exception as exc:
            logger.exception("tool %s failed unexpectedly", params.name)
            internal = DoigetError(
                ErrorCode.INTERNAL_ERROR,
                f"doiget failed unexpectedly ({type(exc).__name__}); the details are in its "
                "log (stderr). Retry once; report it if it persists.",
            )
            return _tool_result(envelope.failure(internal, _ref_of(spec, arguments)))

    # -- resources ----------------------------------------------------------------

    async def list_resources(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        items = []
        for toolset in self.toolsets:
            if toolset.list_resources is not None:
                items += await toolset.list_resources()
        cursor = params.cursor if params is not None else None
        start = int(cursor) if cursor and cursor.isdigit() else 0
        page = items[start : start + RESOURCE_PAGE]
        more = start + RESOURCE_PAGE < len(items)
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    uri=item.uri,
                    name=item.name,
                    title=item.title,
                    mime_type=item.mime_type,
                    size=item.size,
                )
                for item in page
            ],
            next_cursor=str(start + RESOURCE_PAGE) if more else None,
        )

    async def list_resource_templates(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        templates = [
            types.ResourceTemplate(
                uri_template=template.uri_template,
                name=template.name,
                description=template.description,
                mime_type=template.mime_type,
            )
            for toolset in self.toolsets
            for template in toolset.templates
        ]
        return types.ListResourceTemplatesResult(resource_templates=templates)

    async def read_resource(
        self, ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        self._check_scope(ctx, None, uri)
        for toolset in self.toolsets:
            if toolset.read_resource is None:
                continue
            with owned_by(_owner(ctx)):
                try:
                    body = await toolset.read_resource(uri)
                except DoigetError as error:
                    refusal = f"{error.code}: {error.message}"
                    raise MCPError(RESOURCE_REFUSED, refusal, error.to_dict()) from None
            if body is None:
                continue
            if body.data is not None:
                blob = base64.b64encode(body.data).decode("ascii")
                content: Any = types.BlobResourceContents(
                    uri=uri, mime_type=body.mime_type, blob=blob
                )
            else:
                content = types.TextResourceContents(
                    uri=uri, mime_type=body.mime_type, text=body.text or ""
                )
            return types.ReadResourceResult(contents=[content])
        raise MCPError(
            RESOURCE_NOT_FOUND,
            f"no resource {uri[:200]}; list resources to see the stored papers "
            "(web results linked as research://artifact/... expire 30 minutes after the call).",
        )


def tool_entry(spec: ServedTool) -> types.Tool:
    """The tools/list entry of ``spec``."""
    return types.Tool(
        name=spec.name,
        description=spec.description,
        input_schema=dict(spec.input_schema),
        output_schema=dict(spec.output_schema),
        annotations=types.ToolAnnotations(
            read_only_hint=spec.hints.read_only,
            destructive_hint=spec.hints.destructive,
            idempotent_hint=spec.hints.idempotent,
            open_world_hint=spec.hints.open_world,
        ),
    )


# The exit status after a stop by signal: SIGTERM is the host's ordinary way to end a
# server; Ctrl-C ends it as it ends any command, with the shell's 128 + SIGINT.
_STOP_STATUS: Final = {signal.SIGTERM: 0, signal.SIGINT: 128 + signal.SIGINT}


class _StopSignal:
    """Turns SIGTERM or SIGINT (Ctrl-C) into a cancelled server, and remembers which
    came. Only the first is taken here: a second Ctrl-C during the graceful stop
    reaches the program's own handler, which ends it at once."""

    def __init__(self) -> None:
        self.received: signal.Signals | None = None

    async def watch(self, scope: anyio.CancelScope) -> None:
        with anyio.open_signal_receiver(*_STOP_STATUS) as signals:
            async for signum in signals:
                logger.info("%s: shutting down", signal.Signals(signum).name)
                self.received = signal.Signals(signum)
                scope.cancel()
                return


async def serve_stdio(runtime: Runtime) -> None:
    """Serve until stdin closes or SIGTERM / SIGINT arrives, then close everything
    cleanly."""
    app = DoigetServer(runtime)
    server = app.build()
    stop = _StopSignal()
    if sys.stdin.isatty():
        # Started by hand: say what it is waiting for (stderr; stdout is JSON-RPC only).
        print(WAITING_NOTE, file=sys.stderr, flush=True)
    try:
        async with checked_stdio() as (stdin, stdout, rejected):
            async with (
                draining(stdin, stdout, rejected) as (read_stream, write_stream),
                anyio.create_task_group() as tasks,
            ):
                tasks.start_soon(stop.watch, tasks.cancel_scope)
                await server.run(read_stream, write_stream, server.create_initialization_options())
                tasks.cancel_scope.cancel()
            if stop.received is not None:
                # In-flight calls have unwound (temp files gone, locks released). The SDK's
                # stdin reader would wait for an EOF that may never come, so finish here.
                with anyio.move_on_after(GRACE_SECONDS, shield=True):
                    await app.close()
                logging.shutdown()
                sys.stderr.flush()
                os._exit(_STOP_STATUS[stop.received])
    finally:
        with anyio.move_on_after(GRACE_SECONDS, shield=True):
            await app.close()
