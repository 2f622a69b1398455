package demorepo

import (
	"encoding/json"
	"io/fs"
	"testing"

	"github.com/bastion-dev/bastion/internal/backup"
)

// The demo project passes the backup format's own checks (so a restore of
// it cannot stop half way for its sake), and every template runs a file
// the repository has.
func TestProject_isAValidBackupWhoseTemplatesRunFilesOfTheRepository(t *testing.T) {
	data, err := json.Marshal(Project(URL("127.0.0.1", DefaultPort)))
	if err != nil {
		t.Fatal(err)
	}
	b, err := backup.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.Repositories[0].GitURL; got != "git://127.0.0.1:9418/demo.git" {
		t.Fatalf("repository URL %q", got)
	}
	if len(b.Templates) != 4 {
		t.Fatalf("%d templates", len(b.Templates))
	}
	for _, tpl := range b.Templates {
		if _, err := fs.Stat(Files(), tpl.Playbook); err != nil {
			t.Errorf("template %q runs %q: %v", tpl.Name, tpl.Playbook, err)
		}
	}
}

func TestURL_bracketsIPv6Hosts(t *testing.T) {
	for host, want := range map[string]string{
		"bastion.bastion-system.svc": "git://bastion.bastion-system.svc:9418/demo.git",
		"::1":                        "git://[::1]:9418/demo.git",
	} {
		if got := URL(host, DefaultPort); got != want {
			t.Errorf("URL(%q) = %q, want %q", host, got, want)
		}
	}
}
