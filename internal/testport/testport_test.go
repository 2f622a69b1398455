package testport

import (
	"fmt"
	"net"
	"testing"
)

// Ports come from below the kernel's ephemeral range, each once, and each
// can be bound when handed out.
func TestFree_handsOutDistinctBindablePortsBelowTheEphemeralRange(t *testing.T) {
	top, err := lowestEphemeral()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for range 200 {
		port, err := Free()
		if err != nil {
			t.Fatal(err)
		}
		if port < First || port >= top {
			t.Fatalf("port %d outside [%d, %d)", port, First, top)
		}
		if seen[port] {
			t.Fatalf("port %d handed out twice", port)
		}
		seen[port] = true
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			t.Fatalf("port %d cannot be bound: %v", port, err)
		}
		ln.Close()
	}
}
