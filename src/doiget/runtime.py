"""What every face starts from: settings and the capability profile, read once."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from doiget.capability import CapabilityProfile
from doiget.config import Settings, load_settings

if TYPE_CHECKING:
    from doiget.net.network import Network
    from doiget.workpool import WorkPool

# The lines expensive work waits in: the stored papers' (local search, listings,
# exports, PDFs: milliseconds each) and the library's (embedding, ranking, the passage
# index: up to seconds each), so a quick job never waits behind a line of slow ones.
Lane = Literal["papers", "library"]


@dataclass(frozen=True)
class Runtime:
    """The settings and capability profile of one process; both fixed at start."""

    settings: Settings
    profile: CapabilityProfile
    # Serving many clients over HTTP: searches then run in worker processes unless
    # DOIGET_SEARCH_PROCESSES says otherwise.
    http: bool = False
    # The process's one Network (built on first use), so every toolset's requests pass
    # the same rate gate: two gates would each allow the full rate.
    _network: list[Network] = field(default_factory=list, compare=False, repr=False)
    # The process's pool for expensive work of each lane, shared by every toolset.
    _pools: dict[str, WorkPool] = field(default_factory=dict, compare=False, repr=False)

    def network(self) -> Network:
        """The process-wide :class:`~doiget.net.network.Network`, built on first use."""
        if not self._network:
            from doiget.net.network import Network

            self._network.append(Network(self.settings))
        return self._network[0]

    def pool(self, lane: Lane) -> WorkPool:
        """The process-wide :class:`~doiget.workpool.WorkPool` of ``lane``, built on
        first use; each lane has its own workers, line and mean job time."""
        if lane not in self._pools:
            from doiget.workpool import WorkPool

            self._pools[lane] = WorkPool(
                self.settings.workers, self.settings.work_queue, apart=self.searches_apart
            )
        return self._pools[lane]

    @property
    def searches_apart(self) -> bool:
        """Whether searches run in worker processes: DOIGET_SEARCH_PROCESSES when set,
        else over HTTP only."""
        chosen = self.settings.search_processes
        return self.http if chosen is None else chosen

    async def aclose(self) -> None:
        """Close the network's connection pools and the work pools, once; a later use
        builds fresh ones."""
        if self._network:
            await self._network.pop().aclose()
        while self._pools:
            self._pools.popitem()[1].close()

    def banner(self) -> str:
        """The one-line stderr start-up banner, with the test seam when it is set."""
        line = self.profile.banner()
        if self.settings.host_map:
            line += f" host_map={self.settings.host_map.describe()}"
        if self.settings.ca_bundle is not None:
            line += f" ca_bundle={self.settings.ca_bundle}"
        return line


def load_runtime(environ: Mapping[str, str] | None = None, *, http: bool = False) -> Runtime:
    """Read settings and profile from ``environ`` (default: the process environment);
    ``http`` for a server over HTTP.

    Raises DoigetError(CAPABILITY_DENIED) when the configuration cannot be honoured.
    """
    env = os.environ if environ is None else environ
    return Runtime(settings=load_settings(env), profile=CapabilityProfile.from_env(env), http=http)


def start_logging(runtime: Runtime, *, banner: bool) -> None:
    """Send log records to stderr at the configured level; print the capability banner
    there when ``banner`` (a server always, a command when asked with ``-v``)."""
    logging.basicConfig(
        stream=sys.stderr,
        level=runtime.settings.log_level,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    if banner:
        print(runtime.banner(), file=sys.stderr, flush=True)
