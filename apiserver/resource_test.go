package apiserver

import (
	"reflect"
	"testing"

	"github.com/bastion-dev/bastion/internal/kinds"
)

// servedElsewhere are the kinds with a descriptor but no resource of their
// own in the route tree, and where they are served.
var servedElsewhere = map[string]string{
	kinds.IntegrationAlias.Name: "integrations/aliases and integrations/{id}/aliases (integration_aliases.go)",
}

// Every kind has its resource in the route tree, once.
func TestResources_everyKindIsServedOnce(t *testing.T) {
	served := map[string]int{}
	for _, res := range projectResources() {
		served[res.kindName()]++
	}
	for _, kind := range kinds.All() {
		name := kind.KindName()
		_, elsewhere := servedElsewhere[name]
		switch {
		case served[name] == 0 && !elsewhere:
			t.Errorf("kind %s has no resource in projectResources and is not in servedElsewhere", name)
		case served[name] > 1:
			t.Errorf("kind %s has %d resources", name, served[name])
		case served[name] == 1 && elsewhere:
			t.Errorf("kind %s has a resource and is listed as served elsewhere", name)
		}
	}
}

// Every request type carries the object's id as an integer ID, which the
// update handler compares with the URL's (requestID); a request type
// without one would let a body name another object unnoticed.
func TestResources_everyRequestHasAnIntegerID(t *testing.T) {
	for _, res := range projectResources() {
		req := res.jsonTypes().Request
		f, ok := req.FieldByName("ID")
		if !ok || f.Type.Kind() != reflect.Int64 || f.Tag.Get("json") != "id" {
			t.Errorf("%s: request type %s has no `ID int64 json:\"id\"`", res.kindName(), req)
			continue
		}
		v := reflect.New(req)
		v.Elem().FieldByName("ID").SetInt(42)
		if got := requestID(v.Interface()); got != 42 {
			t.Errorf("%s: requestID = %d, want 42", res.kindName(), got)
		}
	}
}

// Every kind that refers to a kind whose /refs answer comes from the
// reference index has a list in that answer: otherwise a delete could be
// refused as "in use" by objects the references do not show.
func TestResources_refsListEveryKindThatCanReferToTheObject(t *testing.T) {
	indexed := map[string]bool{}
	for _, res := range projectResources() {
		if types := res.jsonTypes(); types.Refs == reflect.TypeFor[refsJSON]() {
			indexed[res.kindName()] = true
		}
	}
	if len(indexed) == 0 {
		t.Fatal("no resource answers refs from the index")
	}
	buckets := (&refsJSON{}).buckets()
	for _, kind := range kinds.All() {
		for _, target := range kind.Targets() {
			if indexed[target.Noun] && buckets[kind.KindName()] == nil {
				t.Errorf("%s refers to %s, whose refs have no list of %s", kind.KindName(), target.Noun, kind.KindName())
			}
		}
	}
}
