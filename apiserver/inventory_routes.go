package apiserver

import (
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/ids"
)

// inventoryJSON is an inventory (api-contract.md), in answers and requests.
// The optional references answer null when unset, as Semaphore's do.
type inventoryJSON struct {
	ID           int64                   `json:"id"`
	Name         string                  `json:"name"`
	ProjectID    int64                   `json:"project_id"`
	Inventory    string                  `json:"inventory"`
	SSHKeyID     int64                   `json:"ssh_key_id"`
	BecomeKeyID  *int64                  `json:"become_key_id"`
	Type         bastionv1.InventoryType `json:"type"`
	RepositoryID *int64                  `json:"repository_id"`
}

// inventoryRoutes serves /project/{id}/inventory. Members read; writes need
// manageProjectResources.
func (s *Server) inventoryRoutes() chi.Router {
	r := chi.NewRouter()
	r.Get("/", s.listInventories)
	r.With(require(permManageProjectResources)).Post("/", s.createInventory)
	r.Route("/{inventory_id}", func(r chi.Router) {
		r.Use(s.loadEntity("inventory_id", "inventory", func() client.ObjectList { return &bastionv1.InventoryList{} }))
		r.Get("/", s.getInventory)
		r.Get("/refs", s.inventoryRefs)
		r.With(require(permManageProjectResources)).Put("/", s.updateInventory)
		r.With(require(permManageProjectResources)).Delete("/", s.deleteInventory)
	})
	return r
}

var inventoryTypes = map[bastionv1.InventoryType]bool{
	bastionv1.InventoryStatic: true, bastionv1.InventoryStaticYAML: true,
	bastionv1.InventoryFile: true, bastionv1.InventoryTerraformWorkspace: true,
}

// inventoryPath checks the path of a file inventory: relative, and inside
// the repository once resolved (the CRD's rule, in the CRD's words). The
// runner still resolves symbolic links inside the checkout itself.
func inventoryPath(path string) error {
	if strings.TrimSpace(path) == "" {
		return badRequest("Path to Inventory file is required")
	}
	if !insideRepository(path) {
		return badRequest("the inventory file must be a relative path inside the repository")
	}
	return nil
}

// playbookPath checks a template's or a task's playbook the same way: the
// runner refuses a path out of the checkout too, but only once the task
// runs, and the API can say so at once.
func playbookPath(path string) error {
	if strings.TrimSpace(path) == "" {
		return badRequest("Playbook filename is required")
	}
	if !insideRepository(path) {
		return badRequest("the playbook must be a relative path inside the repository")
	}
	return nil
}

// insideRepository: relative, without "..", and without NUL, whether or
// not the surrounding spaces are trimmed later.
func insideRepository(path string) bool {
	path = strings.TrimSpace(path)
	if strings.HasPrefix(path, "/") || strings.ContainsRune(path, 0) {
		return false
	}
	for _, part := range strings.Split(path, "/") {
		if part == ".." {
			return false
		}
	}
	return true
}

// inventorySpec checks a request by spec §5 (name, user credentials, type,
// path for type file) and returns the Inventory's fields.
func (s *Server) inventorySpec(r *http.Request, req inventoryJSON) (bastionv1.InventorySpec, error) {
	name, err := requiredName(req.Name)
	if err != nil {
		return bastionv1.InventorySpec{}, err
	}
	if req.SSHKeyID == 0 {
		return bastionv1.InventorySpec{}, badRequest("User credentials is required")
	}
	switch {
	case req.Type == "":
		return bastionv1.InventorySpec{}, badRequest("Type is required")
	case !inventoryTypes[req.Type]:
		return bastionv1.InventorySpec{}, invalidf("type must be static, static-yaml, file or terraform-workspace, not %q", req.Type)
	}
	content := req.Inventory
	if req.Type == bastionv1.InventoryFile {
		content = strings.TrimSpace(content)
		if err := inventoryPath(content); err != nil {
			return bastionv1.InventorySpec{}, err
		}
	}
	ctx, a := r.Context(), projectOf(r)
	spec := bastionv1.InventorySpec{DisplayName: name, Type: req.Type, Inventory: content}
	key, err := s.refTo(ctx, a, req.SSHKeyID, &corev1.SecretList{}, "ssh_key_id")
	if err != nil {
		return spec, err
	}
	spec.SSHKeyRef = *key
	if id := deref(req.BecomeKeyID); id != 0 {
		if spec.BecomeKeyRef, err = s.refTo(ctx, a, id, &corev1.SecretList{}, "become_key_id"); err != nil {
			return spec, err
		}
	}
	if id := deref(req.RepositoryID); id != 0 {
		if spec.RepositoryRef, err = s.refTo(ctx, a, id, &bastionv1.RepositoryList{}, "repository_id"); err != nil {
			return spec, err
		}
	}
	return spec, nil
}

