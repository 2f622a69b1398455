package apiserver

import (
	"context"
	"net/http/httptest"

	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/runproto"
)

// RecordRunFacts is what the runner endpoint writes of batch onto task,
// as it last read it, through c.
func RecordRunFacts(ctx context.Context, c client.Client, task *bastionv1.Task, batch runproto.Batch, ack int64) error {
	return new(RunnerTaskState).Record(ctx, c, task, batch, ack)
}

// RunnerTaskState is what the runner endpoint keeps of one task between
// its batches.
type RunnerTaskState struct{ st taskState }

// Record is RecordRunFacts with the state of the task's earlier batches.
func (s *RunnerTaskState) Record(ctx context.Context, c client.Client, task *bastionv1.Task, batch runproto.Batch, ack int64) error {
	e := &runnerEvents{client: c, reader: c}
	return e.record(httptest.NewRequest("POST", "/", nil).WithContext(ctx), &s.st, task, batch, ack)
}
