package cmd

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/bastion-dev/bastion/internal/store"
)

// notReadyWhileOpening is /readyz's answer while the store opens.
const notReadyWhileOpening = "the output store is opening (its schema may be migrating; see the log)\n"

// openStore opens the output store, answering the health probes on
// probeAddr ("0": none) meanwhile. Opening may migrate the store's schema,
// which can take minutes (the move to chunks copies every stored line), or
// wait for another replica's migration (PostgreSQL's migration lock). The
// probes the manager serves only start with it, so a kubelet would find
// none answering and, past the startup probe's allowance, restart the
// replica in the middle of its migration, again and again. Meanwhile
// /healthz says the process is alive and /readyz that it is not ready
// (503): the Service sends it nothing. The address is free again once the
// store is open, for the manager's own probes.
func openStore(ctx context.Context, dsn, probeAddr string) (store.Store, error) {
	stop, err := serveOpeningProbes(probeAddr)
	if err != nil {
		return nil, err
	}
	opened, err := store.Open(ctx, dsn)
	stop()
	if err != nil {
		return nil, fmt.Errorf("opening the output store: %w", err)
	}
	return opened, nil
}

// serveOpeningProbes answers /healthz (200) and /readyz (503) on addr
// until stop is called, which returns once the address is released.
func serveOpeningProbes(addr string) (stop func(), err error) {
	if addr == "0" || addr == "" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("cannot listen on %s for the health probes: %w (choose another with --health-probe-bind-address)", addr, unwrapSyscall(err))
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, notReadyWhileOpening, http.StatusServiceUnavailable)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(ln) // http.ErrServerClosed once stopped
	}()
	return func() {
		_ = srv.Close() // the listener and any probe connection
		<-served
	}, nil
}
