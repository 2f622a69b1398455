package cmd

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
)

func TestSetMemoryLimit_takesNinetyPercentOfTheContainersLimitUnlessGOMEMLIMITIsSet(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1)) // the test's own limit, back as it was
	write := func(t *testing.T, files map[string]string) string {
		root := t.TempDir()
		for name, text := range files {
			path := filepath.Join(root, name)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return root
	}
	noEnv := func(string) string { return "" }
	for _, c := range []struct {
		name  string
		files map[string]string
		env   func(string) string
		want  int64 // 0: no limit set
	}{
		{"cgroup v2, 512 MiB", map[string]string{"memory.max": "536870912\n"}, noEnv, 483183820},
		{"cgroup v2, no limit", map[string]string{"memory.max": "max\n"}, noEnv, 0},
		{"cgroup v1, 1 GiB", map[string]string{"memory/memory.limit_in_bytes": "1073741824\n"}, noEnv, 966367641},
		{"cgroup v1, no limit", map[string]string{"memory/memory.limit_in_bytes": "9223372036854771712\n"}, noEnv, 0},
		{"no cgroup files", nil, noEnv, 0},
		{"garbage", map[string]string{"memory.max": "lots\n"}, noEnv, 0},
		{"GOMEMLIMIT set", map[string]string{"memory.max": "536870912\n"}, func(k string) string {
			if k == "GOMEMLIMIT" {
				return "300MiB"
			}
			return ""
		}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			const before = 1 << 40
			debug.SetMemoryLimit(before)
			got, ok := setMemoryLimit(write(t, c.files), c.env)
			now := debug.SetMemoryLimit(-1)
			switch {
			case c.want == 0 && (ok || now != before):
				t.Fatalf("set %d (runtime now %d), want the limit left alone", got, now)
			case c.want != 0 && (!ok || got != c.want || now != c.want):
				t.Fatalf("set %d, %v (runtime now %d), want %d", got, ok, now, c.want)
			}
		})
	}
}
