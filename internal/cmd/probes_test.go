package cmd

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The probes' answers through a replica's life: alive throughout; ready
// only between the start of the manager's runnables and their stop, and
// otherwise 503 with the reason. Closing releases the address.
func TestProbes_aliveThroughoutReadyOnlyWhileServing(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	p, err := serveProbes(addr)
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, strings.TrimSpace(string(body))
	}
	expect := func(stage string, ready int, why string) {
		t.Helper()
		if code, body := get("/healthz"); code != http.StatusOK || body != "ok" {
			t.Errorf("%s: /healthz %d %q, want 200", stage, code, body)
		}
		if code, body := get("/readyz"); code != ready || body != why {
			t.Errorf("%s: /readyz %d %q, want %d %q", stage, code, body, ready, why)
		}
	}
	expect("the store opening", http.StatusServiceUnavailable, whyOpening)
	p.set(whyStarting)
	expect("the manager starting", http.StatusServiceUnavailable, whyStarting)
	// A start that hangs past its allowance is no longer alive.
	began := *p.starting.Load()
	hung := began.Add(-startAllowance - time.Second)
	p.starting.Store(&hung)
	if code, body := get("/healthz"); code != http.StatusServiceUnavailable || !strings.HasPrefix(body, "the manager has been starting for") {
		t.Errorf("a start past its limit: /healthz %d %q, want 503", code, body)
	}
	p.starting.Store(&began)

	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- p.readiness().Start(ctx) }()
	for range 200 { // the runnable sets it as it starts
		if code, _ := get("/readyz"); code == http.StatusOK {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	expect("serving", http.StatusOK, "ok")
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	expect("stopping", http.StatusServiceUnavailable, whyStopping)
	// Once told to stop, nothing makes it ready again: a readiness runnable
	// that starts late (a SIGTERM during the caches' sync) sets nothing.
	p.set("")
	expect("stopped, then a late start", http.StatusServiceUnavailable, whyStopping)

	p.Close()
	again, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("the probe address is still held after Close: %v", err)
	}
	_ = again.Close()

	// Disabled: nothing listens, and every method takes the nil.
	if p, err := serveProbes("0"); p != nil || err != nil {
		t.Fatalf(`serveProbes("0") = %v, %v`, p, err)
	}
	var none *probes
	none.set(whyStarting)
	none.stop(whyDraining)
	none.Close()
}
