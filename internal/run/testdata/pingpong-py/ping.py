# ping of Kratzke's ping-pong protocol in Python's standard library, for
# cnperf's pingpong.servers test and docs:
# python3 ping.py HOST:PORT PONG_HOST PONG_PORT
import http.client, http.server, json, re, sys, time

host, port = sys.argv[1].rsplit(":", 1)
pong_host, pong_port = sys.argv[2], int(sys.argv[3])


class Ping(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def answer(self, body):
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        m = re.fullmatch(r"/(m?ping)/(\d+)", self.path)
        if not m:
            self.send_error(404)
            return
        start = time.monotonic()
        # http.client, not urllib: no proxy from the environment.
        conn = http.client.HTTPConnection(pong_host, pong_port, timeout=60)
        conn.request("GET", "/pong/" + m.group(2))
        resp = conn.getresponse()
        body = resp.read()
        conn.close()
        ms = (time.monotonic() - start) * 1000
        if m.group(1) == "ping":
            self.answer(body)
            return
        mping = {"length": len(body), "code": resp.status, "retries": 0, "duration": ms}
        self.answer(json.dumps(mping).encode())

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer((host, int(port)), Ping).serve_forever()
