package apiserver

import (
	"net/http"
	"sort"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// schedulesOf lists the schedules that run template t.
func (s *Server) schedulesOf(r *http.Request, t *bastionv1.Template) ([]bastionv1.Schedule, error) {
	list := &bastionv1.ScheduleList{}
	if err := s.opts.Client.List(r.Context(), list, inNS(t.Namespace)); err != nil {
		return nil, err
	}
	out := []bastionv1.Schedule{}
	for _, sch := range list.Items {
		if sch.Spec.TemplateRef.Name == t.Name && sch.DeletionTimestamp.IsZero() {
			out = append(out, sch)
		}
	}
	sort.Slice(out, func(i, j int) bool { return idOf(&out[i]) < idOf(&out[j]) })
	return out, nil
}

// templateSchedules serves GET templates/{id}/schedules.
func (s *Server) templateSchedules(w http.ResponseWriter, r *http.Request) {
	t := templateOf(r)
	schedules, err := s.schedulesOf(r, t)
	if err != nil {
		failErr(w, r, err)
		return
	}
	a := projectOf(r)
	out := make([]scheduleJSON, 0, len(schedules))
	for i := range schedules {
		item, _ := s.toScheduleJSON(r.Context(), a, &schedules[i])
		s.markManaged(&item, &schedules[i])
		out = append(out, item)
	}
	respond(w, http.StatusOK, out)
}
