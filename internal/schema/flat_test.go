package schema

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

type flatInner struct {
	N  int    `json:"n"`
	On bool   `json:"on,omitempty"`
	S  string `json:"s,omitempty" jsonschema:"enum=a,enum=b"`
}

type flatArgs struct {
	Path  string         `json:"path" jsonschema:"minLength=1"`
	Line  int            `json:"line" jsonschema:"minimum=0"`
	Ratio float64        `json:"ratio,omitempty" jsonschema:"exclusiveMaximum=1"`
	Mode  string         `json:"mode,omitempty" jsonschema:"enum=r,enum=w"`
	Force bool           `json:"force,omitempty"`
	Tags  []string       `json:"tags,omitempty"`
	Inner *flatInner     `json:"inner,omitempty"`
	Meta  map[string]int `json:"meta,omitempty"`
	Any   any            `json:"any,omitempty"`
	Small uint8          `json:"small,omitempty"`
}

// structSchema compiles the schema generated from T, as a struct tool's.
func structSchema[T any](t testing.TB) *Schema {
	t.Helper()
	js, err := FromType(reflect.TypeFor[T]())
	if err != nil {
		t.Fatal(err)
	}
	s, err := Compile(js)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func flatDecoder(t testing.TB) *Decoder[flatArgs] {
	d := NewDecoder[flatArgs](structSchema[flatArgs](t))
	if d.flat == nil {
		t.Fatal("flatArgs should take the one-pass path")
	}
	return d
}

// FuzzPrepareBound: the one-pass path (bindFlat, past Bind's gate: flatArgs
// has steps to count) gives exactly what Check and Decode give, and changes
// nothing it was given; when it declines, they decide.
func FuzzPrepareBound(f *testing.F) {
	for _, seed := range []string{`{"path":"a","line":1}`, `{"path":"a","line":"42","mode":"r","force":"true"}`,
		`{"path":"","line":-1}`, `{"path":"a","line":1,"extra":true}`, `{"line":1}`, `{"path":"a","line":1.5}`,
		`{"path":"a","line":1,"tags":["x",2],"inner":{"n":"3","s":"a"},"meta":{"k":"4"},"any":{"deep":[1,{"x":null}]}}`,
		`{"path":"a","line":1,"ratio":"0.5","small":"300"}`, `{"path":null,"line":null,"force":0}`, `{"Path":"a","line":1}`} {
		f.Add(seed)
	}
	d := flatDecoder(f)
	f.Fuzz(func(t *testing.T, raw string) {
		var args map[string]any
		if json.Unmarshal([]byte(raw), &args) != nil || args == nil {
			return
		}
		before := clone(args)
		got, ok := d.bindFlat(args)
		if !reflect.DeepEqual(before, args) {
			t.Fatalf("input changed: %v -> %v", before, args)
		}
		if !ok {
			return
		}
		checked, err := d.s.Check(args)
		if err != nil {
			t.Fatalf("%s: one pass bound it, Check says %v", raw, err)
		}
		want, err := d.Decode(checked)
		if err != nil {
			t.Fatalf("%s: one pass bound it, Decode says %v", raw, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: one pass gave %+v, Check+Decode gave %+v", raw, got, want)
		}
	})
}

// TestFlatOnlyForFlatSchemas: schemas with anything at the object itself,
// and bodies that take no struct, keep the general path.
func TestFlatOnlyForFlatSchemas(t *testing.T) {
	type withExtra struct {
		A string `json:"a"`
	}
	if d := NewDecoder[withExtra](structSchema[withExtra](t)); d.flat == nil {
		t.Error("a plain struct should be flat")
	}
	if d := NewDecoder[withExtra](nil); d.flat != nil {
		t.Error("a decoder without a schema has nothing to check against")
	}
	if d := NewDecoder[map[string]any](mustCompile(t, `{"type":"object","properties":{"a":{"type":"string"}}}`)); d.flat != nil {
		t.Error("a map is not a struct")
	}
	root := func(schema string) *node {
		g, err := analyze(mustSchema(t, schema))
		if err != nil {
			t.Fatal(err)
		}
		n, err := compileSchema(g)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, s := range []string{
		`{"type":"object","properties":{"a":{"type":"string"}},"anyOf":[{"required":["a"]}]}`,
		`{"type":"object","properties":{"a":{"type":"string"}},"minProperties":1}`,
		`{"type":"object","properties":{"a":{"type":"string"}},"dependentRequired":{"a":["b"]}}`,
		`{"type":["object","null"],"properties":{"a":{"type":"string"}}}`,
		`{"type":"object","properties":{"a":{"type":"string"}},"patternProperties":{"^x":{}}}`,
	} {
		if isFlat(root(s)) {
			t.Errorf("%s counted as flat", s)
		}
	}
}

func mustSchema(t *testing.T, s string) *jsonschema.Schema {
	t.Helper()
	var js jsonschema.Schema
	if err := json.Unmarshal([]byte(s), &js); err != nil {
		t.Fatal(err)
	}
	return &js
}

// TestFlatPathTaken: ordinary arguments, coerced or not, take the one-pass
// path; an undeclared property or a violation does not.
func TestFlatPathTaken(t *testing.T) {
	d := flatDecoder(t)
	for raw, want := range map[string]bool{
		`{"path":"a","line":1}`:                      true,
		`{"path":"a","line":"42","inner":{"n":"1"}}`: true,
		`{"path":"a","line":1,"extra":1}`:            false,
		`{"path":"a"}`:                               false,
		`{"path":"a","line":"x"}`:                    false,
	} {
		var args map[string]any
		if err := json.Unmarshal([]byte(raw), &args); err != nil {
			t.Fatal(err)
		}
		if _, ok := d.bindFlat(args); ok != want {
			t.Errorf("%s: one pass = %v, want %v", raw, ok, want)
		}
	}
}
