# pong of Kratzke's ping-pong protocol in Python's standard library, for
# cnperf's pingpong.servers test and docs: python3 pong.py HOST:PORT [EXTRA]
# (EXTRA bytes added to every body break the protocol on purpose).
import http.server, re, sys

host, port = sys.argv[1].rsplit(":", 1)
extra = int(sys.argv[2]) if len(sys.argv) > 2 else 0


class Pong(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as siege and ping expect

    def do_GET(self):
        m = re.fullmatch(r"/pong/(\d+)", self.path)
        if not m:
            self.send_error(404)
            return
        n = max(int(m.group(1)), 4) + extra
        body = b"p" + b"o" * (n - 3) + b"ng"
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(n))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer((host, int(port)), Pong).serve_forever()
