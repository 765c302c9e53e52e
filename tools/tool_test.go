package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/internal/toolctx"
	"github.com/agentloop/agentloop/providers"
)

type nameArgs struct {
	Name string `json:"name"`
}

// TestBuildRefusals: a tool that a provider or the loop could not use is
// refused when it is built, with an error that says why.
func TestBuildRefusals(t *testing.T) {
	body := func(context.Context, nameArgs) (string, error) { return "", nil }
	jsonBody := func(context.Context, map[string]any) (string, error) { return "", nil }
	for _, tc := range []struct {
		name  string
		build func() (*Tool, error)
		want  string
	}{
		{"empty name", func() (*Tool, error) { return New(Config{}, body) }, "tool name"},
		{"space in name", func() (*Tool, error) { return New(Config{Name: "has space!"}, body) }, "tool name"},
		{"name of 65", func() (*Tool, error) { return New(Config{Name: strings.Repeat("a", 65)}, body) }, "tool name"},
		{"nil body", func() (*Tool, error) { return New[nameArgs, string](Config{Name: "x"}, nil) }, "nil body"},
		{"string arguments", func() (*Tool, error) {
			return New(Config{Name: "x"}, func(context.Context, string) (string, error) { return "", nil })
		}, `"type": "object"`},
		{"array schema", func() (*Tool, error) {
			return NewJSON(Config{Name: "x"}, json.RawMessage(`{"type":"array"}`), jsonBody)
		}, `"type": "object"`},
		{"no type", func() (*Tool, error) { return NewJSON(Config{Name: "x"}, json.RawMessage(`{}`), jsonBody) }, `"type": "object"`},
		{"a chan field", func() (*Tool, error) {
			return New(Config{Name: "x"}, func(context.Context, struct{ C chan int }) (string, error) { return "", nil })
		}, "field arguments.C: JSON cannot hold its type chan int"},
		{"bad JSON", func() (*Tool, error) { return NewJSON(Config{Name: "x"}, json.RawMessage(`{`), jsonBody) }, "schema"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tool, err := tc.build()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, %v; want an error mentioning %q", tool, err, tc.want)
			}
		})
	}
	if _, err := New(Config{Name: "ok_name-1"}, body); err != nil {
		t.Fatalf("a valid tool was refused: %v", err)
	}
}

// TestZeroToolIsRefused: a Tool not built by New or NewJSON says so
// instead of panicking.
func TestZeroToolIsRefused(t *testing.T) {
	for _, tool := range []*Tool{nil, {}} {
		if err := tool.Err(); !errors.Is(err, errNotBuilt) {
			t.Errorf("%#v: Err() = %v", tool, err)
		}
	}
	if _, err := (&Tool{}).Check(map[string]any{}); !errors.Is(err, errNotBuilt) {
		t.Errorf("Check on a zero Tool: %v", err)
	}
}

// TestOutputs: what a body returns becomes the result the model reads.
func TestOutputs(t *testing.T) {
	type point struct {
		X int `json:"x"`
	}
	run := func(tool *Tool) (Result, error) {
		t.Helper()
		inv, err := tool.Check(map[string]any{"name": "n"})
		if err != nil {
			t.Fatal(err)
		}
		return inv.Run(context.Background())
	}
	text := func(r Result) string {
		if len(r.Content) == 0 {
			return ""
		}
		return r.Content[0].(providers.Text).Text
	}
	cfg := Config{Name: "t"}
	res, _ := run(Must(New(cfg, func(_ context.Context, in nameArgs) (string, error) { return "hi " + in.Name, nil })))
	if text(res) != "hi n" {
		t.Errorf("string: %q", text(res))
	}
	res, _ = run(Must(New(cfg, func(context.Context, nameArgs) (Result, error) { return Result{Terminate: true}, nil })))
	if !res.Terminate {
		t.Error("a Result is passed through")
	}
	res, _ = run(Must(New(cfg, func(context.Context, nameArgs) (point, error) { return point{3}, nil })))
	if text(res) != `{"x":3}` || res.Details != (point{3}) {
		t.Errorf("struct: %q, details %v", text(res), res.Details)
	}
	res, _ = run(Must(New(cfg, func(context.Context, nameArgs) (any, error) { return nil, nil })))
	if len(res.Content) != 0 {
		t.Errorf("nil: %v", res)
	}
	_, err := run(Must(New(cfg, func(context.Context, nameArgs) (func(), error) { return func() {}, nil })))
	if err == nil || !strings.Contains(err.Error(), "encoding the result") {
		t.Errorf("unencodable: %v", err)
	}
	_, err = run(Must(New(cfg, func(context.Context, nameArgs) (string, error) { return "", errors.New("boom") })))
	if err == nil || err.Error() != "boom" {
		t.Errorf("error: %v", err)
	}
	_, err = run(Must(New(cfg, func(context.Context, nameArgs) (string, error) { panic("kaboom") })))
	if err == nil || err.Error() != "panic: kaboom" {
		t.Errorf("panic: %v", err)
	}
}

