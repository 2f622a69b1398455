package apiserver

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bastion-dev/bastion/internal/hub"
	"github.com/bastion-dev/bastion/internal/store"
)

// StartLinePublisher is PublishLines, also returning whether the
// publisher still keeps state for a task.
func StartLinePublisher(ctx context.Context, informers cache.Informers, reader client.Reader, st store.Store, h *hub.Hub) (func(store.TaskKey) bool, error) {
	p, err := startLinePublisher(ctx, informers, reader, st, h)
	if err != nil {
		return nil, err
	}
	return func(key store.TaskKey) bool {
		_, ok := p.following()[key]
		return ok
	}, nil
}
