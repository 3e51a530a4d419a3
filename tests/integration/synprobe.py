"""Run inside a network namespace standing in for a LAN neighbour (test_after.py): sends one TCP SYN
for ADDRESS:PORT out of IFACE (raw, so 127.0.0.1 can be the destination, as an attacker's packet to
a port "published on 127.0.0.1" is) and says whether a SYN-ACK came back: exit 0 answered, 1 not.
A raw packet socket sees the answer before the neighbour's kernel drops it (its source is a
loopback address, a martian there)."""
from __future__ import annotations

import os
import select
import socket
import struct
import sys
import time


def _checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def _syn(src: str, dst: str, sport: int, dport: int) -> bytes:
    tcp = struct.pack("!HHIIBBHHH", sport, dport, 0x1000, 0, 5 << 4, 0x02, 64240, 0, 0)
    pseudo = socket.inet_aton(src) + socket.inet_aton(dst) + struct.pack("!BBH", 0, socket.IPPROTO_TCP, len(tcp))
    tcp = tcp[:16] + struct.pack("!H", _checksum(pseudo + tcp)) + tcp[18:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), os.getpid() & 0xFFFF, 0, 64, socket.IPPROTO_TCP, 0,
                     socket.inet_aton(src), socket.inet_aton(dst))
    ip = ip[:10] + struct.pack("!H", _checksum(ip)) + ip[12:]
    return ip + tcp


def main(address: str, port: int, iface: str, source: str) -> int:
    sport = 40000 + os.getpid() % 20000
    sniff = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.ntohs(0x0800))
    sniff.bind((iface, 0))
    raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    raw.sendto(_syn(source, address, sport, port), (address, 0))
    end = time.monotonic() + 3
    while (left := end - time.monotonic()) > 0:
        if not select.select([sniff], [], [], left)[0]:
            break
        frame = sniff.recv(65535)[14:]
        if len(frame) < 40 or frame[9] != socket.IPPROTO_TCP:
            continue
        ihl = (frame[0] & 0xF) * 4
        src_port, dst_port = struct.unpack("!HH", frame[ihl:ihl + 4])
        flags = frame[ihl + 13]
        if (src_port, dst_port) == (port, sport) and flags & 0x12 == 0x12:
            return 0
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]))
