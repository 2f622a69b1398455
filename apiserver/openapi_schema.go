package apiserver

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"
	"unicode"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// The JSON Schemas of /api/openapi.json, made by reflection from the Go
// types the handlers encode and decode, so that the document cannot drift
// from the answers: encoding/json's rules (json tags, omitempty, embedded
// structs, pointers) are read from the same types it reads.

// schema is an OpenAPI 3.0 Schema Object, the subset Bastion's types need.
type schema struct {
	Ref                  string             `json:"$ref,omitempty"`
	Type                 string             `json:"type,omitempty"`
	Format               string             `json:"format,omitempty"`
	Description          string             `json:"description,omitempty"`
	Nullable             bool               `json:"nullable,omitempty"`
	AllOf                []*schema          `json:"allOf,omitempty"`
	Items                *schema            `json:"items,omitempty"`
	Properties           map[string]*schema `json:"properties,omitempty"`
	Required             []string           `json:"required,omitempty"`
	AdditionalProperties any                `json:"additionalProperties,omitempty"`
	Minimum              *float64           `json:"minimum,omitempty"`
}

// schemaMode says which side of the wire a type is on. An answer always
// carries every field without omitempty, so its schema lists them as
// required; a request may leave any field out (it decodes to its zero
// value, and the handler's rules answer 400 where that is not allowed),
// so a request's schema requires nothing.
type schemaMode int

const (
	asAnswer schemaMode = iota
	asRequest
)

var (
	timeType      = reflect.TypeFor[time.Time]()
	rawJSONType   = reflect.TypeFor[json.RawMessage]()
	extJSONType   = reflect.TypeFor[apiextensionsv1.JSON]()
	anyValue      = func() *schema { return &schema{Description: "any JSON value"} }
	apiserverPath = reflect.TypeFor[Server]().PkgPath()
)

// schemas collects the named types of one document as components.
type schemas struct {
	components map[string]*schema
	// owner remembers which Go type took a component name, so that two
	// types never share one silently.
	owner map[string]reflect.Type
}

func newSchemas() *schemas {
	return &schemas{components: map[string]*schema{}, owner: map[string]reflect.Type{}}
}

// of is the schema of v's type; named structs become components and are
// referred to.
func (c *schemas) of(v any, mode schemaMode) *schema {
	return c.typeSchema(reflect.TypeOf(v), mode)
}

func (c *schemas) typeSchema(t reflect.Type, mode schemaMode) *schema {
	switch {
	case t == timeType:
		return &schema{Type: "string", Format: "date-time"}
	case t == rawJSONType, t == extJSONType:
		return anyValue()
	}
	switch t.Kind() {
	case reflect.Pointer:
		return orNull(c.typeSchema(t.Elem(), mode))
	case reflect.Bool:
		return &schema{Type: "boolean"}
	case reflect.Int, reflect.Int64:
		return &schema{Type: "integer", Format: "int64"}
	case reflect.Int8, reflect.Int16, reflect.Int32:
		return &schema{Type: "integer", Format: "int32"}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		zero := 0.0
		return &schema{Type: "integer", Minimum: &zero}
	case reflect.Float32, reflect.Float64:
		return &schema{Type: "number"}
	case reflect.String:
		return &schema{Type: "string"}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return &schema{Type: "string", Format: "byte"}
		}
		return &schema{Type: "array", Items: c.typeSchema(t.Elem(), mode)}
	case reflect.Map:
		return &schema{Type: "object", AdditionalProperties: c.typeSchema(t.Elem(), mode)}
	case reflect.Interface:
		return anyValue()
	case reflect.Struct:
		if t.Name() == "" {
			return c.structSchema(t, mode)
		}
		return c.component(t, mode)
	}
	panic(fmt.Sprintf("openapi: no JSON schema for %v", t))
}

// orNull marks s as accepting null. OpenAPI 3.0 ignores the siblings of
// a $ref, so a reference is wrapped in allOf.
func orNull(s *schema) *schema {
	if s.Ref != "" {
		return &schema{AllOf: []*schema{s}, Nullable: true}
	}
	s.Nullable = true
	return s
}

// component registers t under its component name and refers to it.
func (c *schemas) component(t reflect.Type, mode schemaMode) *schema {
	name := componentName(t, mode)
	ref := &schema{Ref: "#/components/schemas/" + name}
	if owner, taken := c.owner[name]; taken {
		if owner != t {
			panic(fmt.Sprintf("openapi: %v and %v both want the schema name %s", owner, t, name))
		}
		return ref
	}
	c.owner[name] = t // before its fields: a recursive type refers to itself
	c.components[name] = c.structSchema(t, mode)
	return ref
}

// componentName is the Go name without the JSON suffix, capitalized, and
// prefixed by its package outside apiserver (backup.Template is
// BackupTemplate). A request-side schema of a type that is not a
// request type by name gets "Input", as it requires nothing.
func componentName(t reflect.Type, mode schemaMode) string {
	name := upperFirst(strings.TrimSuffix(t.Name(), "JSON"))
	if t.PkgPath() != apiserverPath {
		pkg := upperFirst(t.PkgPath()[strings.LastIndex(t.PkgPath(), "/")+1:])
		if !strings.HasPrefix(name, pkg) {
			name = pkg + name
		}
	}
	if mode == asRequest && !strings.HasSuffix(name, "Request") {
		name += "Input"
	}
	return name
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	r := []rune(s)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

// structSchema lists the fields encoding/json writes for t, in their
// order, with those of embedded structs in their place.
func (c *schemas) structSchema(t reflect.Type, mode schemaMode) *schema {
	s := &schema{Type: "object", Properties: map[string]*schema{}}
	for _, f := range jsonFields(t) {
		fs := c.typeSchema(f.typ, mode)
		if f.quoted {
			fs = &schema{Type: "string", Description: "a JSON " + fs.Type + " written as a string"}
		}
		s.Properties[f.name] = fs
		if mode == asAnswer && !f.omitEmpty {
			s.Required = append(s.Required, f.name)
		}
	}
	return s
}

type jsonField struct {
	name              string
	typ               reflect.Type
	omitEmpty, quoted bool
}

// jsonFields are the fields encoding/json encodes for struct t: exported,
// not tagged "-", named by their tag, embedded structs without a tag
// flattened; a name already seen at a shallower depth wins.
func jsonFields(t reflect.Type) []jsonField {
	var out []jsonField
	seen := map[string]bool{}
	var walk func(reflect.Type)
	walk = func(t reflect.Type) {
		var embedded []reflect.Type
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			ft := f.Type
			if f.Anonymous && name == "" {
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if ft.Kind() == reflect.Struct {
					embedded = append(embedded, ft)
					continue
				}
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if seen[name] {
				continue
			}
			seen[name] = true
			out = append(out, jsonField{name: name, typ: ft,
				omitEmpty: strings.Contains(","+opts+",", ",omitempty,") || strings.Contains(","+opts+",", ",omitzero,"),
				quoted:    strings.Contains(","+opts+",", ",string,")})
		}
		// Embedded fields come after the outer ones for shadowing, as
		// encoding/json ranks them by depth.
		for _, e := range embedded {
			walk(e)
		}
	}
	walk(t)
	return out
}

// sliceOf is an empty slice of v's type: the answer of a list of v.
func sliceOf(v any) any {
	return reflect.MakeSlice(reflect.SliceOf(reflect.TypeOf(v)), 0, 0).Interface()
}
