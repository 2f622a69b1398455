package apiserver

import (
	"context"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

func (s *Server) fillDemo(ctx context.Context, project *bastionv1.Project) error {
	return nil
}
