package launch

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// standIn writes an executable script that plays the runner: it records
// its arguments and the input layout, then behaves as mode says. The real
// runner arrives with issue #4; the launcher's contract is what is tested.
func standIn(t *testing.T, mode string) (cmd []string, record string) {
	t.Helper()
	dir := t.TempDir()
	record = filepath.Join(dir, "record")
	script := filepath.Join(dir, "runner")
	body := `#!/bin/sh
# arguments: --input DIR --secrets DIR --work DIR --exit-file FILE
echo "$@" > ` + record + `.args
ls -la "$2" "$4" "$4"/* > ` + record + `.layout 2>&1
cat "$2/task.json" > ` + record + `.task
stat -c %a "$(dirname "$2")" > ` + record + `.mode
echo $$ > ` + record + `.pid
echo $$ >> ` + record + `.starts
case "` + mode + `" in
  ok) echo 0 > "$8"; exit 0 ;;
  fail) echo 3 > "$8"; exit 3 ;;
  hang) sleep 300 & echo $! > ` + record + `.child; wait ;;
  # until the test writes an exit code to record.go, then as the runner
  # does: the code to the exit file, and exit with it
  wait) while [ ! -s ` + record + `.go ]; do sleep 0.05; done
        code=$(cat ` + record + `.go); echo "$code" > "$8"; exit "$code" ;;
esac
`
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return []string{script}, record
}

func newLocal(t *testing.T, mode string) (*LocalLauncher, Run, string) {
	t.Helper()
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = bastionv1.AddToScheme(scheme)
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "t1-input"},
			Data: map[string][]byte{"task.json": []byte(`{"name":"t1"}`), "token": []byte("abc")}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "deploy-key"},
			Data: map[string][]byte{"username": []byte("deploy"), "password": []byte("s3cret")}},
	).Build()
	cmd, record := standIn(t, mode)
	l := &LocalLauncher{Client: c, Command: cmd, BaseDir: t.TempDir(), GracePeriod: 2 * time.Second}
	task := &bastionv1.Task{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "t1", UID: "0b7c-uid"}}
	return l, Run{Task: task, Name: "t1", InputSecret: "t1-input", Secrets: []string{"deploy-key"}}, record
}

func waitPhase(t *testing.T, l *LocalLauncher, run Run, want Phase) State {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s, err := l.Observe(context.Background(), run)
		if err != nil {
			t.Fatal(err)
		}
		if s.Phase == want {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("phase %s, want %s (%s)", s.Phase, want, s.Message)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		data, err := os.ReadFile(path)
		if err == nil && len(data) > 0 {
			return strings.TrimSpace(string(data))
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never written: %v", path, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestLocalLauncher_laysOutTheInputsLikeAJobAndReportsSuccess(t *testing.T) {
	l, run, record := newLocal(t, "ok")
	ctx := context.Background()
	if err := l.Start(ctx, run); err != nil {
		t.Fatal(err)
	}
	if err := l.Start(ctx, run); err != nil {
		t.Fatalf("a second Start must be a no-op: %v", err)
	}
	waitPhase(t, l, run, PhaseSucceeded)

	if got := readFile(t, record+".task"); got != `{"name":"t1"}` {
		t.Fatalf("task.json = %q", got)
	}
	if mode := readFile(t, record+".mode"); mode != "700" {
		t.Fatalf("the run directory has mode %s, want 700", mode)
	}
	args := readFile(t, record+".args")
	for _, want := range []string{"--input ", "--secrets ", "--work "} {
		if !strings.Contains(args, want) {
			t.Fatalf("runner arguments %q lack %q", args, want)
		}
	}
	layout := readFile(t, record+".layout")
	for _, want := range []string{"task.json", "token", "deploy-key"} {
		if !strings.Contains(layout, want) {
			t.Fatalf("input layout lacks %s:\n%s", want, layout)
		}
	}
	secretsDir := strings.Fields(args)[3]
	if data, err := os.ReadFile(filepath.Join(secretsDir, "deploy-key", "password")); err != nil || string(data) != "s3cret" {
		t.Fatalf("secret file: %q %v", data, err)
	}

	if err := l.Release(ctx, run); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Dir(secretsDir)); !os.IsNotExist(err) {
		t.Fatalf("the run directory survived Release: %v", err)
	}
	if s, _ := l.Observe(ctx, run); s.Phase != PhaseNotFound {
		t.Fatalf("after Release the run is %s", s.Phase)
	}
}

func TestLocalLauncher_reportsTheExitCodeOfAFailedRunner(t *testing.T) {
	l, run, _ := newLocal(t, "fail")
	if err := l.Start(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	s := waitPhase(t, l, run, PhaseFailed)
	if !strings.Contains(s.Message, "exited with code 3") {
		t.Fatalf("message %q", s.Message)
	}
	_ = l.Release(context.Background(), run)
}

func TestLocalLauncher_stopKillsTheWholeProcessGroup(t *testing.T) {
	for _, force := range []bool{false, true} {
		t.Run("force="+strconv.FormatBool(force), func(t *testing.T) {
			l, run, record := newLocal(t, "hang")
			ctx := context.Background()
			if err := l.Start(ctx, run); err != nil {
				t.Fatal(err)
			}
			waitPhase(t, l, run, PhaseRunning)
			child, _ := strconv.Atoi(readFile(t, record+".child"))

			if err := l.Stop(ctx, run, force); err != nil {
				t.Fatal(err)
			}
			s := waitPhase(t, l, run, PhaseFailed)
			if !strings.Contains(s.Message, "killed") && !strings.Contains(s.Message, "exited") {
				t.Fatalf("message %q", s.Message)
			}
			// The runner's own child (ansible, terraform) is gone too.
			deadline := time.Now().Add(5 * time.Second)
			for syscall.Kill(child, 0) == nil {
				if time.Now().After(deadline) {
					t.Fatalf("child %d of the runner survived the stop", child)
				}
				time.Sleep(20 * time.Millisecond)
			}
			_ = l.Release(ctx, run)
		})
	}
}

func TestLocalLauncher_unknownRunIsNotFound(t *testing.T) {
	l, run, _ := newLocal(t, "ok")
	if s, err := l.Observe(context.Background(), run); err != nil || s.Phase != PhaseNotFound {
		t.Fatalf("Observe(unknown) = %v, %v", s, err)
	}
	if err := l.Stop(context.Background(), run, true); err != nil {
		t.Fatalf("Stop(unknown) = %v", err)
	}
}

// The input the reconciler hands over with the run is laid out as it is,
// without reading the Secret back: the reconciler has just made it, and
// its read was one of a task's kube-apiserver requests (issue #22).
func TestLocalLauncher_laysOutTheInputItIsHandedWithoutReadingItBack(t *testing.T) {
	l, run, record := newLocal(t, "ok")
	run.InputSecret = "t1-input-never-stored" // a read would fail
	run.Input = map[string][]byte{"task.json": []byte(`{"name":"handed"}`), "token": []byte("xyz")}
	if err := l.Start(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	waitPhase(t, l, run, PhaseSucceeded)
	if got := readFile(t, record+".task"); got != `{"name":"handed"}` {
		t.Fatalf("task.json = %q, want the handed input", got)
	}
	layout := readFile(t, record+".layout")
	for _, want := range []string{"token", "deploy-key"} {
		if !strings.Contains(layout, want) {
			t.Fatalf("input layout lacks %s:\n%s", want, layout)
		}
	}
}
