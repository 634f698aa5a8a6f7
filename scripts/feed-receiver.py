#!/usr/bin/env python3
"""A counting feed receiver for measuring pushes (docs/feed.md "Size and time" of pushing).

    python3 scripts/feed-receiver.py PORT TOKEN

Answers `PATCH /v1/feeds/{id}/products` with `{"id", "accepted": true}` when the bearer token is
TOKEN (401 otherwise), and counts what it accepted: `GET /count` answers
`{"requests", "products", "distinct", "bytes", "first_at", "last_at"}` (Unix seconds). It checks
no schema (the tests' receiver does, and scripts/check-feed-against-spec.py --upserts checks
against the spec's own): it is only fast enough not to be what is measured.
"""
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

lock = threading.Lock()
seen = {"requests": 0, "products": 0, "bytes": 0, "first_at": None, "last_at": None}
distinct = set()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_PATCH(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.headers.get("Authorization") != f"Bearer {TOKEN}":
            return self.answer(401, {"type": "invalid_request", "code": "unauthorized"})
        feed = self.path.split("/")[3]
        ids = [product["id"] for product in json.loads(body)["products"]]
        now = time.time()
        with lock:
            seen["requests"] += 1
            seen["products"] += len(ids)
            seen["bytes"] += len(body)
            seen["first_at"] = seen["first_at"] or now
            seen["last_at"] = now
            distinct.update(ids)
        self.answer(200, {"id": feed, "accepted": True})

    def do_GET(self):
        with lock:
            self.answer(200, dict(seen, distinct=len(distinct)))


if __name__ == "__main__":
    TOKEN = sys.argv[2]
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
