package apiserver

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/bastion-dev/bastion/internal/backup"
)

// The reflection of Go types into the document's schemas follows
// encoding/json's rules.

type schemaInner struct {
	Shadowed string `json:"name"`
	Deep     int32  `json:"deep"`
}

type schemaSample struct {
	schemaInner
	Name     string               `json:"name"`
	Optional string               `json:"optional,omitempty"`
	Ref      *int64               `json:"ref"`
	Nested   *schemaInner         `json:"nested"`
	When     time.Time            `json:"when"`
	Raw      json.RawMessage      `json:"raw"`
	Free     apiextensionsv1.JSON `json:"free"`
	Labels   map[string]string    `json:"labels"`
	List     []schemaInner        `json:"list"`
	Bytes    []byte               `json:"bytes"`
	Count    uint                 `json:"count"`
	Quoted   int64                `json:"quoted,string"`
	Skipped  string               `json:"-"`
	Untagged bool
	hidden   bool
	Any      map[string]interface{} `json:"any"`
}

func TestSchemas_followEncodingJSON(t *testing.T) {
	sc := newSchemas()
	ref := sc.of(schemaSample{hidden: true}, asAnswer)
	if ref.Ref != "#/components/schemas/SchemaSample" {
		t.Fatalf("ref = %+v", ref)
	}
	s := sc.components["SchemaSample"]
	var names []string
	for name := range s.Properties {
		names = append(names, name)
	}
	want := []string{"name", "deep", "optional", "ref", "nested", "when", "raw", "free", "labels", "list", "bytes", "count", "quoted", "Untagged", "any"}
	if len(names) != len(want) {
		t.Errorf("properties %v, want %v", names, want)
	}
	for _, name := range want {
		if s.Properties[name] == nil {
			t.Errorf("property %s is missing", name)
		}
	}
	p := s.Properties
	check := func(what string, got, want any) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %+v, want %+v", what, got, want)
		}
	}
	check("name (the outer field wins)", *p["name"], schema{Type: "string"})
	check("deep (embedded, flattened)", *p["deep"], schema{Type: "integer", Format: "int32"})
	check("ref", *p["ref"], schema{Type: "integer", Format: "int64", Nullable: true})
	check("nested", *p["nested"], schema{AllOf: []*schema{{Ref: "#/components/schemas/SchemaInner"}}, Nullable: true})
	check("when", *p["when"], schema{Type: "string", Format: "date-time"})
	check("raw", *p["raw"], *anyValue())
	check("free", *p["free"], *anyValue())
	check("labels", *p["labels"], schema{Type: "object", AdditionalProperties: &schema{Type: "string"}})
	check("list", *p["list"], schema{Type: "array", Items: &schema{Ref: "#/components/schemas/SchemaInner"}})
	check("bytes", *p["bytes"], schema{Type: "string", Format: "byte"})
	check("any", *p["any"], schema{Type: "object", AdditionalProperties: anyValue()})
	if p["quoted"].Type != "string" || p["count"].Minimum == nil {
		t.Errorf("quoted %+v, count %+v", p["quoted"], p["count"])
	}
	if strings.Contains(strings.Join(s.Required, ","), "optional") || len(s.Required) != len(want)-1 {
		t.Errorf("required = %v: every field but the omitempty one", s.Required)
	}

	// A request requires nothing and has a schema of its own.
	in := sc.of(schemaSample{}, asRequest)
	if in.Ref != "#/components/schemas/SchemaSampleInput" || len(sc.components["SchemaSampleInput"].Required) != 0 {
		t.Errorf("request schema %+v: %+v", in, sc.components["SchemaSampleInput"])
	}
	// Outside apiserver, the package names the schema once.
	if got := sc.of(backup.Backup{}, asAnswer).Ref; got != "#/components/schemas/Backup" {
		t.Errorf("backup.Backup is %s", got)
	}
	if got := sc.of(backup.Key{}, asAnswer).Ref; got != "#/components/schemas/BackupKey" {
		t.Errorf("backup.Key is %s", got)
	}
}

// Two Go types never share a schema name silently.
func TestSchemas_refuseTwoTypesOfOneName(t *testing.T) {
	sc := newSchemas()
	sc.of(keyJSON{}, asAnswer)
	type keyJSON struct{ Other bool } // a second "Key"
	defer func() {
		if recover() == nil {
			t.Error("a second type called Key was accepted")
		}
	}()
	sc.of(keyJSON{}, asAnswer)
}
