package server

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"
)

func TestServe(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, NewPongHandler(100)) }()

	url := "http://" + ln.Addr().String() + "/pong/4"
	resp, body := get(t, "GET", url)
	if resp.StatusCode != 200 || string(body) != "pong" {
		t.Fatalf("served %d %q", resp.StatusCode, body)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve after cancel = %v, want nil", err)
		}
	case <-time.After(ShutdownGrace + 2*time.Second):
		t.Fatal("Serve did not return after cancel")
	}
	if _, err := (&http.Client{Timeout: time.Second}).Get(url); err == nil {
		t.Error("still serving after shutdown")
	}

	// A listener that fails is reported.
	ln2, _ := net.Listen("tcp", "127.0.0.1:0")
	ln2.Close()
	if err := Serve(context.Background(), ln2, NewPongHandler(1)); err == nil {
		t.Error("Serve on a closed listener returned nil")
	}
}
