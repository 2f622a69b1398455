package cmd

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// probes serves the manager's health probes, /healthz and /readyz, for
// the whole life of the process, from before its store opens.
//
// controller-runtime's manager serves probes only once it starts, after
// the store has opened, and opening may migrate the store's schema for
// minutes (the move to chunks copies every stored line) or wait for
// another replica's migration (PostgreSQL's migration lock). A kubelet
// finding no answer meanwhile restarted the replica, past the startup
// probe's allowance, in the middle of its migration, which then rolled
// back and started over. So the manager binds the probe address itself,
// at once, and keeps it:
//
//   - /healthz answers 200 from the start: the process is alive, whether
//     it migrates, starts its controllers or serves. Only a start that
//     hangs after the store opened (an apiserver that never answers the
//     caches' lists) fails it, past startAllowance, so that the kubelet
//     restarts the replica as its startup probe did before. A migration
//     is never cut short: the log says what it does, or what it waits for;
//   - /readyz answers 503 with the reason until the manager's runnables
//     have started (its caches synced), so that the Service sends a replica
//     nothing before it can serve; 200 while it serves; 503 again once it
//     is told to stop. With --shutdown-delay the API keeps answering for
//     that long after /readyz turns 503, while the Service and the proxies
//     in front of it stop sending the replica new requests; without it the
//     API closes at the same moment, and a request that meets it fails
//     (runners and the console try again, on another replica).
type probes struct {
	srv    *http.Server
	served chan struct{}
	// notReady is why /readyz answers 503; empty: ready.
	notReady atomic.Pointer[string]
	// starting is when the manager began to start (whyStarting), with the
	// monotonic clock's reading (a wall clock set forward while a replica
	// starts must not kill it); nil when it is not starting.
	starting atomic.Pointer[time.Time]
	// mu orders set and stop; stopping is set once the process was told to
	// stop: from then on nothing makes the replica ready again (a stop
	// during the caches' sync must not read ready when they finish).
	mu       sync.Mutex
	stopping bool
}

// startAllowance is how long a replica may take, once its store is open,
// to make its manager and sync its caches: seconds as a rule. The sync of
// the manager's caches, which holds /readyz back, has no timeout of its
// own (the controllers' two-minute CacheSyncTimeout runs later, on the
// leader).
const startAllowance = 5 * time.Minute

// Why a replica is not ready, in /readyz's answer.
const (
	whyOpening  = "the output store is opening (its schema may be migrating; see the log)"
	whyStarting = "the manager is starting"
	whyStopping = "the manager is stopping"
	whyDraining = "the manager is stopping (its API answers until the shutdown delay ends)"
)

// serveProbes binds addr and answers the probes on it; "0" or "": none
// (nil, which every method takes).
func serveProbes(addr string) (*probes, error) {
	if addr == "0" || addr == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("cannot listen on %s for the health probes: %w (choose another with --health-probe-bind-address)", addr, unwrapSyscall(err))
	}
	p := &probes{served: make(chan struct{})}
	p.set(whyOpening)
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		if since := p.startingFor(); since > startAllowance {
			http.Error(w, fmt.Sprintf("the manager has been starting for %s since its store opened", since.Round(time.Second)), http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if why := *p.notReady.Load(); why != "" {
			http.Error(w, why, http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	// As controller-runtime's probe server: the address is open to the
	// kubelet and so, as a rule, to the pod network.
	p.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 90 * time.Second, MaxHeaderBytes: 1 << 16}
	go func() {
		defer close(p.served)
		_ = p.srv.Serve(ln) // http.ErrServerClosed once closed
	}()
	return p, nil
}

func (p *probes) set(why string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopping {
		return
	}
	if why == whyStarting {
		now := time.Now()
		p.starting.Store(&now)
	} else {
		p.starting.Store(nil)
	}
	p.notReady.Store(&why)
}

// startingFor is how long the manager has been starting; 0 when it is not.
func (p *probes) startingFor() time.Duration {
	if at := p.starting.Load(); at != nil {
		return time.Since(*at)
	}
	return 0
}

// readiness is the runnable that makes the replica ready once the manager
// has started its runnables (on every replica, not only the leader: each
// serves the API), and not ready once it stops.
func (p *probes) readiness() onEveryReplica {
	return func(ctx context.Context) error {
		p.set("")
		<-ctx.Done()
		p.stop(whyStopping)
		return nil
	}
}

// stop makes /readyz answer 503 with why from now until the process ends.
func (p *probes) stop(why string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.starting.Store(nil)
	p.notReady.Store(&why)
	p.stopping = true
}

// Close stops answering and releases the address.
func (p *probes) Close() {
	if p == nil {
		return
	}
	_ = p.srv.Close()
	<-p.served
}
