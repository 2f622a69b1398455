package apiserver_test

import "testing"

// hardeningMatrix holds the routes TestPermissionMatrix_coversEveryRoute
// found in no other matrix.
var hardeningMatrix = []matrixRow{
	// A token id nobody has: signed-in callers reach the handler (404),
	// anonymous ones do not.
	{"DELETE", "/api/user/tokens/{nonce}", "", expect{anonymous: 401, "*": 404}, nil, false},
	// Restoring makes a project: who may create projects (docs/features.md §6).
	{"POST", "/api/projects/restore", `{"meta":{"name":"restored {nonce}"}}`, adminsOnly(200), nil, false},
	// Linking single sign-on needs a session; every signed-in user may
	// link their own (TestOIDC_aSignedInUserLinksTheirIdentity). This
	// server has no providers, so a signed-in caller meets 404.
	{"GET", "/api/auth/oidc/{nonce}/link", "", expect{anonymous: 401, "*": 404}, nil, false},
}

func TestPermissionMatrix_hardening(t *testing.T) { runMatrix(t, hardeningMatrix) }
