package cmd

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
)

// maxShutdownDelay bounds --shutdown-delay: a few seconds are all the
// proxies need. The pod's termination grace period must hold the delay and
// the stop after it (up to controller-runtime's 30 s for the runnables, then
// the Lease's release and the store's close): the chart sets it to the
// delay plus 45 s.
const maxShutdownDelay = time.Minute

// stopOnSignal is the manager's context. It ends at the first SIGTERM or
// SIGINT, or, with a shutdown delay, that long after it: /readyz answers
// 503 at once while the API, and the controllers if this replica leads,
// go on. Kubernetes takes a terminating pod out of its Service's endpoints
// at the moment it sends SIGTERM, but the proxies in front of the pod
// (kube-proxy on every node, an ingress controller) learn it a moment
// later and send it new requests meanwhile; a replica that closed its API
// at once refused them. A second signal ends the process at once, as
// controller-runtime's own handler does. draining is closed at the first
// signal.
func stopOnSignal(delay time.Duration, p *probes, draining chan<- struct{}) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-signals
		close(draining)
		if delay > 0 {
			p.stop(whyDraining)
			ctrl.Log.Info("stopping after the shutdown delay: /readyz answers 503 and the API still answers meanwhile", "delay", delay.String())
			select {
			case <-time.After(delay):
			case <-signals:
				os.Exit(1)
			}
		}
		cancel()
		<-signals
		os.Exit(1)
	}()
	return ctx
}