func (s *Server) toInventoryJSON(r *http.Request, inv *bastionv1.Inventory) inventoryJSON {
	ctx, a := r.Context(), projectOf(r)
	ns := a.namespace()
	return inventoryJSON{
		ID: idOf(inv), Name: inv.Spec.DisplayName, ProjectID: a.id, Inventory: inv.Spec.Inventory, Type: inv.Spec.Type,
		SSHKeyID:     s.refID(ctx, ns, &inv.Spec.SSHKeyRef, secretMetadata()),
		BecomeKeyID:  nullable(s.refID(ctx, ns, inv.Spec.BecomeKeyRef, secretMetadata())),
		RepositoryID: nullable(s.refID(ctx, ns, inv.Spec.RepositoryRef, &bastionv1.Repository{})),
	}
}

func (s *Server) listInventories(w http.ResponseWriter, r *http.Request) {
	list := &bastionv1.InventoryList{}
	if err := s.opts.Client.List(r.Context(), list, inNS(projectOf(r).namespace())); err != nil {
		failErr(w, r, err)
		return
	}
	out := addressable(list.Items, func(inv *bastionv1.Inventory) inventoryJSON { return s.toInventoryJSON(r, inv) })
	sortByName(out, func(x inventoryJSON) string { return x.Name }, func(x inventoryJSON) int64 { return x.ID })
	respond(w, http.StatusOK, out)
}

func (s *Server) getInventory(w http.ResponseWriter, r *http.Request) {
	respond(w, http.StatusOK, s.toInventoryJSON(r, entity[*bastionv1.Inventory](r, "inventory_id")))
}

func (s *Server) inventoryRefs(w http.ResponseWriter, r *http.Request) {
	s.respondRefs(w, r, refInventory, entity[*bastionv1.Inventory](r, "inventory_id").Name)
}

// createInventory answers 201 with the inventory (api-contract.md).
func (s *Server) createInventory(w http.ResponseWriter, r *http.Request) {
	var req inventoryJSON
	if !decode(w, r, &req) {
		return
	}
	spec, err := s.inventorySpec(r, req)
	if err != nil {
		failErr(w, r, err)
		return
	}
	inv := &bastionv1.Inventory{Spec: spec}
	id, err := s.createObject(r.Context(), projectOf(r), inv, ids.CounterInventory, spec.DisplayName)
	if err != nil {
		failErr(w, r, err)
		return
	}
	s.objectEvent(r, "inventory", id, spec.DisplayName, "created")
	respond(w, http.StatusCreated, s.toInventoryJSON(r, inv))
}

func (s *Server) updateInventory(w http.ResponseWriter, r *http.Request) {
	inv := entity[*bastionv1.Inventory](r, "inventory_id")
	var req inventoryJSON
	if !decode(w, r, &req) {
		return
	}
	if err := bodyID(r, "inventory_id", req.ID); err != nil {
		failErr(w, r, err)
		return
	}
	spec, err := s.inventorySpec(r, req)
	if err != nil {
		failErr(w, r, err)
		return
	}
	if err := s.updateObject(r.Context(), inv, func() error { inv.Spec = spec; return nil }); err != nil {
		failErr(w, r, err)
		return
	}
	s.objectEvent(r, "inventory", idOf(inv), spec.DisplayName, "updated")
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) deleteInventory(w http.ResponseWriter, r *http.Request) {
	inv := entity[*bastionv1.Inventory](r, "inventory_id")
	if s.refuseIfReferenced(w, r, refInventory, inv.Name, inv.Spec.DisplayName) {
		return
	}
	if err := s.deleteObject(r.Context(), inv); err != nil {
		failErr(w, r, err)
		return
	}
	s.objectEvent(r, "inventory", idOf(inv), inv.Spec.DisplayName, "deleted")
	w.WriteHeader(http.StatusNoContent)
}
