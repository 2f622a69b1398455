package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Issue #21 item 1: SQLite serves one manager. A second `bastion manager`
// on the database of a running one stops at once, saying why and naming
// the fix, and the first goes on serving. The lock goes with its process:
// after a SIGKILL of the first, the next manager on that database starts.
func TestSQLite_aSecondManagerOnTheSameDatabaseIsRefusedAtStart(t *testing.T) {
	t.Parallel()
	c := startCluster(t)
	m := newManagerProc(t, c)
	m.start()

	args := slices.Clone(m.args)
	listen := slices.Index(args, "--listen")
	args[listen+1] = fmt.Sprintf("127.0.0.1:%d", freePort(t))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	second := exec.CommandContext(ctx, bastionBin, args...)
	second.Env = m.env
	var out bytes.Buffer
	second.Stdout, second.Stderr = &out, &out
	begin := time.Now()
	err := second.Run()
	took := time.Since(begin)
	var exit *exec.ExitError
	if ctx.Err() != nil || !errors.As(err, &exit) {
		t.Fatalf("the second manager was not refused (%v):\n%s", err, tail(out.String(), 20))
	}
	t.Logf("the second manager exited with code %d after %s: %s", exit.ExitCode(), took.Round(time.Millisecond), strings.TrimSpace(out.String()))
	for _, want := range []string{
		"is in use by another bastion manager (pid " + strconv.Itoa(m.cmd.Process.Pid) + " on ",
		"SQLite serves one manager only", "use PostgreSQL",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the refusal does not say %q:\n%s", want, out.String())
		}
	}
	select {
	case <-m.done:
		t.Fatal("the first manager exited")
	default:
	}
	m.signIn() // still serving

	m.kill()
	m.start() // the kernel dropped the dead manager's lock
	m.signIn()
}
