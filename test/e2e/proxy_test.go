package e2e

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// cuttingProxy forwards TCP connections to target and cuts each after a
// varying number of bytes from the client, so that requests are lost
// before, while or after the manager handled them.
type cuttingProxy struct {
	ln     net.Listener
	target string
	count  atomic.Int64
	cut    atomic.Int64
	every  int64 // scale of the byte budget, in kB
	wg     sync.WaitGroup
}

func startCuttingProxy(t *testing.T, target string, every int64) *cuttingProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cuttingProxy{ln: ln, target: target, every: every}
	go p.serve()
	t.Cleanup(func() { ln.Close(); p.wg.Wait() })
	return p
}

func (p *cuttingProxy) URL() string { return "http://" + p.ln.Addr().String() }

func (p *cuttingProxy) serve() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.forward(client)
		}()
	}
}

func (p *cuttingProxy) forward(client net.Conn) {
	defer client.Close()
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer server.Close()
	n := p.count.Add(1)
	// Each connection carries a different amount from the runner, then is
	// cut: inside a request, between requests, or while a reply travels.
	budget := p.every*1000 + (n*37_117)%(p.every*4000)
	done := make(chan struct{}, 2)
	go func() {
		copied, _ := io.CopyN(server, client, budget)
		if copied == budget {
			p.cut.Add(1)
		}
		done <- struct{}{}
	}()
	go func() { _, _ = io.Copy(client, server); done <- struct{}{} }()
	<-done
}
