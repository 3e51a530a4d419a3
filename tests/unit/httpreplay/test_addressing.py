"""The replay network's address plan: Docker's half, the hosts' half, free subnets."""
from __future__ import annotations

import random
from ipaddress import IPv4Address, IPv4Network

import pytest

from runner.httpreplay.addressing import (
    POOL,
    AddressSpaceError,
    candidates,
    host_routes,
    plan_addresses,
    prefix_for,
)

ROUTES = """\
Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT
eth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0
docker0\t000011AC\t00000000\t0001\t0\t0\t0\t0000FFFF\t0\t0\t0
rplx\t000510AC\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0
broken line
"""


def test_hosts_get_the_upper_half_and_docker_the_lower() -> None:
    plan = plan_addresses(["a.example", "b.example"], IPv4Network("172.16.9.0/24"))
    assert plan.gateway == IPv4Address("172.16.9.1") and plan.ip_range == IPv4Network("172.16.9.0/25")
    assert dict(plan.hosts) == {"a.example": "172.16.9.128", "b.example": "172.16.9.129"}
    assert plan.docker_ipam == {"subnet": "172.16.9.0/24", "iprange": "172.16.9.0/25", "gateway": "172.16.9.1"}
    assert not any(IPv4Address(a) in plan.ip_range for a in plan.hosts.values())


def test_prefix_grows_with_the_hosts_and_has_a_limit() -> None:
    assert prefix_for(0) == prefix_for(127) == 24
    assert prefix_for(128) == 23 and prefix_for(2047) == 20
    with pytest.raises(AddressSpaceError, match="2048 recorded hosts do not fit"):
        prefix_for(2048)
    hosts = [f"h{i}.example" for i in range(300)]
    subnet = next(candidates(len(hosts), []))
    plan = plan_addresses(hosts, subnet)
    assert subnet.prefixlen == 22 and len(set(plan.hosts.values())) == 300
    assert all(IPv4Address(a) in subnet and IPv4Address(a) != subnet.broadcast_address for a in plan.hosts.values())


def test_routes_are_read_and_the_default_route_ignored() -> None:
    assert host_routes(ROUTES) == [IPv4Network("172.17.0.0/16"), IPv4Network("172.16.5.0/24")]


def test_candidates_avoid_every_route_of_this_host() -> None:
    taken = [IPv4Network("172.16.200.0/24"), IPv4Network("172.16.0.0/20")]
    found = list(candidates(3, taken, random.Random(7)))
    assert len(found) == 256 - 16 - 1
    assert all(s.subnet_of(POOL) and not any(s.overlaps(t) for t in taken) for s in found)
    assert found != sorted(found)  # shuffled: parallel replays rarely try the same subnet first
    assert list(candidates(3, [POOL])) == []


def test_a_recorded_address_gets_a_subnet_around_it_and_is_its_own_host() -> None:
    from runner.httpreplay.addressing import literal_subnets

    subnets = literal_subnets(["10.1.2.3"], 2, [])
    assert subnets[0] == IPv4Network("10.1.2.0/26") and all(s.prefixlen < 27 for s in subnets)
    plan = plan_addresses(["10.1.2.3", "api.example"], subnets[0], ["10.1.2.3"])
    assert plan.hosts["10.1.2.3"] == "10.1.2.3" and IPv4Address(plan.hosts["api.example"]) in subnets[0]
    assert IPv4Address("10.1.2.3") not in plan.ip_range and plan.gateway in plan.ip_range
    assert plan.hosts["api.example"] != str(plan.gateway)
    # two addresses far apart in a /24, one of them where the gateway would go
    wide = literal_subnets(["10.1.2.1", "10.1.2.200"], 2, [])[0]
    plan = plan_addresses(["10.1.2.1", "10.1.2.200"], wide, ["10.1.2.1", "10.1.2.200"])
    assert wide == IPv4Network("10.1.2.0/24") and plan.gateway not in (IPv4Address("10.1.2.1"), IPv4Address("10.1.2.200"))
    assert not any(IPv4Address(a) in plan.ip_range for a in plan.hosts.values())


def test_no_subnet_for_an_address_this_machine_reaches_itself() -> None:
    from runner.httpreplay.addressing import literal_subnets, route_entries

    assert literal_subnets(["192.0.2.77"], 1, [IPv4Network("192.0.2.0/24")]) == []
    assert literal_subnets(["10.0.0.9", "10.200.0.1"], 2, []) == []  # no /16 holds both
    assert route_entries(ROUTES)[-1] == ("rplx", IPv4Network("172.16.5.0/24"))
    with pytest.raises(AddressSpaceError, match="does not hold"):
        plan_addresses(["10.1.2.0"], IPv4Network("10.1.2.0/24"), ["10.1.2.0"])  # the network address itself
