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

A recording that calls an IPv4 address (10.1.2.3, a public one) gets a subnet that
contains it instead (literal_subnets): the smallest that fits, so the sidecar can hold
the address itself and the program reaches it on the replay network, never outside.
Docker's range is then a block of that subnet holding no such address.
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
LITERAL_PREFIXES = range(26, 15, -1)  # a subnet around recorded addresses: /26 (64) first, /16 at most
DOCKER_BLOCK = 29  # the smallest range Docker's containers get (the sidecar, the program, a spare)
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


def plan_addresses(hosts: Sequence[str], subnet: IPv4Network, literals: Sequence[str] = ()) -> AddressPlan:
    """Docker's range the lower half (or, with recorded addresses, the first block that holds
    none of them), the gateway its first address, hosts in order from the rest; a recorded
    address is its own host's."""
    fixed = {host: IPv4Address(host) for host in literals}
    if any(a not in subnet or a in (subnet.network_address, subnet.broadcast_address) for a in fixed.values()):
        raise AddressSpaceError(f"{subnet} does not hold {', '.join(literals)} as host addresses")
    ip_range = _docker_range(subnet, set(fixed.values()))
    gateway = ip_range.network_address + (1 if ip_range.network_address == subnet.network_address else 0)
    free = (a for a in subnet if a not in ip_range and a not in fixed.values() and a != subnet.broadcast_address
            and a != subnet.network_address)
    addresses: dict[str, str] = {}
    for host in hosts:
        address = fixed.get(host) or next(free, None)
        if address is None:
            raise AddressSpaceError(f"{len(hosts)} hosts do not fit {subnet}")
        addresses[host] = str(address)
    return AddressPlan(subnet, gateway, ip_range, FrozenMap(addresses))


def _docker_range(subnet: IPv4Network, fixed: set[IPv4Address]) -> IPv4Network:
    """The largest block of the subnet, lowest first, that holds no recorded address."""
    for prefix in range(subnet.prefixlen + 1, DOCKER_BLOCK + 1):
        for block in subnet.subnets(new_prefix=prefix):
            if not any(a in block for a in fixed):
                return block
    raise AddressSpaceError(f"{subnet} has no room for containers beside {len(fixed)} recorded address(es)")


def literal_subnets(literals: Sequence[str], host_count: int, taken: Iterable[IPv4Network]) -> list[IPv4Network]:
    """The subnets, smallest first, that hold every recorded address, the other hosts and a
    Docker range, and overlap no route of this host (another replay's network is not a route
    to avoid: the caller waits for it)."""
    busy = list(taken)
    out = []
    for prefix in LITERAL_PREFIXES:
        subnet = IPv4Network(f"{literals[0]}/{prefix}", strict=False)
        if any(subnet.overlaps(other) for other in busy):
            break  # a larger one overlaps it too
        try:
            plan_addresses([*literals, *(f"h{i}" for i in range(host_count - len(literals)))], subnet, literals)
        except AddressSpaceError:
            continue
        out.append(subnet)
    return out[:3]


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
    return [network for _, network in route_entries(text)]


def route_entries(text: str) -> list[tuple[str, IPv4Network]]:
    """(interface, destination) of each route of /proc/net/route, the default route left out."""
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
            routes.append((fields[0], network))
    return routes


def read_route_entries(path: str = ROUTES_FILE) -> list[tuple[str, IPv4Network]]:
    try:
        with open(path, encoding="ascii") as fh:
            return route_entries(fh.read())
    except OSError:
        return []

