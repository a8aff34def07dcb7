package grid

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/tidwall/redcon"
)

// The messages that crashed a member before its ports were guarded: a
// RESP request whose bulk length overflowed redcon's index, and
// memberlist push/pull headers whose counts it allocated.
var (
	// 30 bytes: one argument of 9223372036854775800 bytes.
	respOverflow = []byte("*1\r\n$9223372036854775800\r\nab\r\n")
	pushPullMsg  = byte(6) // memberlist's messageType
	userMsg      = byte(8)
)

// crashingGossip are the push/pull headers that made memberlist allocate
// what they claim (node count -1 or 2^31, user state 2^40).
func crashingGossip() map[string][]byte {
	return map[string][]byte{
		"nodes -1":          pushPull(-1, 0),
		"nodes 2^31":        pushPull(1<<31, 0),
		"user state 2^40":   pushPull(0, 1<<40),
		"user message 2^40": append([]byte{userMsg, 0x81}, append(msgpackStr("UserMsgLen"), msgpackInt(1<<40)...)...),
	}
}

// pushPull is a plain (unencrypted) memberlist push/pull header.
func pushPull(nodes, userState int64) []byte {
	b := []byte{pushPullMsg, 0x83}
	b = append(b, msgpackStr("Nodes")...)
	b = append(b, msgpackInt(nodes)...)
	b = append(b, msgpackStr("UserStateLen")...)
	b = append(b, msgpackInt(userState)...)
	b = append(b, msgpackStr("Join")...)
	return append(b, 0xc2) // false
}

func msgpackStr(s string) []byte { return append([]byte{0xa0 | byte(len(s))}, s...) }

func msgpackInt(v int64) []byte {
	switch {
	case v >= 0 && v < 128:
		return []byte{byte(v)}
	case v >= -32 && v < 0:
		return []byte{byte(int8(v))}
	case v >= -1<<31 && v < 1<<31:
		return binary.BigEndian.AppendUint32([]byte{0xd2}, uint32(int32(v)))
	}
	return binary.BigEndian.AppendUint64([]byte{0xd3}, uint64(v))
}

// hostileData are requests the data port must refuse (or answer) and live
// on: lengths and counts past the bounds, malformed framing.
func hostileData() map[string][]byte {
	return map[string][]byte{
		"bulk length near 2^63":  respOverflow,
		"bulk length 2^62":       []byte("*1\r\n$4611686018427387904\r\nab\r\n"),
		"bulk length 19 digits":  []byte("*1\r\n$1000000000000000000000\r\nab\r\n"),
		"bulk length past bound": []byte("*1\r\n$" + strconv.Itoa(redcon.MaxRequest) + "\r\nab\r\n"),
		"count 2^31":             []byte("*2147483648\r\n$1\r\na\r\n"),
		"count past bound":       []byte("*" + strconv.Itoa(redcon.MaxArgs+1) + "\r\n$1\r\na\r\n"),
		"count -1":               []byte("*-1\r\n"),
		"negative bulk":          []byte("*1\r\n$-5\r\nab\r\n"),
		"long count line":        append([]byte("*"), bytes.Repeat([]byte("9"), 100)...),
		"long inline line":       bytes.Repeat([]byte("a"), redcon.MaxInline+10),
		"unbalanced quotes":      []byte("set \"a b\r\n"),
		"put without args":       []byte("*1\r\n$6\r\ndm.put\r\n"),
		"get without args":       []byte("*1\r\n$6\r\ndm.get\r\n"),
		"unknown command":        []byte("*2\r\n$3\r\nfoo\r\n$0\r\n\r\n"),
	}
}

// startMember runs a storage member on loopback until the test ends.
func startMember(t testing.TB) string {
	t.Helper()
	return startKeyedMember(t, nil)
}

// startKeyedMember is startMember with the grid's gossip key (nil: one of
// its own, as Serve draws).
func startKeyedMember(t testing.TB, key []byte) string {
	t.Helper()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(freePorts(t)))
	if key == nil {
		var err error
		if key, err = newGossipKey(); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, addr, key, io.Discard) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve: %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Error("serve did not return after cancel")
		}
	})
	waitPing(t, addr, 10*time.Second)
	return addr
}

// gossipAddr is the member's gossip address.
func gossipAddr(addr string) string {
	host, p, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(p)
	return net.JoinHostPort(host, strconv.Itoa(GossipPort(port)))
}

