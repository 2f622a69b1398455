package metrics

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

var (
	tasksDesc = prometheus.NewDesc("bastion_tasks",
		"Task objects by status (finished tasks are counted until retention prunes them).", []string{"status"}, nil)
	queueDesc = prometheus.NewDesc("bastion_task_queue_length",
		"Tasks waiting to start, by project namespace.", []string{"namespace"}, nil)
)

// statuses are reported even at zero, so a dashboard has every series.
var statuses = []bastionv1.TaskStatusValue{
	bastionv1.TaskWaiting, bastionv1.TaskStarting, bastionv1.TaskWaitingConfirmation, bastionv1.TaskConfirmed,
	bastionv1.TaskRunning, bastionv1.TaskSuccess, bastionv1.TaskError, bastionv1.TaskStopping, bastionv1.TaskStopped,
}

// taskCollector counts Tasks in the informer cache at each scrape.
type taskCollector struct{ reader client.Reader }

func (c taskCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- tasksDesc
	ch <- queueDesc
}

func (c taskCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	tasks := &bastionv1.TaskList{}
	projects := &bastionv1.ProjectList{}
	if err := c.reader.List(ctx, tasks); err != nil {
		c.skip(err)
		return
	}
	if err := c.reader.List(ctx, projects); err != nil {
		c.skip(err)
		return
	}
	byStatus := map[bastionv1.TaskStatusValue]int{}
	queued := map[string]int{}
	// Every project has a queue, empty ones included.
	for _, p := range projects.Items {
		if p.Status.Namespace != "" {
			queued[p.Status.Namespace] = 0
		}
	}
	for _, t := range tasks.Items {
		status := t.Status.Status
		if status == "" {
			status = bastionv1.TaskWaiting // not yet seen by its controller
		}
		byStatus[status]++
		if status == bastionv1.TaskWaiting {
			queued[t.Namespace]++
		}
	}
	for _, s := range statuses {
		ch <- prometheus.MustNewConstMetric(tasksDesc, prometheus.GaugeValue, float64(byStatus[s]), string(s))
	}
	for ns, n := range queued {
		ch <- prometheus.MustNewConstMetric(queueDesc, prometheus.GaugeValue, float64(n), ns)
	}
}

// skip leaves these series out of one scrape when the cache cannot answer
// (before it has synced). An invalid metric instead would fail the whole
// scrape: controller-runtime's handler answers 500 on any collector error,
// which would hide every other metric too.
func (c taskCollector) skip(err error) {
	ctrl.Log.WithName("metrics").V(1).Info("task metrics left out of this scrape", "reason", err.Error())
}

var current struct {
	sync.Mutex
	c prometheus.Collector
}

// RegisterTaskCollector reports tasks by status and the queue per project,
// read from reader (the manager's cache). A second call (another manager
// in the same process, as in tests) replaces the first.
func RegisterTaskCollector(reader client.Reader) error {
	current.Lock()
	defer current.Unlock()
	if current.c != nil {
		ctrlmetrics.Registry.Unregister(current.c)
	}
	c := taskCollector{reader: reader}
	if err := ctrlmetrics.Registry.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if !errors.As(err, &are) {
			return err
		}
	}
	current.c = c
	return nil
}
