/*
 * rrfloor: the floor of cnperf rr's own protocol, in plain C. A client and
 * a server that speak exactly what `cnperf rr` and `cnperf serve rr` speak
 * over TCP (a 16-byte hello: magic "cnRR", flags, request size, response
 * size, big-endian; then requests and responses of those sizes; flags 1:
 * one transaction per connection, crr) and do nothing else: no runtime, no
 * histogram, one blocking (or, busy, non-blocking and spinning) system call
 * per step, as sockperf and netperf make them.
 *
 * bench/floor.sh pairs it with cnperf both ways (C client against cnperf's
 * server, cnperf's client against the C server), so a gap between cnperf
 * and the C tools splits into the client's part and the server's, and both
 * are measured against what the protocol costs at the least.
 *
 *   rrfloor server ADDR PORT
 *   rrfloor rr|busy|crr ADDR PORT SECONDS
 *
 * rr and busy print "TRANS_PER_S P50 P99" (one-way: half the round trip,
 * µs; the first 400 ms left out, as sockperf and cnperf rr --omit 400ms
 * do); crr prints "TRANS_PER_S". 14-byte requests and responses.
 * The server answers one connection at a time and keeps no state beyond
 * it: sizes above 64 KiB are refused, so memory stays bounded.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAGIC 0x636e5252u
#define FLAG_ONCE 1u
#define SIZE 14
#define MAX_SIZE (64 << 10)
#define WARMUP_NS 400000000LL
#define MAX_SAMPLES (1 << 24)

static char zeros[MAX_SIZE];

static long long now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return (x > y) - (x < y);
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void put_hello(unsigned char *b, uint32_t flags)
{
	uint32_t v[4] = {htonl(MAGIC), htonl(flags), htonl(SIZE), htonl(SIZE)};
	memcpy(b, v, sizeof v);
}

/* read_n reads exactly n bytes; spinning on EAGAIN when the socket is
 * non-blocking. 0 on success, -1 on EOF or error. */
static int read_n(int fd, char *buf, int n)
{
	while (n > 0) {
		ssize_t r = recv(fd, buf, n, 0);
		if (r > 0)
			n -= r;
		else if (r == 0 || (errno != EAGAIN && errno != EINTR))
			return -1;
	}
	return 0;
}

static int write_n(int fd, const char *buf, int n)
{
	while (n > 0) {
		ssize_t w = send(fd, buf, n, MSG_NOSIGNAL);
		if (w > 0) {
			buf += w;
			n -= w;
		} else if (w < 0 && errno != EAGAIN && errno != EINTR)
			return -1;
	}
	return 0;
}

static struct sockaddr_in addr_of(const char *ip, const char *port)
{
	struct sockaddr_in a;
	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)atoi(port));
	if (inet_pton(AF_INET, ip, &a.sin_addr) != 1) {
		fprintf(stderr, "rrfloor: %s is not an IPv4 address\n", ip);
		exit(2);
	}
	return a;
}

static void serve(struct sockaddr_in a)
{
	int one = 1, l = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0)
		die("socket");
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(l, (struct sockaddr *)&a, sizeof a) || listen(l, 128))
		die("bind");
	char buf[MAX_SIZE];
	for (;;) {
		int c = accept(l, NULL, NULL);
		if (c < 0)
			continue;
		setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		uint32_t h[4];
		if (read_n(c, (char *)h, sizeof h) == 0 && ntohl(h[0]) == MAGIC) {
			uint32_t flags = ntohl(h[1]), req = ntohl(h[2]), resp = ntohl(h[3]);
			if (req >= 1 && req <= MAX_SIZE && resp >= 1 && resp <= MAX_SIZE && flags <= FLAG_ONCE) {
				do {
					if (read_n(c, buf, (int)req) || write_n(c, zeros, (int)resp))
						break;
				} while (!(flags & FLAG_ONCE));
			}
		}
		close(c);
	}
}

static void rr(struct sockaddr_in a, double secs, int busy)
{
	int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a))
		die("connect");
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	unsigned char hello[16];
	put_hello(hello, 0);
	if (write_n(fd, (char *)hello, sizeof hello))
		die("send");
	if (busy && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK))
		die("fcntl");
	long long *rt = malloc(sizeof *rt * MAX_SAMPLES);
	if (!rt)
		die("malloc");
	size_t n = 0;
	char buf[SIZE];
	long long start = now_ns(), warm = start + WARMUP_NS, end = start + (long long)(secs * 1e9);
	for (;;) {
		long long t0 = now_ns();
		if (write_n(fd, zeros, SIZE) || read_n(fd, buf, SIZE))
			die("rr");
		long long t1 = now_ns();
		if (t1 > warm && n < MAX_SAMPLES)
			rt[n++] = t1 - t0;
		if (t1 > end)
			break;
	}
	if (n == 0) {
		fprintf(stderr, "rrfloor: no transaction after the warm-up\n");
		exit(1);
	}
	qsort(rt, n, sizeof *rt, cmp_ll);
	printf("%.1f %.3f %.3f\n", n / ((end - warm) / 1e9), rt[n / 2] / 2000.0, rt[n * 99 / 100] / 2000.0);
}

static void crr(struct sockaddr_in a, double secs)
{
	unsigned char m[16 + SIZE];
	memset(m, 0, sizeof m);
	put_hello(m, FLAG_ONCE);
	char buf[64];
	long long n = 0, start = now_ns(), end = start + (long long)(secs * 1e9);
	while (now_ns() < end) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a))
			die("connect");
		if (write_n(fd, (char *)m, sizeof m) || read_n(fd, buf, SIZE))
			die("crr");
		(void)recv(fd, buf, 1, 0); /* the server's FIN: TIME_WAIT stays there */
		close(fd);
		n++;
	}
	printf("%.1f\n", n / secs);
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "server"))
		serve(addr_of(argv[2], argv[3]));
	if (argc == 5) {
		double secs = atof(argv[4]);
		if (secs < 1 || secs > 600) {
			fprintf(stderr, "rrfloor: SECONDS must be 1..600\n");
			return 2;
		}
		struct sockaddr_in a = addr_of(argv[2], argv[3]);
		if (!strcmp(argv[1], "rr") || !strcmp(argv[1], "busy")) {
			rr(a, secs, !strcmp(argv[1], "busy"));
			return 0;
		}
		if (!strcmp(argv[1], "crr")) {
			crr(a, secs);
			return 0;
		}
	}
	fprintf(stderr, "usage: rrfloor server ADDR PORT | rrfloor rr|busy|crr ADDR PORT SECONDS\n");
	return 2;
}
