package apiserver

import (
	"net/http"
	"strings"

	corev1 "k8s.io/api/core/v1"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/kinds"
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
	managedJSON
}

// inventoryResource serves /project/{id}/inventory. Members read; writes
// need manageProjectResources.
var inventoryResource = &resource[*bastionv1.Inventory, inventoryJSON, inventoryJSON]{
	kind: kinds.Inventory, path: "/inventory", param: "inventory_id",
	toJSON: (*Server).toInventoryJSON, answerCreated: true,
	build: func(s *Server, r *http.Request, req *inventoryJSON, _ *bastionv1.Inventory) (func(*bastionv1.Inventory) error, error) {
		spec, err := s.inventorySpec(r, *req)
		return func(inv *bastionv1.Inventory) error { inv.Spec = spec; return nil }, err
	},
	refs: referencedBy(kinds.Inventory),
}

var inventoryTypes = map[bastionv1.InventoryType]bool{
	bastionv1.InventoryStatic: true, bastionv1.InventoryStaticYAML: true,
	bastionv1.InventoryFile: true, bastionv1.InventoryTerraformWorkspace: true,
}

// inventoryPath checks the path of a file inventory: relative, and inside
// the repository once resolved (the CRD's rule, in the CRD's words). The
// runner still resolves symbolic links inside the checkout itself.
func inventoryPath(path string) error {
	return repositoryPath(path, "Path to Inventory file is required", "the inventory file")
}

// playbookPath checks a template's or a task's playbook the same way: the
// runner refuses a path out of the checkout too, but only once the task
// runs, and the API can say so at once.
func playbookPath(path string) error {
	return repositoryPath(path, "Playbook filename is required", "the playbook")
}

// repositoryPath refuses an empty path with required, and one outside the
// repository saying what (the file) must be inside it.
func repositoryPath(path, required, what string) error {
	if strings.TrimSpace(path) == "" {
		return badRequest(required)
	}
	if !insideRepository(path) {
		return badRequest(what + " must be a relative path inside the repository")
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

// inventorySpec checks a request by docs/features.md §5 (name, user credentials, type,
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

func (s *Server) toInventoryJSON(r *http.Request, inv *bastionv1.Inventory) (inventoryJSON, error) {
	ctx, a := r.Context(), projectOf(r)
	ns := a.namespace()
	return inventoryJSON{
		ID: idOf(inv), Name: inv.Spec.DisplayName, ProjectID: a.id, Inventory: inv.Spec.Inventory, Type: inv.Spec.Type,
		SSHKeyID:     s.refID(ctx, ns, &inv.Spec.SSHKeyRef, secretMetadata()),
		BecomeKeyID:  nullable(s.refID(ctx, ns, inv.Spec.BecomeKeyRef, secretMetadata())),
		RepositoryID: nullable(s.refID(ctx, ns, inv.Spec.RepositoryRef, &bastionv1.Repository{})),
	}, nil
}
