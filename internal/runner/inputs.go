// Package runner runs one task from the inputs its launcher laid out (see
// internal/runspec): it checks out the repository, writes the inventory and
// credentials into a private work directory, runs ansible-playbook,
// terraform or bash with argv only (never a shell), and hands every output
// line to a Sink.
package runner

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/bastion-dev/bastion/internal/runspec"
)

// Inputs are a task's runspec and the Secrets it may read.
type Inputs struct {
	Spec       runspec.Spec
	Token      string
	secretsDir string
}

// LoadInputs reads task.json and the token from inputDir.
func LoadInputs(inputDir, secretsDir string) (*Inputs, error) {
	data, err := os.ReadFile(filepath.Join(inputDir, runspec.TaskFile))
	if err != nil {
		return nil, fmt.Errorf("reading the task: %w", err)
	}
	in := &Inputs{secretsDir: secretsDir}
	if err := json.Unmarshal(data, &in.Spec); err != nil {
		return nil, fmt.Errorf("reading the task: %w", err)
	}
	token, err := os.ReadFile(filepath.Join(inputDir, runspec.TokenFile))
	if err != nil {
		return nil, fmt.Errorf("reading the task's token: %w", err)
	}
	in.Token = strings.TrimSpace(string(token))
	return in, nil
}

// secret reads one key of a mounted Secret; missing is "".
func (in *Inputs) secret(name, key string) (string, error) {
	if name == "" {
		return "", nil
	}
	if !validName(name) || !validName(key) {
		return "", fmt.Errorf("secret %q has an invalid name or key", name)
	}
	data, err := os.ReadFile(filepath.Join(in.secretsDir, name, key))
	if os.IsNotExist(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("reading secret %s: %w", name, err)
	}
	return string(data), nil
}

// secretValues returns the keys of a mounted Secret that start with
// prefix, without it (the "var." and "env." keys of environments).
func (in *Inputs) secretValues(name, prefix string) (map[string]string, error) {
	out := map[string]string{}
	if name == "" {
		return out, nil
	}
	if !validName(name) {
		return nil, fmt.Errorf("secret %q has an invalid name", name)
	}
	entries, err := os.ReadDir(filepath.Join(in.secretsDir, name))
	if err != nil {
		return nil, fmt.Errorf("reading secret %s: %w", name, err)
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasPrefix(e.Name(), prefix) {
			continue // kubelet's ..data links and other keys
		}
		value, err := in.secret(name, e.Name())
		if err != nil {
			return nil, err
		}
		out[strings.TrimPrefix(e.Name(), prefix)] = value
	}
	return out, nil
}

// validName accepts Kubernetes object names and Secret keys, which can
// never leave the directory they are joined to.
func validName(s string) bool {
	if s == "" || s == "." || s == ".." {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// inside resolves rel inside root and refuses anything that leaves it,
// through "..", an absolute path or a symbolic link.
func inside(root, rel, what string) (string, error) {
	if rel == "" {
		return "", fmt.Errorf("%s is empty", what)
	}
	if filepath.IsAbs(rel) {
		return "", fmt.Errorf("%s %q must be a path inside the repository", what, rel)
	}
	joined := filepath.Join(root, rel)
	if !within(root, joined) {
		return "", fmt.Errorf("%s %q leaves the repository", what, rel)
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(joined)
	if os.IsNotExist(err) {
		return "", fmt.Errorf("%s %q does not exist in the repository", what, rel)
	}
	if err != nil {
		return "", err
	}
	if !within(realRoot, real) {
		return "", fmt.Errorf("%s %q leaves the repository through a symbolic link", what, rel)
	}
	return joined, nil
}

func within(root, path string) bool {
	r, err := filepath.Rel(root, path)
	return err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) && !filepath.IsAbs(r)
}
