package objname

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestGenerateName_derivesALabelPrefixFromTheDisplayName(t *testing.T) {
	for display, want := range map[string]string{
		"Deploy":                        "deploy-",
		"Deploy App (prod)":             "deploy-app-prod-",
		"  --Nightly__build!!  ":        "nightly-build-",
		"v1.2.3 release":                "v1-2-3-release-",
		"Déploiement rapide":            "d-ploiement-rapide-",
		"ALL CAPS":                      "all-caps-",
		"a/b\\c:d":                      "a-b-c-d-",
		"2024 backups":                  "2024-backups-",
		strings.Repeat("abc ", 30):      "abc-abc-abc-abc-abc-abc-abc-abc-abc-abc-",
		strings.Repeat("x", 100):        strings.Repeat("x", MaxPrefix) + "-",
		strings.Repeat("ab-", 13) + "c": strings.Repeat("ab-", 13) + "c-",
	} {
		if got := GenerateName(display, "template"); got != want {
			t.Errorf("GenerateName(%q) = %q, want %q", display, got, want)
		}
	}
}

func TestGenerateName_fallsBackToTheKindWhenNothingSurvives(t *testing.T) {
	for _, display := range []string{"", "   ", "!!!", "日本語", "---"} {
		if got := GenerateName(display, "Template"); got != "template-" {
			t.Errorf("GenerateName(%q, Template) = %q, want template-", display, got)
		}
	}
	if got := GenerateName("", ""); got != "obj-" {
		t.Errorf("GenerateName with no usable fallback = %q, want obj-", got)
	}
}

// The apiserver appends five characters from [a-z0-9]; whatever the input,
// the result must be a valid DNS-1123 label (the strictest rule any kind
// or derived label applies).
func TestGenerateName_alwaysYieldsAValidLabel(t *testing.T) {
	inputs := []string{
		"", "-", "a", "A-", "-a-", "a--b", " x ", "ÀÉÎ", "tab\there", "emoji 🚀 launch",
		strings.Repeat("z", 39) + "-y", strings.Repeat("9", 40) + "!!!" + strings.Repeat("8", 40),
	}
	for _, in := range inputs {
		prefix := GenerateName(in, "key")
		if !strings.HasSuffix(prefix, "-") {
			t.Errorf("GenerateName(%q) = %q: no trailing '-'", in, prefix)
		}
		if len(prefix) > MaxPrefix+1 {
			t.Errorf("GenerateName(%q) = %q: longer than %d", in, prefix, MaxPrefix+1)
		}
		if errs := validation.IsDNS1123Label(prefix + "x7k2p"); len(errs) > 0 {
			t.Errorf("GenerateName(%q) = %q: %v", in, prefix, errs)
		}
	}
}
