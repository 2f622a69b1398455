package store_test

import (
	"testing"

	"github.com/bastion-dev/bastion/internal/store"
)

func TestSQLitePath_namesTheFileOfASQLiteDSNOnly(t *testing.T) {
	for dsn, want := range map[string]struct {
		path string
		ok   bool
	}{
		"sqlite:///var/lib/bastion/bastion.db": {"/var/lib/bastion/bastion.db", true},
		"data/bastion.db":                      {"data/bastion.db", true},
		"sqlite://":                            {"", true}, // Open says the path is empty
		"postgres://u:p@db/bastion":            {"", false},
		"postgresql://db/bastion":              {"", false},
		"mysql://db/bastion":                   {"", false},
		"":                                     {"", false},
	} {
		if path, ok := store.SQLitePath(dsn); path != want.path || ok != want.ok {
			t.Errorf("SQLitePath(%q) = %q, %v; want %q, %v", dsn, path, ok, want.path, want.ok)
		}
	}
}