// TestInvocationArgsAreACopy: Args gives the checked arguments, the same on
// both paths (one-pass and general), as a copy of their own.
func TestInvocationArgsAreACopy(t *testing.T) {
	type args struct {
		N    int      `json:"n"`
		Tags []string `json:"tags,omitempty"`
	}
	tool := Must(New(Config{Name: "t"}, func(context.Context, args) (string, error) { return "", nil }))
	raw := map[string]any{"n": "4", "tags": []any{"a"}}
	inv, err := tool.Check(raw)
	if err != nil {
		t.Fatal(err)
	}
	a := inv.Args()
	if a["n"] != 4.0 {
		t.Fatalf("checked n = %#v, want 4 (coerced)", a["n"])
	}
	a["tags"].([]any)[0] = "changed"
	if raw["tags"].([]any)[0] != "a" || inv.Args()["tags"].([]any)[0] != "a" {
		t.Fatal("Args shares memory with the call or with itself")
	}
}

// TestCallContext: a body reads its call id and reports progress through
// its context; without a call both are harmless.
func TestCallContext(t *testing.T) {
	var got []string
	ctx := toolctx.With(context.Background(), "c1", func(p Result) { got = append(got, p.Content[0].(providers.Text).Text) })
	if CallID(ctx) != "c1" {
		t.Fatalf("CallID = %q", CallID(ctx))
	}
	ReportProgress(ctx, TextResult("half"))
	if len(got) != 1 || got[0] != "half" {
		t.Fatalf("progress %v", got)
	}
	ReportProgress(context.Background(), TextResult("nowhere")) // no call: ignored
	if CallID(context.Background()) != "" {
		t.Fatal("a call id without a call")
	}
}

func TestDecode(t *testing.T) {
	got, err := Decode[nameArgs](map[string]any{"name": "x"})
	if err != nil || got.Name != "x" {
		t.Fatalf("Decode = %+v, %v", got, err)
	}
	if _, err := Decode[nameArgs](map[string]any{"name": 3.0}); err == nil {
		t.Fatal("a number decoded into a string field")
	}
}

// TestSchemaSafety: schemas whose validation would never end are refused
// when the tool is built; references by anchor are followed; a schema
// with an unknown keyword still checks; a value nested past the limit is
// refused with an error text of bounded size.
func TestSchemaSafety(t *testing.T) {
	body := func(context.Context, map[string]any) (string, error) { return "", nil }
	for _, loop := range []string{
		`{"type":"object","$defs":{"d":{"$dynamicAnchor":"m","$dynamicRef":"#m"}},"properties":{"a":{"$ref":"#/$defs/d"}}}`,
		`{"type":"object","$defs":{"a":{"$ref":"#/$defs/b"},"b":{"allOf":[{"$ref":"#/$defs/a"}]}},"properties":{"x":{"$ref":"#/$defs/a"}}}`,
		`{"type":"object","$defs":{"a":{"$anchor":"here","not":{"$ref":"#here"}}},"properties":{"x":{"$ref":"#/$defs/a"}}}`,
	} {
		if _, err := NewJSON(Config{Name: "t"}, json.RawMessage(loop), body); err == nil || !strings.Contains(err.Error(), "$ref cycle that never descends into the value") {
			t.Errorf("a schema that loops was accepted (%v): %s", err, loop)
		}
	}
	// Recursion through a property is fine.
	if _, err := NewJSON(Config{Name: "t"}, json.RawMessage(`{"type":"object","$defs":{"n":{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#/$defs/n"}}}}},"properties":{"root":{"$ref":"#/$defs/n"}}}`), body); err != nil {
		t.Fatalf("a recursive schema was refused: %v", err)
	}
	anchored := Must(NewJSON(Config{Name: "t"}, json.RawMessage(`{"type":"object","$defs":{"n":{"$anchor":"num","type":"number"}},"properties":{"x":{"$ref":"#num"}}}`), body))
	if inv, err := anchored.Check(map[string]any{"x": "2"}); err != nil || inv.Args()["x"] != 2.0 {
		t.Fatalf("coercion does not follow the anchor: %v", err)
	}
	if _, err := anchored.Check(map[string]any{"x": 1.0}); err != nil {
		t.Fatalf("valid arguments refused: %v", err)
	}
	if _, err := anchored.Check(map[string]any{"x": "no"}); err == nil || !strings.Contains(err.Error(), "Validation failed") {
		t.Fatalf("invalid arguments: %v", err)
	}
	unknown := Must(NewJSON(Config{Name: "t"}, json.RawMessage(`{"type":"object","x-vendor":true,"properties":{"a":{"type":"string"}}}`), body))
	if _, err := unknown.Check(map[string]any{"a": []any{}}); err == nil || !strings.Contains(err.Error(), "Validation failed") {
		t.Fatalf("a schema with a keyword the checker does not know: %v", err)
	}
	deep := any("leaf")
	for range 100000 {
		deep = []any{deep}
	}
	_, err := anchored.Check(map[string]any{"x": deep})
	if err == nil || len(err.Error()) > 1000 || !strings.Contains(err.Error(), "not shown") {
		t.Fatalf("deep value: %d bytes of error", len(fmt.Sprint(err)))
	}
}

// TestResultText: a result's text is its text blocks, in order, without
// separators; images are left out.
func TestResultText(t *testing.T) {
	img := providers.Image{Data: "aGk=", MIMEType: "image/png"}
	for _, tc := range []struct {
		name string
		r    Result
		want string
	}{
		{"empty", Result{}, ""},
		{"one text", TextResult("sunny"), "sunny"},
		{"text, image, text", Result{Content: []providers.Content{providers.Text{Text: "a "}, img, providers.Text{Text: "b"}}}, "a b"},
		{"image only", Result{Content: []providers.Content{img}}, ""},
	} {
		if got := tc.r.Text(); got != tc.want {
			t.Errorf("%s: Text() = %q, want %q", tc.name, got, tc.want)
		}
	}
}
