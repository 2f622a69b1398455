package launch

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/bastion-dev/bastion/internal/controlplane"
	"github.com/bastion-dev/bastion/internal/gitremote/gittest"
	"github.com/bastion-dev/bastion/internal/runspec"
)

// Under `bastion dev` etcd holds every Secret of every project in the
// clear, and its address is on its command line, which every local user may
// read in /proc. An isolated run finds etcd there and asks it for
// /registry/secrets/ on each listener etcd has (client, the same port over
// plain HTTP, metrics), without a certificate and with the client
// certificate kube-apiserver's command line names (which lies in the data
// dir it cannot read). Nothing answers with a Secret: etcd takes clients
// only over TLS with a client certificate.
func TestLocalLauncher_isolatedRunCannotReadEtcd(t *testing.T) {
	users := isolatedRunUsers(t)
	if users == nil {
		return
	}
	assets := controlplane.DefaultAssetsDir()
	if err := controlplane.CheckAssets(assets); err != nil {
		t.Fatalf("no control plane assets (make envtest-assets): %v", err)
	}
	bastion := buildBastion(t)

	dataDir := t.TempDir()
	if err := os.Chmod(dataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	cp, err := controlplane.Start(controlplane.Options{AssetsDir: assets, DataDir: filepath.Join(dataDir, "cluster")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Stop() })
	kube, err := client.New(cp.Config, client.Options{Scheme: testScheme()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	value := "prod-ssh-key-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	if err := kube.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "other-projects-key"},
		StringData: map[string]string{"private_key": value}}); err != nil {
		t.Fatal(err)
	}

	repo := gittest.NewRepo(t)
	repo.WriteFile("etcd.sh", `#!/bin/bash
echo "run user $(id -u)"
flag() { echo "$1" | grep -o -- "--$2=[^ ]*" | head -1 | cut -d= -f2-; }
for f in /proc/[0-9]*/cmdline; do
  line=$(tr '\0' ' ' < "$f" 2>/dev/null)
  case "$line" in *"$DATA"*) ;; *) continue;; esac
  case "$line" in
  *listen-client-urls*) url=$(flag "$line" listen-client-urls); metrics=$(flag "$line" listen-metrics-urls);;
  *etcd-certfile*) cert=$(flag "$line" etcd-certfile); key=$(flag "$line" etcd-keyfile);;
  esac
done
echo "etcd at ${url:-nowhere}, metrics at ${metrics:-nowhere}, client certificate ${cert:-nowhere}"
[ -n "$url" ] || exit 0
# /registry/secrets/ .. /registry/secrets0, base64
secrets() {
  curl -sk -m 10 "$@" -X POST -d '{"key":"L3JlZ2lzdHJ5L3NlY3JldHMv","range_end":"L3JlZ2lzdHJ5L3NlY3JldHMw"}' |
    grep -o '"value":"[^"]*"' | cut -d'"' -f4 | while read -r v; do echo "$v" | base64 -d | tr -c '[:print:]' ' ' | grep -o 'prod-ssh-key-[a-z0-9]*'; done
}
secrets "$url/v3/kv/range"
secrets "${url/https:/http:}/v3/kv/range"
[ -z "$metrics" ] || secrets "$metrics/v3/kv/range"
[ -z "$cert" ] || secrets --cert "$cert" --key "$key" "$url/v3/kv/range"
echo "tried every door"
`, true)

	l := &LocalLauncher{Users: users, BaseDir: filepath.Join(dataDir, "runs"), GracePeriod: time.Second,
		Command: []string{bastion, "runner"}}
	if err := l.PrepareBase(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(l.BaseDir) })
	run := newIsolatedRun("etcd-reader", nil, runspec.Spec{App: "bash", Playbook: "etcd.sh",
		Repository: runspec.Repository{URL: repo.Path}, Env: map[string]string{"DATA": dataDir}})
	l.Client = fake.NewClientBuilder().WithScheme(testScheme()).WithObjects(run.objects...).Build()
	if err := l.Start(ctx, run.run); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Release(ctx, run.run) })
	waitPhase(t, l, run.run, PhaseSucceeded)
	out := readFile(t, filepath.Join(l.runDir(run.run), logFile))
	t.Logf("the run's output:\n%s", out)
	uid, _ := readUID(l.runDir(run.run))
	if !strings.Contains(out, "run user "+strconv.Itoa(int(uid))) {
		t.Fatalf("the run did not run as its own user %d", uid)
	}
	if strings.Contains(out, value) {
		t.Errorf("an isolated run read another project's Secret (%s) straight from the data dir's etcd", value)
	}
	// The attack must have found etcd's doors, or its failing proves nothing.
	for _, want := range []string{"etcd at https://127.0.0.1:", "metrics at http://127.0.0.1:", "client certificate /", "tried every door"} {
		if !strings.Contains(out, want) {
			t.Errorf("the run's output lacks %q: it did not find or try all of etcd's listeners", want)
		}
	}
}
