// Package metrics holds Bastion's own Prometheus metrics. They are
// registered with controller-runtime's registry, so the manager serves them
// on its metrics port next to the controllers' and the client's.
//
// Counters and histograms are updated where things happen (a task ends, the
// runner's lines are stored, a websocket connects, the store answers);
// tasks by status and the queue per project are counted from the informer
// cache at scrape time, so they can never drift from the objects.
package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	// TaskDuration observes how long each finished task ran, by final
	// status (success, error, stopped).
	TaskDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "bastion_task_duration_seconds",
		Help: "How long finished tasks ran, from start to end, by final status.",
		// One second to six hours (the default --task-deadline).
		Buckets: []float64{1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 21600},
	}, []string{"status"})

	// OutputLines counts task output lines stored; rate() of it is the
	// output lines per second.
	OutputLines = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "bastion_task_output_lines_total",
		Help: "Task output lines received from runners and stored.",
	})

	// WebsocketClients is the number of connected /api/ws clients.
	WebsocketClients = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "bastion_websocket_clients",
		Help: "Websocket clients connected to /api/ws.",
	})

	// RunnerTasks is the number of tasks whose state (token, last ack)
	// the runner endpoint holds; each goes when its task ends,
	// so it stays near the number of running tasks.
	RunnerTasks = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "bastion_runner_tasks_tracked",
		Help: "Tasks whose runner state the manager's runner endpoint holds; freed when each task ends.",
	})

	// StoreLatency observes each call to the output store, by operation.
	StoreLatency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "bastion_store_latency_seconds",
		Help:    "Latency of output store calls (SQLite or PostgreSQL), by operation.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
	}, []string{"operation"})
)

func init() {
	ctrlmetrics.Registry.MustRegister(TaskDuration, OutputLines, WebsocketClients, RunnerTasks, StoreLatency)
}

// ObserveTask records a finished task's run time; a task that never
// started (stopped while queued) has no duration and is not observed.
func ObserveTask(status string, start, end time.Time) {
	if start.IsZero() || end.IsZero() || end.Before(start) {
		return
	}
	TaskDuration.WithLabelValues(status).Observe(end.Sub(start).Seconds())
}
