package apiserver_test

import (
	"testing"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// resourcesMatrix is docs/features.md §6 for keys, repositories, inventories and
// environments: every member reads, writes need manageProjectResources
// (manager and owner; admins pass every check).
var resourcesMatrix = []matrixRow{
	// Keys.
	{"GET", "/api/project/{project}/keys", "", members(200), nil, false},
	{"POST", "/api/project/{project}/keys", `{"name":"k","type":"none"}`, needs(204, manager, owner), nil, false},
	{"GET", "/api/project/{project}/keys/{key}", "", members(200), seedResources, false},
	{"GET", "/api/project/{project}/keys/{key}/refs", "", members(200), seedResources, false},
	{"PUT", "/api/project/{project}/keys/{key}", `{"id":{key},"name":"renamed"}`, needs(204, manager, owner), seedResources, false},
	{"DELETE", "/api/project/{project}/keys/{spare_key}", "", needs(204, manager, owner), seedResources, false},

	// Repositories.
	{"GET", "/api/project/{project}/repositories", "", members(200), nil, false},
	{"POST", "/api/project/{project}/repositories", `{"name":"r","git_url":"https://git.example/r.git","git_branch":"main","ssh_key_id":{key}}`, needs(204, manager, owner), seedResources, false},
	{"GET", "/api/project/{project}/repositories/{repository}", "", members(200), seedResources, false},
	{"GET", "/api/project/{project}/repositories/{repository}/refs", "", members(200), seedResources, false},
	{"PUT", "/api/project/{project}/repositories/{repository}", `{"name":"r2","git_url":"/srv/r","ssh_key_id":{key}}`, needs(204, manager, owner), seedResources, false},
	{"DELETE", "/api/project/{project}/repositories/{repository}", "", needs(204, manager, owner), seedResources, false},

	// Inventories.
	{"GET", "/api/project/{project}/inventory", "", members(200), nil, false},
	{"POST", "/api/project/{project}/inventory", `{"name":"i","type":"static","inventory":"web1","ssh_key_id":{key}}`, needs(201, manager, owner), seedResources, false},
	{"GET", "/api/project/{project}/inventory/{inventory}", "", members(200), seedResources, false},
	{"GET", "/api/project/{project}/inventory/{inventory}/refs", "", members(200), seedResources, false},
	{"PUT", "/api/project/{project}/inventory/{inventory}", `{"name":"i2","type":"file","inventory":"hosts.ini","ssh_key_id":{key}}`, needs(204, manager, owner), seedResources, false},
	{"DELETE", "/api/project/{project}/inventory/{inventory}", "", needs(204, manager, owner), seedResources, false},

	// Environments.
	{"GET", "/api/project/{project}/environment", "", members(200), nil, false},
	{"POST", "/api/project/{project}/environment", `{"name":"e","json":"{}","env":"{}","secrets":[{"type":"var","name":"x","secret":"s","operation":"create"}]}`, needs(204, manager, owner), nil, false},
	{"GET", "/api/project/{project}/environment/{environment}", "", members(200), seedResources, false},
	{"GET", "/api/project/{project}/environment/{environment}/refs", "", members(200), seedResources, false},
	{"PUT", "/api/project/{project}/environment/{environment}", `{"name":"e2","json":"{\"a\":1}"}`, needs(204, manager, owner), seedResources, false},
	{"DELETE", "/api/project/{project}/environment/{environment}", "", needs(204, manager, owner), seedResources, false},
}

// seedResources makes a key that a repository and an inventory use, a
// spare key nothing uses, and an environment, for the paths to name.
func seedResources(t *testing.T, e *apiEnv, project *bastionv1.Project) map[string]string {
	s := seederFor(t, e, project)
	keyID, keyName := s.key("matrix key", "matrix-pw")
	spareID, _ := s.key("spare key", "matrix-spare-pw")
	repoID, _ := s.repository("matrix-repo", keyName)
	invID, _ := s.inventory("matrix-hosts", keyName)
	envID, _ := s.environment("matrix-env")
	return map[string]string{
		"key": itoa(keyID), "spare_key": itoa(spareID), "repository": itoa(repoID),
		"inventory": itoa(invID), "environment": itoa(envID),
	}
}

func TestPermissionMatrix_resources(t *testing.T) {
	runMatrix(t, resourcesMatrix)
}
