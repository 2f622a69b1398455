package cluster

import (
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/strvals"
)

// docs/install.md's "Try it on a throwaway local cluster" gives the helm
// command a reader types; the test installs through the Helm SDK. The two
// must install the same thing: the doc's --set values, over the chart's
// defaults, equal the test's values over the same defaults (but for the
// short Job TTL that only the test wants, to watch a Job go, and the
// PostgreSQL store the test lays over them, haValues, which the doc's
// "High availability" section gives).
func TestInstallDoc_throwawayClusterCommandIsWhatTheTestInstalls(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "install.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := string(data)
	start := strings.Index(section, "## Try it on a throwaway local cluster")
	if start < 0 {
		t.Fatal(`docs/install.md has no "Try it on a throwaway local cluster" section`)
	}
	section = section[start+3:]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	for _, command := range []string{"make cluster-up", "make images", "make cluster-down", "make helm", "make e2e-cluster"} {
		if !strings.Contains(section, command) {
			t.Errorf("the section does not mention %q", command)
		}
	}

	// The helm install command, continuation lines joined, with the shell's
	// spellings of the image tag replaced by the tag make passes the test.
	joined := strings.ReplaceAll(section, "\\\n", " ")
	var install string
	for _, line := range strings.Split(joined, "\n") {
		if strings.Contains(line, "helm install ") {
			install = line
		}
	}
	if install == "" {
		t.Fatal("the section has no helm install command")
	}
	const tag = "0.1.0-abc1234"
	install = strings.ReplaceAll(install, "$(git rev-parse --short HEAD | sed 's/^/0.1.0-/')", tag)
	install = strings.ReplaceAll(install, "0.1.0-$(git rev-parse --short HEAD)", tag)
	if strings.Contains(install, "$(") {
		t.Fatalf("the command holds a shell expansion this test does not know: %s", install)
	}
	docValues := map[string]any{}
	for _, m := range regexp.MustCompile(`--set\s+(\S+)`).FindAllStringSubmatch(install, -1) {
		if err := strvals.ParseInto(m[1], docValues); err != nil {
			t.Fatalf("--set %s: %v", m[1], err)
		}
	}
	for _, want := range []string{"helm install bastion config/helm/bastion", "--namespace " + releaseNS, "--create-namespace"} {
		if !strings.Contains(install, want) {
			t.Errorf("the command lacks %q: %s", want, install)
		}
	}

	// make helm builds the CLI of the SDK this module installs with, and
	// the PATH the doc sets is where make puts it.
	makefile, err := os.ReadFile(filepath.Join("..", "..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^HELM_VERSION \?= v(\S+)$`).FindSubmatch(makefile)
	if m == nil || !strings.Contains(string(gomod), "helm.sh/helm/v4 v"+string(m[1])) ||
		!strings.Contains(section, "~/.cache/bastion/tools/helm-"+string(m[1])) {
		t.Errorf("HELM_VERSION in the Makefile (%q), the Helm SDK in test/cluster/go.mod and the doc's PATH disagree", m)
	}

	chart, err := loader.Load(filepath.Join("..", "..", "config", "helm", "bastion"))
	if err != nil {
		t.Fatal(err)
	}
	testValues := values(env{registry: "ghcr.io/bastion-dev", tag: tag})
	delete(testValues, "tasks") // the test's short Job TTL
	got := merge(chart.Values, docValues)
	want := merge(chart.Values, testValues)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the documented command installs\n%v\nbut the test installs\n%v", got, want)
	}
}

// merge is over with the values of set laid on it, maps merged key by key.
func merge(over, set map[string]any) map[string]any {
	out := maps.Clone(over)
	for k, v := range set {
		if sub, ok := v.(map[string]any); ok {
			if base, ok := out[k].(map[string]any); ok {
				out[k] = merge(base, sub)
				continue
			}
		}
		out[k] = v
	}
	return out
}
