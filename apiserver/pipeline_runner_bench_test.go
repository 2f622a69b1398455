package apiserver

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/bastion-dev/bastion/internal/gitremote/gittest"
	"github.com/bastion-dev/bastion/internal/runspec"
)

// The benchmarks' runner is the whole `bastion` binary of this tree, built
// once per test binary ($BASTION_BIN instead, if set), as `bastion dev`
// runs it.
var (
	benchBinOnce sync.Once
	benchBin     string
	benchBinDir  string
	benchBinErr  error
)

func benchBastion(b *testing.B) string {
	b.Helper()
	benchBinOnce.Do(func() {
		if benchBin = os.Getenv("BASTION_BIN"); benchBin != "" {
			return
		}
		if benchBinDir, benchBinErr = os.MkdirTemp("", "bastion-bench-"); benchBinErr != nil {
			return
		}
		benchBin = filepath.Join(benchBinDir, "bastion")
		if out, err := exec.Command("go", "build", "-o", benchBin, "..").CombinedOutput(); err != nil {
			benchBinErr = fmt.Errorf("building bastion: %v\n%s", err, out)
		}
	})
	if benchBinErr != nil {
		b.Fatal(benchBinErr)
	}
	return benchBin
}

// RemoveBenchBastion removes the binary benchBastion built (called by
// TestMain, in the external test package).
func RemoveBenchBastion() {
	if benchBinDir != "" {
		_ = os.RemoveAll(benchBinDir)
	}
}

// startRunner runs script as the bash task t1 in a real runner process,
// laid out as the local launcher of `bastion dev` lays it out: task.json
// and the token in an input directory, the script committed to a git
// repository the runner clones, the runner's own stdout and stderr (every
// line echoed, as `kubectl logs` shows it) appended to a log file. The
// returned function waits for the runner to end and says how it ended.
func (p *pipeline) startRunner(b *testing.B, script string) (wait func() error) {
	b.Helper()
	repo := gittest.NewRepo(b)
	repo.WriteFile("run.sh", script, true)
	dir := b.TempDir()
	input, work, tmp := filepath.Join(dir, "input"), filepath.Join(dir, "work"), filepath.Join(dir, "tmp")
	for _, d := range []string{input, work, tmp} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			b.Fatal(err)
		}
	}
	spec, _ := json.Marshal(runspec.Spec{Namespace: "bastion-bench", Name: "t1", ID: 7, App: "bash", Playbook: "run.sh",
		Repository: runspec.Repository{URL: repo.FileURL()}, ManagerURL: p.runnerURL})
	if err := os.WriteFile(filepath.Join(input, runspec.TaskFile), spec, 0o600); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(input, runspec.TokenFile), []byte("tok"), 0o600); err != nil {
		b.Fatal(err)
	}
	log, err := os.Create(filepath.Join(dir, "runner.log"))
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(benchBastion(b), "runner", "--input", input, "--secrets", filepath.Join(dir, "secrets"), "--work", work)
	cmd.Dir = work
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + filepath.Join(work, "home"), "TMPDIR=" + tmp, "LANG=C.UTF-8"}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	var once sync.Once
	var waitErr error
	wait = func() error {
		once.Do(func() {
			waitErr = cmd.Wait()
			_ = log.Close()
			if waitErr != nil {
				tail, _ := os.ReadFile(log.Name())
				if len(tail) > 2000 {
					tail = tail[len(tail)-2000:]
				}
				waitErr = fmt.Errorf("the runner: %w\n%s", waitErr, tail)
			}
		})
		return waitErr
	}
	// A benchmark that fails midway still ends its runner.
	b.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = wait()
	})
	return wait
}

// floodScript prints lines numbered 1 to n, the first half on stdout and
// the second on stderr, as fast as seq writes (seq buffers its output, as
// ansible's and terraform's Python and Go do on a pipe). The two halves
// are written one after the other: two writers at once would interleave
// their buffers mid-line.
func floodScript(n int) string {
	const line = `'TASK [deploy] ok: [web-%g] => changed=false'`
	return fmt.Sprintf("#!/bin/bash\nseq -f %s 1 %d\nseq -f %s %d %d >&2\n", line, n/2, line, n/2+1, n)
}

// tickScript prints n lines at 1,000 lines/s, each the time it was printed
// in microseconds since the epoch. It paces itself on the clock (no drift
// from the loop's own cost) and waits with bash's read timeout on a FIFO
// nobody writes, so that no line costs a fork.
func tickScript(n int) string {
	return fmt.Sprintf(`#!/bin/bash
fifo=$(mktemp -u) && mkfifo "$fifo" && exec {pause}<>"$fifo" && rm "$fifo" || exit 1
start=${EPOCHREALTIME/./}
for ((i = 1; i <= %d; i++)); do
	left=$((start + i * 1000 - ${EPOCHREALTIME/./}))
	if ((left > 0)); then
		printf -v t '0.%%06d' "$left"
		read -r -t "$t" -u "$pause"
	fi
	echo "${EPOCHREALTIME/./}"
done
`, n)
}
