"""The replay network's addresses: one subnet, Docker's containers in its lower half,
one address per recorded host in its upper half.

Pure functions (the host's routes are read by the caller), unit-tested on their own.

Why per-host addresses: a host that refused a connection when recorded must refuse
it here too (a RST in answer to the SYN), even when another recorded host answers on
the same port. With every name on one address that cannot be: the port is either
open for both or closed for both. With an address each, the sidecar listens only
where a host answered, and the kernel refuses everywhere else.

Docker's IPAM hands out addresses from `ip_range` (the lower half) only, so the upper
half is ours: the sidecar adds those addresses to its own interface. Subnets are
taken from POOL, which Docker's default address pools (172.17-31.0.0/16,
192.168.0.0/16) do not use, so replay networks never take a pool Docker would give
out itself; a candidate that overlaps a route of this host (another bridge, a VPN, the
LAN) is skipped, and one another process took meanwhile is retried by the caller.
"""
from __future__ import annotations

import random
import socket
import struct
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from ipaddress import IPv4Address, IPv4Network

from ..capsules.model import FrozenMap

POOL = IPv4Network("172.16.0.0/16")
SMALLEST_PREFIX = 20  # 4094 addresses: about 2000 recorded hosts at most
ROUTES_FILE = "/proc/net/route"


class AddressSpaceError(ValueError):
    """No subnet of the pool fits (too many hosts, or every candidate is in use)."""


@dataclass(frozen=True)
class AddressPlan:
    subnet: IPv4Network
    gateway: IPv4Address
    ip_range: IPv4Network  # what Docker may give to containers
    hosts: FrozenMap[str, str]  # recorded host -> its address in the upper half

    @property
    def docker_ipam(self) -> dict[str, str]:
        return {"subnet": str(self.subnet), "iprange": str(self.ip_range), "gateway": str(self.gateway)}


def prefix_for(host_count: int) -> int:
    """The longest prefix whose upper half holds every host (and whose lower half Docker's few containers)."""
    for prefix in range(24, SMALLEST_PREFIX - 1, -1):
        half = 2 ** (32 - prefix) // 2
        if host_count <= half - 1:  # the subnet's last address is its broadcast
            return prefix
    raise AddressSpaceError(f"{host_count} recorded hosts do not fit one replay network (at most "
                            f"{2 ** (32 - SMALLEST_PREFIX) // 2 - 1})")


def plan_addresses(hosts: Sequence[str], subnet: IPv4Network) -> AddressPlan:
    """Gateway first, Docker's range the lower half, hosts in order from the upper half."""
    lower, upper = subnet.subnets(prefixlen_diff=1)
    if len(hosts) > upper.num_addresses - 1:
        raise AddressSpaceError(f"{len(hosts)} hosts do not fit {upper}")
    addresses = {host: str(upper.network_address + i) for i, host in enumerate(hosts)}
    return AddressPlan(subnet, subnet.network_address + 1, lower, FrozenMap(addresses))


def candidates(host_count: int, taken: Iterable[IPv4Network], rng: random.Random | None = None) -> Iterator[IPv4Network]:
    """Free subnets of POOL big enough for the hosts, in random order (parallel replays rarely collide)."""
    busy = list(taken)
    subnets = list(POOL.subnets(new_prefix=prefix_for(host_count)))
    (rng or random.Random()).shuffle(subnets)
    for subnet in subnets:
        if not any(subnet.overlaps(other) for other in busy):
            yield subnet


def host_routes(text: str) -> list[IPv4Network]:
    """The destinations of /proc/net/route (every bridge, LAN and VPN this host reaches directly)."""
    routes = []
    for line in text.splitlines()[1:]:
        fields = line.split()
        if len(fields) < 8:
            continue
        try:
            dest, mask = (IPv4Address(socket.inet_ntoa(struct.pack("<I", int(f, 16)))) for f in (fields[1], fields[7]))
            network = IPv4Network(f"{dest}/{mask}", strict=False)
        except ValueError:
            continue
        if network.prefixlen > 0:  # the default route overlaps everything and says nothing
            routes.append(network)
    return routes


def read_host_routes(path: str = ROUTES_FILE) -> list[IPv4Network]:
    try:
        with open(path, encoding="ascii") as fh:
            return host_routes(fh.read())
    except OSError:
        return []
