package runner

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/bastion-dev/bastion/internal/runspec"
)

// writeInventory lays the inventory out for ansible and returns its path:
// static as an INI file, static-yaml as a .yml file, file as a path that
// must stay inside the checkout.
func writeInventory(inv *runspec.Inventory, checkout, private string) (string, error) {
	if inv == nil {
		return "", nil
	}
	switch inv.Type {
	case "static":
		return writePrivate(filepath.Join(private, "inventory.ini"), inv.Content)
	case "static-yaml":
		return writePrivate(filepath.Join(private, "inventory.yml"), inv.Content)
	case "file":
		return inside(checkout, inv.Content, "the inventory file")
	case "terraform-workspace":
		return "", nil // a workspace name, not a file
	default:
		return "", fmt.Errorf("unknown inventory type %q", inv.Type)
	}
}

// writePrivate writes a file only the runner's user can read.
func writePrivate(path, content string) (string, error) {
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		return "", err
	}
	return path, nil
}
