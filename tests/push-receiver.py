#!/usr/bin/env python3
"""push-receiver.py: a stand-in for Pyroscope's /ingest, for the tests.

Listens on 127.0.0.1 only, on a free port it writes to --port-file (whole,
by rename, so a reader never sees half of it; only once it listens, unless
--start-after says otherwise), and stores every request
in --dir as it arrives, before answering:

  N.query     the raw query string
  N.params    the query decoded, one "key=value" a line, in order
  N.headers   the request headers, one "Name: value" a line
  N.profile   the bytes of the multipart field "profile" (when there is one)
  N.status    the status it answered
  log         one line per request: "N STATUS PATH"

N counts from 1.  Answers 200 unless told otherwise:
  --status CODE      answer CODE to every request (after --fail-first)
  --fail-first N     answer 503 to the first N requests
  --start-after S    pick and announce the port at once, but only listen
                     after S seconds (the server is "down" until then)
  --timeout S        exit by itself after S seconds (default 60)
  --echo-header NAME answer with the text "NAME: value" of that request
                     header, as servers that quote what they refused do
  --hang             accept connections and read them, but never answer
                     (a server that has stopped responding); stores nothing

Only the standard library: the multipart body is split by hand.
"""
import argparse
import os
import socket
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def parse_multipart(body, content_type):
    """The parts of a multipart/form-data BODY as {name: bytes}."""
    boundary = None
    for item in content_type.split(";")[1:]:
        key, _, value = item.strip().partition("=")
        if key.lower() == "boundary":
            boundary = value.strip('"')
    if not boundary:
        raise ValueError("no boundary")
    delim = b"--" + boundary.encode()
    parts = {}
    chunks = body.split(b"\r\n" + delim)
    first = chunks[0]
    if not first.startswith(delim):
        raise ValueError("body does not start with the boundary")
    chunks[0] = first[len(delim):]
    for chunk in chunks:
        if chunk.startswith(b"--"):
            break  # the closing delimiter
        if not chunk.startswith(b"\r\n"):
            raise ValueError("bad delimiter line")
        head, sep, data = chunk[2:].partition(b"\r\n\r\n")
        if not sep:
            raise ValueError("part without a blank line")
        name = None
        for line in head.split(b"\r\n"):
            key, _, value = line.decode("latin-1").partition(":")
            if key.strip().lower() == "content-disposition":
                for item in value.split(";"):
                    k, _, v = item.strip().partition("=")
                    if k == "name":
                        name = v.strip('"')
        if name is None:
            raise ValueError("part without a name")
        parts[name] = data
    else:
        raise ValueError("no closing delimiter")
    return parts


class Receiver(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def answer(self, status, text):
        body = (text + "\n").encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        srv = self.server
        with srv.lock:
            srv.count += 1
            n = srv.count
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        path, _, query = self.path.partition("?")
        if n <= srv.opts.fail_first:
            status = 503
        else:
            status = srv.opts.status
        text = "ok"
        prefix = os.path.join(srv.opts.dir, str(n))
        with open(prefix + ".query", "w") as f:
            f.write(query + "\n")
        with open(prefix + ".params", "w") as f:
            for key, value in urllib.parse.parse_qsl(query, keep_blank_values=True):
                f.write("%s=%s\n" % (key, value))
        with open(prefix + ".headers", "w") as f:
            for key, value in self.headers.items():
                f.write("%s: %s\n" % (key, value))
        try:
            parts = parse_multipart(body, self.headers.get("Content-Type", ""))
            if "profile" in parts:
                with open(prefix + ".profile", "wb") as f:
                    f.write(parts["profile"])
            else:
                raise ValueError("no field 'profile'")
        except ValueError as e:
            if status < 300:
                status = 400
            text = "bad multipart body: %s" % e
        if path != "/ingest" and status < 300:
            status, text = 404, "not found"
        if srv.opts.echo_header:
            text = "%s: %s" % (srv.opts.echo_header,
                               self.headers.get(srv.opts.echo_header, ""))
        with open(prefix + ".status", "w") as f:
            f.write("%d\n" % status)
        with open(os.path.join(srv.opts.dir, "log"), "a") as f:
            f.write("%d %d %s\n" % (n, status, path))
        self.answer(status, text)


def hang(s, deadline):
    """Accept on the listening socket S and read until DEADLINE, never
    answering."""
    held = []
    while time.monotonic() < deadline:
        s.settimeout(max(0.01, min(0.2, deadline - time.monotonic())))
        try:
            conn, _ = s.accept()
            conn.setblocking(False)
            held.append(conn)
        except socket.timeout:
            pass
        for conn in held:
            try:
                conn.recv(65536)  # drain, so the client is never stuck writing
            except (BlockingIOError, OSError):
                pass
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--status", type=int, default=200)
    ap.add_argument("--fail-first", type=int, default=0)
    ap.add_argument("--start-after", type=float, default=0)
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--hang", action="store_true")
    ap.add_argument("--echo-header")
    opts = ap.parse_args()
    os.makedirs(opts.dir, exist_ok=True)

    def announce(port):
        tmp = opts.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % port)
        os.rename(tmp, opts.port_file)

    deadline = time.monotonic() + opts.timeout
    if opts.hang:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.bind(("127.0.0.1", 0))
        s.listen(64)
        announce(s.getsockname()[1])
        return hang(s, deadline)
    if opts.start_after > 0:
        # A free port, known before anything listens on it.
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        announce(port)
        time.sleep(min(opts.start_after, opts.timeout))
    else:
        port = 0
    ThreadingHTTPServer.allow_reuse_address = True
    ThreadingHTTPServer.daemon_threads = True
    srv = ThreadingHTTPServer(("127.0.0.1", port), Receiver)
    srv.opts = opts
    srv.count = 0
    srv.lock = threading.Lock()
    if port == 0:
        # Announced only once it listens: a client that reads the port
        # file never finds the port closed.
        announce(srv.server_address[1])
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    left = deadline - time.monotonic()
    if left > 0:
        time.sleep(left)
    srv.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
