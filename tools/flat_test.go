package tools

import (
	"context"
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

func flatTool(t testing.TB) *Tool {
	tool := Must(New(Config{Name: "flat"}, func(context.Context, flatArgs) (Result, error) { return Result{}, nil }))
	if tool.flat == nil {
		t.Fatal("flatArgs should take the one-pass path")
	}
	return tool
}

// FuzzPrepareBound: the one-pass path gives exactly what Prepare and Bind
// give, value or error, and changes nothing it was given.
func FuzzPrepareBound(f *testing.F) {
	for _, seed := range []string{`{"path":"a","line":1}`, `{"path":"a","line":"42","mode":"r","force":"true"}`,
		`{"path":"","line":-1}`, `{"path":"a","line":1,"extra":true}`, `{"line":1}`, `{"path":"a","line":1.5}`,
		`{"path":"a","line":1,"tags":["x",2],"inner":{"n":"3","s":"a"},"meta":{"k":"4"},"any":{"deep":[1,{"x":null}]}}`,
		`{"path":"a","line":1,"ratio":"0.5","small":"300"}`, `{"path":null,"line":null,"force":0}`, `{"Path":"a","line":1}`} {
		f.Add(seed)
	}
	tool := flatTool(f)
	f.Fuzz(func(t *testing.T, raw string) {
		var args map[string]any
		if json.Unmarshal([]byte(raw), &args) != nil || args == nil {
			return
		}
		before := clone(args)
		got, gotErr := tool.prepareBound(args)
		if !reflect.DeepEqual(before, args) {
			t.Fatalf("input changed: %v -> %v", before, args)
		}
		var want any
		prepared, wantErr := tool.prepare(args)
		if wantErr == nil {
			want, wantErr = tool.bind(prepared)
		}
		if (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
			t.Fatalf("%s: one pass says %v, Prepare+Bind says %v", raw, gotErr, wantErr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: one pass gave %+v, Prepare+Bind gave %+v", raw, got, want)
		}
	})
}

// TestFlatOnlyForFlatSchemas: schemas with anything at the object itself,
// and bodies that take no struct, keep the general path.
func TestFlatOnlyForFlatSchemas(t *testing.T) {
	type withExtra struct {
		A string `json:"a"`
	}
	if tool := Must(New(Config{Name: "s"}, func(context.Context, withExtra) (Result, error) { return Result{}, nil })); tool.flat == nil {
		t.Error("a plain struct should be flat")
	}
	if tool := Must(NewJSON(Config{Name: "j"}, json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}}}`), noop)); tool.flat != nil {
		t.Error("a JSON-schema tool has no struct to decode into")
	}
	if tool := Must(New(Config{Name: "m"}, func(context.Context, map[string]any) (Result, error) { return Result{}, nil })); tool.flat != nil {
		t.Error("a map body is not a struct")
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
	tool := flatTool(t)
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
		if _, ok := tool.bindFlat(args); ok != want {
			t.Errorf("%s: one pass = %v, want %v", raw, ok, want)
		}
	}
}
