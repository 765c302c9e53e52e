package tools

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

type point struct {
	X int `json:"x"`
	Y int `json:"y"`
}

type treeNode struct {
	Name     string     `json:"name"`
	Children []treeNode `json:"children,omitempty"`
}

type readArgs struct {
	Path  string            `json:"path" jsonschema:"description=File to read"`
	Line  int               `json:"line,omitempty" jsonschema:"minimum=1,maximum=100000"`
	Mode  string            `json:"mode,omitempty" jsonschema:"enum=r,enum=w"`
	At    *point            `json:"at,omitempty"`
	Tags  []string          `json:"tags,omitempty"`
	Env   map[string]string `json:"env,omitempty"`
	Since time.Time         `json:"since,omitempty"`
	Tree  *treeNode         `json:"tree,omitempty"`
}

func schemaMap(t *testing.T, tool *Tool) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(tool.Parameters(), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestSchemaFromStruct(t *testing.T) {
	var got readArgs
	tool := Must(New(Config{Name: "read", Description: "Read a file"}, func(_ context.Context, a readArgs) (Result, error) {
		got = a
		return TextResult("ok"), nil
	}))
	m := schemaMap(t, tool)
	if m["type"] != "object" || m["$ref"] != nil || m["$schema"] != nil || m["$id"] != nil {
		t.Fatalf("root is not an inline object schema: %v", m)
	}
	props := m["properties"].(map[string]any)
	if d := props["path"].(map[string]any)["description"]; d != "File to read" {
		t.Errorf("description = %v", d)
	}
	if e := props["mode"].(map[string]any)["enum"]; !reflect.DeepEqual(e, []any{"r", "w"}) {
		t.Errorf("enum = %v", e)
	}
	if r := m["required"]; !reflect.DeepEqual(r, []any{"path"}) {
		t.Errorf("required = %v (fields without omitempty only)", r)
	}
	if f := props["since"].(map[string]any)["format"]; f != "date-time" {
		t.Errorf("time.Time format = %v", f)
	}
	defs := m["$defs"].(map[string]any)
	if defs["point"] == nil || defs["treeNode"] == nil {
		t.Errorf("nested and recursive types should stay in $defs: %v", defs)
	}

	args := map[string]any{"path": "a.go", "line": "7", "mode": "r", "at": map[string]any{"x": "1", "y": 2},
		"tree": map[string]any{"name": "root", "children": []any{map[string]any{"name": "leaf"}}}}
	inv, err := tool.Check(args)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inv.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got.Line != 7 || got.At.X != 1 || got.Tree.Children[0].Name != "leaf" {
		t.Fatalf("decoded %+v", got)
	}
	for _, bad := range []map[string]any{{"line": 1}, {"path": "a", "line": 0}, {"path": "a", "mode": "x"}, {"path": "a", "at": map[string]any{"x": 1}}} {
		if _, err := tool.validateArguments(bad); err == nil {
			t.Errorf("%v: accepted", bad)
		}
	}
}

func TestSchemaRecursiveRoot(t *testing.T) {
	tool := Must(New(Config{Name: "tree"}, func(context.Context, treeNode) (Result, error) { return Result{}, nil }))
	m := schemaMap(t, tool)
	if m["type"] != "object" || !strings.Contains(string(tool.Parameters()), `"$ref":"#"`) {
		t.Fatalf("schema %s", tool.Parameters())
	}
	if _, err := tool.validateArguments(map[string]any{"name": "a", "children": []any{map[string]any{"name": 1}}}); err != nil {
		t.Fatalf("1 should coerce to \"1\": %v", err)
	}
	if _, err := tool.validateArguments(map[string]any{"name": "a", "children": []any{map[string]any{}}}); err == nil {
		t.Fatal("missing nested name accepted")
	}
}
