package kinds

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

var objectRefType = reflect.TypeFor[bastionv1.ObjectRef]()

// Every CRD kind of the scheme has a descriptor or is listed, with its
// reason, as not a project resource; and no kind is both.
func TestEveryCRDKindHasADescriptorOrIsListedAsNone(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := bastionv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	described := map[string]bool{}
	for _, kind := range All() {
		gvks, _, err := scheme.ObjectKinds(kind.NewObject())
		if err != nil {
			continue // a core kind (keys are Secrets)
		}
		described[gvks[0].Kind] = true
	}
	seen := 0
	for gvk := range scheme.AllKnownTypes() {
		if gvk.GroupVersion() != bastionv1.GroupVersion || strings.HasSuffix(gvk.Kind, "List") ||
			!isCRDObject(scheme, gvk.Kind) {
			continue
		}
		seen++
		_, none := NotProjectResources[gvk.Kind]
		switch {
		case described[gvk.Kind] && none:
			t.Errorf("%s has a descriptor and is listed as not a project resource", gvk.Kind)
		case !described[gvk.Kind] && !none:
			t.Errorf("%s has no descriptor in kinds.All and is not in NotProjectResources", gvk.Kind)
		}
	}
	if seen < len(described)+len(NotProjectResources) {
		t.Errorf("found %d CRD kinds; the descriptors and the exclusions name %d", seen, len(described)+len(NotProjectResources))
	}
}

func isCRDObject(scheme *runtime.Scheme, kind string) bool {
	obj, err := scheme.New(bastionv1.GroupVersion.WithKind(kind))
	if err != nil {
		return false
	}
	_, ok := obj.(client.Object)
	return ok && reflect.ValueOf(obj).Elem().FieldByName("Spec").IsValid()
}

// Every reference field of every described kind's spec — ObjectRef,
// *ObjectRef, and those inside list items (a template's vaults) — is
// reported by the kind's References, to a target the kind's controller
// watches (Referenced). Each field gets a name of its own, so a field
// that References forgets is named in the failure.
func TestReferencesReportEveryReferenceFieldOfTheSpec(t *testing.T) {
	for _, kind := range All() {
		obj := kind.NewObject()
		spec := reflect.ValueOf(obj).Elem().FieldByName("Spec")
		if !spec.IsValid() {
			continue // keys are Secrets: no spec, no references
		}
		fields := fillRefs(spec, "spec")
		got := map[string]Reference{}
		for _, ref := range kind.ReferencesOf(obj) {
			got[ref.Name] = ref
		}
		for _, field := range fields {
			ref, ok := got[field]
			if !ok {
				t.Errorf("%s: References does not report %s", kind.KindName(), field)
				continue
			}
			if !slices.ContainsFunc(kind.Targets(), func(t Target) bool { return t.Noun == ref.Target.Noun }) {
				t.Errorf("%s: %s refers to a %s, which is not in Referenced (its controller would not watch it)",
					kind.KindName(), field, ref.Target.Noun)
			}
		}
		if len(got) != len(fields) {
			t.Errorf("%s: References reports %d references, the spec has %d reference fields %v", kind.KindName(), len(got), len(fields), fields)
		}
	}
}

// fillRefs names every reference field under v (a struct) after its path,
// allocating optional ones and adding one item to lists of structs, and
// returns the names it gave.
func fillRefs(v reflect.Value, path string) []string {
	var names []string
	for i := 0; i < v.NumField(); i++ {
		f, field := v.Field(i), v.Type().Field(i)
		if !field.IsExported() {
			continue
		}
		at := path + "." + jsonName(field)
		switch {
		case f.Type() == objectRefType:
			f.Set(reflect.ValueOf(bastionv1.ObjectRef{Name: at}))
			names = append(names, at)
		case f.Type() == reflect.PointerTo(objectRefType):
			f.Set(reflect.ValueOf(&bastionv1.ObjectRef{Name: at}))
			names = append(names, at)
		case f.Kind() == reflect.Struct:
			names = append(names, fillRefs(f, at)...)
		case f.Kind() == reflect.Pointer && f.Type().Elem().Kind() == reflect.Struct:
			f.Set(reflect.New(f.Type().Elem()))
			names = append(names, fillRefs(f.Elem(), at)...)
		case f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.Struct:
			f.Set(reflect.MakeSlice(f.Type(), 1, 1))
			names = append(names, fillRefs(f.Index(0), at+"[0]")...)
		case strings.HasSuffix(field.Name, "Ref") || strings.HasSuffix(field.Name, "SecretName"):
			// A reference of another shape: References cannot be
			// checked for it, so it is reported as missing.
			names = append(names, at+" (not an ObjectRef)")
		}
	}
	return names
}

func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "" {
		return f.Name
	}
	return name
}

// The reflection above must see the fields it looks for: a spec known to
// hold references yields them.
func TestFillRefsFindsTheTemplatesReferences(t *testing.T) {
	tpl := &bastionv1.Template{}
	got := fillRefs(reflect.ValueOf(tpl).Elem().FieldByName("Spec"), "spec")
	for _, want := range []string{"spec.repositoryRef", "spec.viewRef", "spec.vaults[0].keyRef"} {
		if !slices.Contains(got, want) {
			t.Errorf("fillRefs(Template) = %v, missing %s", got, want)
		}
	}
	if tpl.Spec.ViewRef == nil || tpl.Spec.ViewRef.Name != "spec.viewRef" {
		t.Errorf("fillRefs did not set the view reference: %+v", tpl.Spec.ViewRef)
	}
}

// A Kind's References must name the same object under both descriptors'
// views: IndexReferences keys and Referring filters agree.
func TestIndexKeysOfKeysAndSecretsAreSharedButReferringTellsThemApart(t *testing.T) {
	if RefKey.IndexKey("x") != RefSecret.IndexKey("x") {
		t.Fatalf("keys and secrets index apart: %q, %q", RefKey.IndexKey("x"), RefSecret.IndexKey("x"))
	}
	refs := []Reference{{Target: RefSecret, Name: "x"}, {Target: RefKey, Name: "x", Use: Needs}}
	if got := RefersTo(refs, RefKey, "x"); len(got) != 1 || got[0].Target.Noun != "key" {
		t.Errorf("RefersTo(key x) = %+v, want only the key reference", got)
	}
	if got := fmt.Sprint(RefRepository.IndexKey("r")); got != "*v1alpha1.Repository/r" {
		t.Errorf("IndexKey = %q", got)
	}
}
