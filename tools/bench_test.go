package tools

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentloop/agentloop/internal/schema"
)

// benchSchema is the 4-field schema of the side-by-side workloads.
const benchSchema = `{"type":"object","properties":{"path":{"type":"string"},"line":{"type":"integer"},"mode":{"type":"string","enum":["r","w"]},"force":{"type":"boolean"}},"required":["path","line"]}`

// benchArgs is the same schema as a Go struct.
type benchArgs struct {
	Path  string `json:"path"`
	Line  int    `json:"line"`
	Mode  string `json:"mode,omitempty" jsonschema:"enum=r,enum=w"`
	Force bool   `json:"force,omitempty"`
}

func noop(context.Context, map[string]any) (Result, error) { return TextResult("ok"), nil }

// coercedArgs is the bench call: one value ("42" for an integer) needs
// coercion.
func coercedArgs() map[string]any {
	return map[string]any{"path": "src/file1.go", "line": "42", "mode": "r"}
}

// fittingArgs is the bench call with nothing to coerce.
func fittingArgs() map[string]any {
	return map[string]any{"path": "src/file1.go", "line": 42.0, "mode": "r"}
}

func benchJSONTool() *Tool {
	return Must(NewJSON(Config{Name: "read", Description: "read"}, json.RawMessage(benchSchema), noop))
}

func benchStructTool() *Tool {
	return Must(New(Config{Name: "read", Description: "read"}, func(context.Context, benchArgs) (Result, error) { return Result{}, nil }))
}

// loop runs op once per iteration, reporting allocations.
func loop(b *testing.B, op func() error) {
	b.ReportAllocs()
	for b.Loop() {
		if err := op(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidateArguments validates the bench call against the bench
// schema. Target: < 2 µs, < 20 allocs.
func BenchmarkValidateArguments(b *testing.B) {
	tool, args := benchJSONTool(), coercedArgs()
	loop(b, func() error { _, err := tool.validateArguments(args); return err })
}

// BenchmarkPrepare is the same call through Prepare: coercion copies only
// the map it changes, and nothing is cloned for the result.
func BenchmarkPrepare(b *testing.B) {
	tool, args := benchJSONTool(), coercedArgs()
	loop(b, func() error { _, err := tool.prepare(args); return err })
}

// BenchmarkPrepareNoCoercion is Prepare for arguments that already fit:
// nothing is copied.
func BenchmarkPrepareNoCoercion(b *testing.B) {
	tool, args := benchJSONTool(), fittingArgs()
	loop(b, func() error { _, err := tool.prepare(args); return err })
}

// BenchmarkBind decodes prepared arguments into the body's struct.
func BenchmarkBind(b *testing.B) {
	tool := benchStructTool()
	args, err := tool.prepare(fittingArgs())
	if err != nil {
		b.Fatal(err)
	}
	loop(b, func() error { _, err := tool.bind(args); return err })
}

// BenchmarkPrepareBound is the loop's path without hooks for the bench
// call: one pass from raw arguments to the body's struct.
func BenchmarkPrepareBound(b *testing.B) {
	tool, args := benchStructTool(), coercedArgs()
	loop(b, func() error { _, err := tool.prepareBound(args); return err })
}

// BenchmarkPrepareThenBind is the same work through Prepare and Bind.
func BenchmarkPrepareThenBind(b *testing.B) {
	tool, args := benchStructTool(), coercedArgs()
	loop(b, func() error {
		prepared, err := tool.prepare(args)
		if err == nil {
			_, err = tool.bind(prepared)
		}
		return err
	})
}

// validateArguments is validate followed by a deep copy: the checked
// arguments as a value of their own, for tests of any JSON value.
func (t *Tool) validateArguments(args any) (any, error) {
	v, err := t.validate(args)
	if err != nil {
		return nil, err
	}
	return clone(v), nil
}

// clone is a deep copy of a JSON value, for tests.
func clone(v any) any {
	c, _ := schema.Clone(v, -1)
	return c
}
