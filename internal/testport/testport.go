// Package testport hands out TCP ports for servers that tests start and that
// bind the port themselves (a child process, PostgreSQL), which must still
// be free when the server binds it, hundreds of milliseconds after the test
// asked.
//
// A port the kernel gives for ":0" is in its ephemeral range, where any
// listener on ":0" or any outgoing connection of the tests running in
// parallel (envtest, PostgreSQL, HTTP clients) can take it between the
// test's check and the server's bind: it happened, and a manager exited
// because its metrics port was gone. The kernel never hands out ports below
// that range, so here only this package does: each port once per process,
// from a random start so that two test binaries running side by side, or
// two runs in a row, seldom meet.
package testport

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strings"
	"sync/atomic"
)

// First is the lowest port handed out.
const First = 20000

var next = func() *atomic.Int32 {
	n := &atomic.Int32{}
	n.Store(rand.Int32N(10000))
	return n
}()

// Free answers a port on 127.0.0.1 below the ephemeral range that nothing
// listened on a moment ago and that this process has not handed out before
// (until the range wraps).
func Free() (int, error) {
	top, err := lowestEphemeral()
	if err != nil {
		return 0, err
	}
	span := int32(top - First)
	for range span {
		port := First + int(next.Add(1)%span)
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue // something else on the machine has it
		}
		ln.Close()
		return port, nil
	}
	return 0, fmt.Errorf("testport: no free port between %d and %d", First, top)
}

// lowestEphemeral is the first port of the kernel's ephemeral range.
func lowestEphemeral() (int, error) {
	raw, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, fmt.Errorf("testport: reading the ephemeral port range: %w", err)
	}
	var low, high int
	if _, err := fmt.Sscan(string(raw), &low, &high); err != nil || low <= First+1000 {
		return 0, fmt.Errorf("testport: the ephemeral port range %q leaves no room below it (from %d)", strings.TrimSpace(string(raw)), First)
	}
	return low, nil
}
