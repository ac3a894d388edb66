#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""A remote shell for the test VMs, which run no ssh: what Open MPI's rsh
launcher needs to start its daemon in the other VM (test_ecosystem_2vm).

  vmrsh.py serve ADDR     run the commands that clients send, one session
                          at a time, until a client sends quit
  vmrsh.py HOST CMD...    as "ssh HOST CMD...": run CMD (its words joined
                          by spaces) with /bin/sh on HOST, print its output,
                          exit with its status (255: no session)
  vmrsh.py quit HOST      end HOST's server

The port is $VMRSH_PORT (default 5222).  A session is one TCP connection:
the command line, then from the server the command's output (stdout and
stderr) and a NUL byte followed by its exit status.  Only for a private
test link: there is no authentication.
"""
import os
import socket
import subprocess
import sys

PORT = int(os.environ.get("VMRSH_PORT", "5222"))


def serve(addr):
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((addr, PORT))
    ls.listen(4)
    while True:
        s, peer = ls.accept()
        with s:
            f = s.makefile("rb")
            cmd = f.readline().decode().rstrip("\n")
            if cmd == "quit":
                print("vmrsh: quit from %s" % peer[0], flush=True)
                f.close()
                return 0
            print("vmrsh: %s runs: %s" % (peer[0], cmd), flush=True)
            p = subprocess.Popen(["/bin/sh", "-c", cmd], stdin=subprocess.DEVNULL,
                                 stdout=s.fileno(), stderr=s.fileno())
            rc = p.wait()
            print("vmrsh: exit %d" % rc, flush=True)
            s.sendall(b"\0%d\n" % rc)
            f.close()
            s.shutdown(socket.SHUT_RDWR)


def session(host, line):
    try:
        s = socket.create_connection((host, PORT), timeout=10)
    except OSError as e:
        print("vmrsh: %s: %s" % (host, e), file=sys.stderr)
        return 255
    s.settimeout(None)
    s.sendall(line.encode() + b"\n")
    out = bytearray()
    while True:
        b = s.recv(65536)
        if not b:
            break
        out += b
        # Pass output on as it comes, holding back what may be the status.
        nul = out.rfind(b"\0")
        keep = out[:nul] if nul >= 0 else out
        sys.stdout.buffer.write(keep)
        sys.stdout.flush()
        out = out[len(keep):]
    if line == "quit":
        return 0
    if not out.startswith(b"\0"):
        print("vmrsh: %s: session ended without a status" % host, file=sys.stderr)
        return 255
    return int(out[1:].strip() or b"255")


def main(argv):
    if len(argv) == 2 and argv[0] == "serve":
        return serve(argv[1])
    if len(argv) == 2 and argv[0] == "quit":
        return session(argv[1], "quit")
    if len(argv) >= 2:
        return session(argv[0], " ".join(argv[1:]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
