package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func script(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "script.sh")
	if err := os.WriteFile(path, []byte("#!/bin/bash\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// The race issue #4 names: a script prints 5,000 lines as fast as it can
// and exits at once. Every line must be read, each stream in its order
// (across the two, the order is that of arrival: docs/architecture.md).
// Repeated, because a race shows only sometimes.
func TestRun_keepsEveryLineOfAProcessThatExitsAtOnce(t *testing.T) {
	path := script(t, `for i in $(seq 1 5000); do echo "line $i"; done; echo "to stderr" >&2; printf "no newline at the end"`)
	for round := 0; round < 20; round++ {
		out := &collector{}
		code, err := run(context.Background(), process{path: path, env: []string{"PATH=/usr/bin:/bin"}, program: true}, out)
		if err != nil || code != 0 {
			t.Fatalf("round %d: exit %d, %v", round, code, err)
		}
		stdout, stderr := out.streams()
		if len(stdout) != 5001 || len(stderr) != 1 {
			t.Fatalf("round %d: %d stdout and %d stderr lines, want 5001 and 1", round, len(stdout), len(stderr))
		}
		for i := 0; i < 5000; i++ {
			if stdout[i] != fmt.Sprintf("line %d", i+1) {
				t.Fatalf("round %d: line %d is %q", round, i+1, stdout[i])
			}
		}
		if stdout[5000] != "no newline at the end" || stderr[0] != "to stderr" {
			t.Fatalf("round %d: last stdout line %q, stderr %q", round, stdout[5000], stderr)
		}
	}
}

// Two pipes: the program's stderr lines are flagged, its stdout ones are
// not, neither stream loses a line or its order when both write at once,
// and a partial line on one pipe is never glued to the other's bytes.
// Git's stderr (progress, not a failure) is not flagged. Repeated, as
// above.
func TestRun_flagsTheProgramsStderrLinesAndOnlyThose(t *testing.T) {
	path := script(t, `for i in $(seq 1 2000); do echo "out $i"; echo "err $i" >&2; done
printf "out-partial"; printf "err-partial" >&2; sleep 0.05; printf " out-rest\n"; printf " err-rest\n" >&2`)
	for round := 0; round < 10; round++ {
		out := &collector{}
		if code, err := run(context.Background(), process{path: path, env: []string{"PATH=/usr/bin:/bin"}, program: true}, out); err != nil || code != 0 {
			t.Fatalf("round %d: exit %d, %v", round, code, err)
		}
		stdout, stderr := out.streams()
		if len(stdout) != 2001 || len(stderr) != 2001 {
			t.Fatalf("round %d: %d stdout and %d stderr lines, want 2001 each", round, len(stdout), len(stderr))
		}
		for i := 0; i < 2000; i++ {
			if stdout[i] != fmt.Sprintf("out %d", i+1) || stderr[i] != fmt.Sprintf("err %d", i+1) {
				t.Fatalf("round %d: line %d is %q on stdout, %q on stderr", round, i+1, stdout[i], stderr[i])
			}
		}
		if stdout[2000] != "out-partial out-rest" || stderr[2000] != "err-partial err-rest" {
			t.Fatalf("round %d: partial lines glued across streams: %q, %q", round, stdout[2000], stderr[2000])
		}
	}

	git := &collector{}
	if _, err := run(context.Background(), process{path: "git", args: []string{"no-such-command"}, env: []string{"PATH=/usr/bin:/bin"}}, git); err != nil {
		t.Fatal(err)
	}
	if _, stderr := git.streams(); len(git.all()) == 0 || len(stderr) != 0 {
		t.Fatalf("git's complaint: %q, flagged stderr %q", git.all(), stderr)
	}
}

func TestRun_reportsTheExitCodeAndAMissingProgram(t *testing.T) {
	code, err := run(context.Background(), process{path: script(t, "exit 7")}, &collector{})
	if err != nil || code != 7 {
		t.Fatalf("exit %d, %v; want 7", code, err)
	}
	_, err = run(context.Background(), process{path: "/no/such/ansible-playbook"}, &collector{})
	if err == nil || !strings.Contains(err.Error(), "/no/such/ansible-playbook") || !strings.Contains(err.Error(), "no such file") {
		t.Fatalf("missing program: %v", err)
	}
}

func TestRun_splitsAnOverlongLineInsteadOfDroppingIt(t *testing.T) {
	out := &collector{}
	path := script(t, `head -c 3145728 /dev/zero | tr '\0' 'x'; echo; echo after`)
	if _, err := run(context.Background(), process{path: path, env: []string{"PATH=/usr/bin:/bin"}}, out); err != nil {
		t.Fatal(err)
	}
	got := out.all()
	total := 0
	for _, l := range got[:len(got)-1] {
		if len(l) > maxLine {
			t.Fatalf("a stored line has %d bytes, more than %d", len(l), maxLine)
		}
		total += len(l)
	}
	if total != 3145728 || got[len(got)-1] != "after" {
		t.Fatalf("%d bytes in %d lines, last %q", total, len(got), got[len(got)-1])
	}
}

func TestRun_cancelStopsTheProgramAndWhatItStarted(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child")
	path := script(t, "sleep 300 & echo $! > "+pidFile+"; echo started; wait")
	ctx, cancel := context.WithCancel(context.Background())
	out := &collector{}
	done := make(chan error, 1)
	go func() { _, err := run(ctx, process{path: path, env: []string{"PATH=/usr/bin:/bin"}}, out); done <- err }()
	deadline := time.Now().Add(10 * time.Second)
	for len(out.all()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the script never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a cancelled run reported success")
		}
	case <-time.After(15 * time.Second):
		t.Fatal("cancel did not stop the run")
	}
	pid, _ := os.ReadFile(pidFile)
	proc := "/proc/" + strings.TrimSpace(string(pid))
	deadline = time.Now().Add(5 * time.Second)
	for {
		stat, err := os.ReadFile(proc + "/stat")
		if err != nil || strings.Contains(string(stat), ") Z") {
			return // gone, or dead and waiting to be reaped
		}
		if time.Now().After(deadline) {
			t.Fatalf("the script's child %s survived the stop", strings.TrimSpace(string(pid)))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
