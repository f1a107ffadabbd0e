"""doiget_read_paper and doiget_check_quote: reading stored papers, in the papers toolset.

Handlers pass the parsed request to :class:`doiget.reading.service.Reader`, built on the
first call, which reads PDFs and checks quotations as jobs of the papers lane.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from doiget.reading import contracts as c
from doiget.runtime import Runtime
from doiget.server.toolset import Hints, LazyCore, ServedTool, Tool, ToolCall, describe

if TYPE_CHECKING:
    from doiget.reading.service import Reader

READS_STORE = Hints(read_only=True, destructive=False, idempotent=True, open_world=False)


class ReadingTools:
    """The two reading tools, sharing one lazily built :class:`Reader`."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self._core = LazyCore(self._build)
        self.close = self._core.close

    def _build(self) -> Reader:
        from doiget.reading.service import Reader

        return Reader(self.runtime.settings, self.runtime.pool("papers"))

    def reader(self) -> Reader:
        """The reader, built on first use."""
        return self._core.get()

    async def read(self, request: c.ReadPaperArgs, call: ToolCall) -> c.PaperReading:
        return await self._core.get().read(request)

    async def check(self, request: c.CheckQuoteArgs, call: ToolCall) -> c.QuoteCheck:
        return await self._core.get().check(request)

    def specs(self) -> list[ServedTool]:
        """The tools' declarations."""
        return [
            Tool(
                "doiget_read_paper",
                describe(
                    when="Read a stored paper: outline, then a section or pages.",
                    inputs="ref; section (outline number or title) or pages ('3-5'); "
                    "max_chars; cursor.",
                    outputs="Alone: sections, figures, tables, reference count. Else text, "
                    "pages, covers, cursor (next piece; null at end). Each: pdf_origin.",
                    costs="Local; under 1 s.",
                    side_effects="None.",
                    limits="Stored PDFs with a text layer.",
                ),
                c.ReadPaperArgs,
                c.PaperReading,
                READS_STORE,
                self.read,
                ref_field="ref",
            ),
            Tool(
                "doiget_check_quote",
                describe(
                    when="Before quoting: is this text in the paper, on which page?",
                    inputs="quote; ref (a stored paper) or project (its indexed passages; "
                    "default doiget/papers).",
                    outputs="found, similarity, passage, page, pages, section, pdf_origin; "
                    "when not found, the closest passage.",
                    costs="Local; under 1 s.",
                    side_effects="None.",
                    limits="Exact up to spacing, line-end hyphens, ligatures, quote marks "
                    "and dashes; case counts.",
                ),
                c.CheckQuoteArgs,
                c.QuoteCheck,
                READS_STORE,
                self.check,
                ref_field="ref",
            ),
        ]