// ping asks the member's data port for PONG on a new connection.
func ping(addr string, timeout time.Duration) error {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	if _, err := c.Write([]byte("*1\r\n$4\r\nping\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(line, "+PONG") && !strings.HasPrefix(line, "$4") {
		return errors.New("ping answered " + strconv.Quote(line))
	}
	return nil
}

// waitPing waits until the member answers a ping.
func waitPing(t testing.TB, addr string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		err := ping(addr, time.Second)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("member at %s does not answer: %v", addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// send writes msg on a new TCP connection, closes its writing side and
// reads what comes back until the peer closes or the deadline.
func send(addr string, msg []byte, timeout time.Duration) ([]byte, error) {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	if _, err := c.Write(msg); err != nil {
		return nil, nil // the member may close before all arrived
	}
	_ = c.(*net.TCPConn).CloseWrite()
	reply, _ := io.ReadAll(io.LimitReader(c, 1<<20))
	return reply, nil
}

// sendUDP sends msg as one datagram.
func sendUDP(addr string, msg []byte) error {
	c, err := net.Dial("udp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Write(msg)
	return err
}

// heapBytes is the live heap after a collection.
func heapBytes() uint64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// heapBound is what a member may hold after hostile input: well under its
// own bound (a claimed length allocated would be gigabytes).
const heapBound = 128 << 20

// TestDataPortSurvivesHostileRequests: every hostile request (the 30-byte
// overflow first) ends at most its own connection; the member then still
// answers pings and a client's puts, and its heap stays small.
func TestDataPortSurvivesHostileRequests(t *testing.T) {
	addr := startMember(t)
	for name, msg := range hostileData() {
		reply, err := send(addr, msg, 5*time.Second)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		t.Logf("%s (%d bytes): %.80q", name, len(msg), reply)
		if err := ping(addr, 2*time.Second); err != nil {
			t.Fatalf("after %s: %v", name, err)
		}
	}
	if len(respOverflow) != 30 {
		t.Errorf("the overflow request has %d bytes, want the reported 30", len(respOverflow))
	}
	checkClient(t, addr)
	if h := heapBytes(); h > heapBound {
		t.Errorf("heap %d MB after hostile requests, bound %d MB", h>>20, heapBound>>20)
	}
}

// TestGossipPortSurvivesHostileHeaders: the push/pull headers that made
// memberlist allocate (node count -1, 2^31, user state 2^40) and others,
// over TCP and UDP, leave the member answering clients with a small heap.
func TestGossipPortSurvivesHostileHeaders(t *testing.T) {
	addr := startMember(t)
	gossip := gossipAddr(addr)
	msgs := crashingGossip()
	msgs["encrypted, 4 GiB"] = []byte{encryptMsg, 0xff, 0xff, 0xff, 0xff}
	msgs["encrypted, 2 MiB"] = append([]byte{encryptMsg}, binary.BigEndian.AppendUint32(nil, 2<<20)...)
	msgs["encrypted, garbage"] = append([]byte{encryptMsg, 0, 0, 0, 40}, bytes.Repeat([]byte{7}, 40)...)
	msgs["label header"] = []byte{244, 3, 'a', 'b', 'c', pushPullMsg}
	msgs["compressed"] = []byte{9, 0x80}
	for name, msg := range msgs {
		if _, err := send(gossip, msg, 5*time.Second); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := sendUDP(gossip, msg); err != nil {
			t.Fatalf("%s over UDP: %v", name, err)
		}
		if err := ping(addr, 2*time.Second); err != nil {
			t.Fatalf("after %s: %v", name, err)
		}
	}
	checkClient(t, addr)
	if h := heapBytes(); h > heapBound {
		t.Errorf("heap %d MB after hostile gossip, bound %d MB", h>>20, heapBound>>20)
	}
}

// TestGossipStreamsAreBounded: many connections that send nothing hold
// no more than maxGossipStreams slots, and the member keeps serving.
func TestGossipStreamsAreBounded(t *testing.T) {
	addr := startMember(t)
	gossip := gossipAddr(addr)
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range 3 * maxGossipStreams {
		c, err := net.DialTimeout("tcp", gossip, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	// Connections past the slots are closed at once: read EOF on one.
	last := conns[len(conns)-1]
	_ = last.SetReadDeadline(time.Now().Add(3 * time.Second))
	if _, err := last.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Errorf("connection past %d open streams: read %v, want EOF", maxGossipStreams, err)
	}
	if err := ping(addr, 2*time.Second); err != nil {
		t.Fatal(err)
	}
}

// checkClient runs a client's loop for a moment and wants puts without
// failures.
func checkClient(t *testing.T, addr string) {
	t.Helper()
	ctx := context.Background()
	store, closeFn, err := Dial(ctx, addr, time.Second, 5*time.Second, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	res, err := Run(ctx, Config{Addr: addr, Duration: 300 * time.Millisecond, Interval: 100 * time.Millisecond, ValueSize: 700}, store, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Puts < 10 || res.Failures() != 0 {
		t.Errorf("client after hostile input: %d puts, %d failures", res.Puts, res.Failures())
	}
}

// joiner is a memberlist node on loopback with key (nil: none) that
// tries to join the member's gossip.
func joiner(t *testing.T, name string, key []byte) *memberlist.Memberlist {
	t.Helper()
	c := memberlist.DefaultLocalConfig()
	c.Name, c.BindAddr, c.BindPort, c.AdvertisePort = name, "127.0.0.1", 0, 0
	c.LogOutput = io.Discard
	c.SecretKey = key
	c.TCPTimeout = 2 * time.Second
	m, err := memberlist.Create(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Shutdown() })
	return m
}

// TestGossipJoinNeedsTheKey: a node without the grid's key, or with
// another, cannot join the member; one with the key can (so the test can
// tell).
func TestGossipJoinNeedsTheKey(t *testing.T) {
	key, err := newGossipKey()
	if err != nil {
		t.Fatal(err)
	}
	other, _ := newGossipKey()
	addr := startKeyedMember(t, key)
	gossip := gossipAddr(addr)
	for _, tc := range []struct {
		name string
		key  []byte
		join bool
	}{
		{"no-key", nil, false},
		{"other-key", other, false},
		{"grid-key", key, true},
	} {
		m := joiner(t, tc.name, tc.key)
		n, err := m.Join([]string{gossip})
		t.Logf("%s: joined %d: %v", tc.name, n, err)
		if joined := err == nil && n == 1 && m.NumMembers() == 2; joined != tc.join {
			t.Errorf("%s: joined %d, %d members, %v; want joined=%v", tc.name, n, m.NumMembers(), err, tc.join)
		}
		_ = m.Leave(time.Second)
	}
	if err := ping(addr, 2*time.Second); err != nil {
		t.Fatal(err)
	}
}

// TestCheckGossipHeader: only encrypted streams of a bounded length pass.
func TestCheckGossipHeader(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    []byte
		ok   bool
	}{
		{"encrypted 100", []byte{encryptMsg, 0, 0, 0, 100}, true},
		{"encrypted at bound", binary.BigEndian.AppendUint32([]byte{encryptMsg}, maxGossipStream), true},
		{"encrypted past bound", binary.BigEndian.AppendUint32([]byte{encryptMsg}, maxGossipStream+1), false},
		{"encrypted 0", []byte{encryptMsg, 0, 0, 0, 0}, false},
		{"push/pull", pushPull(-1, 0)[:5], false},
		{"label", []byte{244, 3, 'a', 'b', 'c'}, false},
		{"short", []byte{encryptMsg, 0}, false},
	} {
		if err := checkGossipHeader(tc.h); (err == nil) != tc.ok {
			t.Errorf("%s: %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}

// FuzzDataPort sends each input to a member's data port and wants the
// member to answer a ping afterwards, its heap bounded.
func FuzzDataPort(f *testing.F) {
	for _, m := range hostileData() {
		f.Add(m)
	}
	f.Add([]byte("*1\r\n$4\r\nping\r\n"))
	f.Add([]byte("*3\r\n$6\r\ndm.put\r\n$11\r\ncnperf-grid\r\n$1\r\nk\r\n"))
	f.Add([]byte("ping\r\nping\r\n"))
	addr := startMember(f)
	f.Fuzz(func(t *testing.T, msg []byte) {
		if _, err := send(addr, msg, 2*time.Second); err != nil {
			t.Fatal(err)
		}
		if err := ping(addr, 2*time.Second); err != nil {
			t.Fatalf("after %q: %v", msg, err)
		}
		if h := heapBytes(); h > heapBound {
			t.Fatalf("after %q: heap %d MB", msg, h>>20)
		}
	})
}

// FuzzGossipPort sends each input to a member's gossip port, over TCP
// and as a UDP packet, and wants the member to answer a ping afterwards,
// its heap bounded.
func FuzzGossipPort(f *testing.F) {
	for _, m := range crashingGossip() {
		f.Add(m)
	}
	f.Add([]byte{encryptMsg, 0, 0, 0, 5, 1, 2, 3, 4, 5})
	f.Add([]byte{encryptMsg, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{244, 1, 'x', pushPullMsg})
	addr := startMember(f)
	gossip := gossipAddr(addr)
	f.Fuzz(func(t *testing.T, msg []byte) {
		if _, err := send(gossip, msg, 2*time.Second); err != nil {
			t.Fatal(err)
		}
		if len(msg) <= 65000 {
			if err := sendUDP(gossip, msg); err != nil {
				t.Fatal(err)
			}
		}
		if err := ping(addr, 2*time.Second); err != nil {
			t.Fatalf("after %q: %v", msg, err)
		}
		if h := heapBytes(); h > heapBound {
			t.Fatalf("after %q: heap %d MB", msg, h>>20)
		}
	})
}

// FuzzRESPReader: redcon's request reader, as the data port runs it,
// never panics and never passes a request beyond its bounds, whatever
// arrives; and however the input is split into reads, it reads the same
// requests and ends the same way as from one read.
func FuzzRESPReader(f *testing.F) {
	for _, m := range hostileData() {
		f.Add(m, uint8(1))
	}
	f.Add([]byte("*2\r\n$3\r\nget\r\n$1\r\nk\r\n*1\r\n$4\r\nping\r\n"), uint8(3))
	f.Add([]byte("ping\r\n*1\r\n$4\r\nping\r\n*2\r\n$3\r\nget\r\n$20\r\n01234567890123456789\r\n"), uint8(6))
	f.Fuzz(func(t *testing.T, msg []byte, chunk uint8) {
		whole, wholeErr := readAll(t, msg, len(msg)+1)
		split, splitErr := readAll(t, msg, int(chunk)+1)
		// A protocol error drops the requests parsed with it in one
		// batch (redcon's way; the connection then closes), and what one
		// batch holds depends on the reads: then one list is a prefix of
		// the other. At the end of the input they are the same.
		same := len(whole) == len(split)
		if wholeErr.Error() != splitErr.Error() || wholeErr == io.EOF && !same {
			t.Fatalf("in one read: %d requests, then %v; in reads of %d bytes: %d, then %v", len(whole), wholeErr, int(chunk)+1, len(split), splitErr)
		}
		for i := range min(len(whole), len(split)) {
			if !slices.EqualFunc(whole[i], split[i], bytes.Equal) {
				t.Fatalf("request %d: %q in one read, %q split", i, whole[i], split[i])
			}
		}
	})
}

// readAll reads requests from msg, at most n bytes per read, until an
// error, checking each against the bounds.
func readAll(t *testing.T, msg []byte, n int) ([][][]byte, error) {
	rd := redcon.NewReader(&chunked{b: msg, n: n})
	var out [][][]byte
	for range 10_000 {
		cmds, err := rd.ReadCommands()
		if err != nil {
			return out, err
		}
		for _, c := range cmds {
			if len(c.Raw) > redcon.MaxRequest || len(c.Args) > redcon.MaxArgs {
				t.Fatalf("a request of %d bytes, %d arguments passed", len(c.Raw), len(c.Args))
			}
			out = append(out, c.Args)
		}
	}
	t.Fatal("reader did not end")
	return nil, nil
}

// chunked reads b at most n bytes at a time.
type chunked struct {
	b []byte
	n int
}

func (c *chunked) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), c.n)], c.b)
	c.b = c.b[n:]
	return n, nil
}

// TestRedconRecoversPanickingConnection: a handler's panic (Olric's
// handlers run in redcon's connection goroutine) closes that connection;
// the server goes on answering others.
func TestRedconRecoversPanickingConnection(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := redcon.NewServer(ln.Addr().String(), func(conn redcon.Conn, cmd redcon.Command) {
		if string(cmd.Args[0]) == "boom" {
			var m map[string]int
			m["x"] = 1 // panics: assignment to a nil map
		}
		conn.WriteString("PONG")
	}, nil, nil)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	defer func() {
		srv.Close()
		<-done
	}()
	addr := ln.Addr().String()
	reply, err := send(addr, []byte("*1\r\n$4\r\nboom\r\n"), 2*time.Second)
	if err != nil || len(reply) != 0 {
		t.Errorf("panicking request: reply %q, %v; want the connection closed", reply, err)
	}
	if err := ping(addr, 2*time.Second); err != nil {
		t.Fatalf("after a handler's panic: %v", err)
	}
}
