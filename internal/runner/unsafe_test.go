package runner

import (
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

// TestUnsafeYAML_everyStringLeafIsTaggedAndReadsBackExactly: hostile
// strings (quotes, backslashes, line breaks, NUL, control and
// non-printable characters, unicode beyond the BMP, Jinja, YAML syntax),
// nested in objects and arrays, come back from a YAML parser as the same
// text tagged !unsafe; numbers, booleans and null keep their type.
func TestUnsafeYAML_everyStringLeafIsTaggedAndReadsBackExactly(t *testing.T) {
	nasty := []string{
		"", "plain", `"double" 'single'`, `back\slash \n \"`, "line\nbreak\r\n\ttab",
		"nul\x00byte", "bell\a del\x7f c1\u0085\u009f", "\u2028\u2029\ufeff\ufffe",
		"héllo wörld 日本 🚀", "{{ lookup('pipe','touch /tmp/F') }}", "{% if 1 %}x{% endif %}",
		"key: value", "- item", "# comment", "!unsafe tag", "&anchor *alias", "null", "true", "123",
		"[a, b]", "{a: b}", "  leading and trailing  ", "%TAG", "---", "...",
	}
	var list []any
	for _, s := range nasty {
		list = append(list, s)
	}
	vars := map[string]any{
		"list":   list,
		"nested": map[string]any{"deep": []any{map[string]any{"x": nasty[9]}}, "n\"k": nasty[3]},
		"num":    float64(42), "big": float64(1e21), "frac": 0.5, "yes": true, "none": nil,
	}
	for i, s := range nasty {
		vars["s"+string(rune('a'+i))] = s
	}
	text := unsafeYAML(vars)

	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatalf("the file is not valid YAML: %v\n%s", err, text)
	}
	root := doc.Content[0]
	get := func(m *yaml.Node, key string) *yaml.Node {
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == key {
				return m.Content[i+1]
			}
		}
		t.Fatalf("key %q missing in\n%s", key, text)
		return nil
	}
	wantUnsafe := func(n *yaml.Node, want string) {
		t.Helper()
		if n.Kind != yaml.ScalarNode || n.Tag != "!unsafe" || n.Value != want {
			t.Errorf("got kind %v tag %q value %q, want !unsafe %q", n.Kind, n.Tag, n.Value, want)
		}
	}
	for i, s := range nasty {
		wantUnsafe(get(root, "s"+string(rune('a'+i))), s)
		wantUnsafe(get(root, "list").Content[i], s)
	}
	nested := get(root, "nested")
	wantUnsafe(get(get(nested, "deep").Content[0], "x"), nasty[9])
	wantUnsafe(get(nested, "n\"k"), nasty[3])

	var plain map[string]any
	if err := yaml.Unmarshal([]byte(text), &plain); err != nil {
		t.Fatal(err)
	}
	if plain["num"] != 42 || plain["frac"] != 0.5 || plain["yes"] != true || plain["none"] != nil {
		t.Errorf("scalars changed type: num=%#v frac=%#v yes=%#v none=%#v", plain["num"], plain["frac"], plain["yes"], plain["none"])
	}
	if n := get(root, "big"); (n.Tag != "!!int" && n.Tag != "!!float") || n.Value != "1000000000000000000000" {
		t.Errorf("a large number became %s %q", n.Tag, n.Value)
	}
}
