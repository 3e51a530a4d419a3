"""The sidecar's entry point: add each recorded host's address, give up NET_ADMIN, run the server.

Standard library only. The sidecar is started with one extra capability, NET_ADMIN,
for exactly this: `ip addr add` of the addresses the calls file names (all from
the replay network's upper half, which Docker's IPAM never hands out). Then it
execs the server through setpriv with no capability but NET_BIND_SERVICE (ports
80 and 443), none inheritable and no_new_privs, so nothing that talks to the server
later can use the extra capability. The addresses live in the sidecar's own network
namespace: they go away with it.

Usage: netsetup.py --calls calls.json -- COMMAND...
"""
from __future__ import annotations

import argparse
import ipaddress
import json
import os
import subprocess
import sys
from typing import List, Optional

DROP_CAPS = ["setpriv", "--no-new-privs", "--inh-caps=-all", "--bounding-set=-all,+net_bind_service", "--"]


def interface() -> str:
    """The sidecar's one network interface (the replay network)."""
    names = sorted(n for n in os.listdir("/sys/class/net") if n != "lo")
    if not names:
        raise SystemExit("netsetup: no network interface")
    return names[0]


def addresses(doc: dict) -> List[str]:
    """Every host address, checked to be an IPv4 address (the calls file is written by replay)."""
    return [str(ipaddress.IPv4Address(str(h["address"]))) for h in doc.get("hosts") or ()]


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", required=True)
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    with open(args.calls, encoding="utf-8") as fh:
        doc = json.load(fh)
    dev = interface()
    for address in addresses(doc):
        # /32: the replay network's own route already covers it.
        proc = subprocess.run(["ip", "-4", "addr", "add", f"{address}/32", "dev", dev],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            print(f"netsetup: cannot add {address} to {dev}: {proc.stderr.strip()}", file=sys.stderr, flush=True)
            return 3
    os.execvp(DROP_CAPS[0], DROP_CAPS + command)
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
