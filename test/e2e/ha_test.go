package e2e

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// The HA test bed itself (issue #21): three managers on one store, one of
// them leading, each serving the API; a project made through one replica
// is read through the others and through the proxy.
func TestHA_threeManagersOnOneStoreServeOneProductAndOneLeads(t *testing.T) {
	t.Parallel()
	h := startHA(t, 3)
	leader := h.waitLeader(30 * time.Second)
	if n := len(h.followers()); n != 2 {
		t.Fatalf("%s leads and %d others follow, want 2", leader.name, n)
	}
	first := h.signIn(h.managers[0].url)
	var project struct {
		ID int64 `json:"id"`
	}
	first.must("POST", "/api/projects", map[string]any{"name": "Shared"}, http.StatusCreated, &project)
	for _, m := range h.managers[1:] {
		api := h.signIn(m.url)
		eventually(t, 5*time.Second, m.name+" lists the project", func() error {
			if code, body := api.call("GET", "/api/project/"+itoa(project.ID), nil); code != http.StatusOK {
				return fmt.Errorf("%s answers %d %s", m.name, code, body)
			}
			return nil
		})
	}
	through := h.signIn(h.proxy.URL())
	for range 6 {
		through.must("GET", "/api/project/"+itoa(project.ID), nil, http.StatusOK, nil)
	}
	for _, m := range h.managers {
		if n := h.proxy.servedBy(m.url); n < 2 {
			t.Errorf("the proxy sent %d requests to %s, want every replica to serve its share", n, m.name)
		}
	}
}
