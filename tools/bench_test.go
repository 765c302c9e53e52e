package tools

import (
	"context"
	"encoding/json"
	"testing"
)

// benchSchema is the 4-field schema of the side-by-side workloads.
const benchSchema = `{"type":"object","properties":{"path":{"type":"string"},"line":{"type":"integer"},"mode":{"type":"string","enum":["r","w"]},"force":{"type":"boolean"}},"required":["path","line"]}`

func noop(context.Context, string, any, UpdateFunc) (Result, error) { return TextResult("ok"), nil }

// BenchmarkValidateArguments validates the bench schema with one value
// ("42" for an integer) that needs coercion. Target: < 2 µs, < 20 allocs.
func BenchmarkValidateArguments(b *testing.B) {
	tool := Must(NewJSON("read", "read", json.RawMessage(benchSchema), noop))
	args := map[string]any{"path": "src/file1.go", "line": "42", "mode": "r"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tool.ValidateArguments(args); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGoogleValidate is google/jsonschema-go's Validate alone on the
// already coerced value: what each call would cost on top of clone and
// coercion if google judged it (it does for schemas the checker does not
// decide).
func BenchmarkGoogleValidate(b *testing.B) {
	tool := Must(NewJSON("read", "read", json.RawMessage(benchSchema), noop))
	v := map[string]any{"path": "src/file1.go", "line": 42.0, "mode": "r"}
	b.ReportAllocs()
	for b.Loop() {
		if err := tool.resolved.Validate(v); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPrepare is the loop's path for the same call: coercion copies
// only the map it changes, and nothing is cloned for the result.
func BenchmarkPrepare(b *testing.B) {
	tool := Must(NewJSON("read", "read", json.RawMessage(benchSchema), noop))
	args := map[string]any{"path": "src/file1.go", "line": "42", "mode": "r"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tool.Prepare(args); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPrepareNoCoercion is Prepare for arguments that already fit:
// nothing is copied.
func BenchmarkPrepareNoCoercion(b *testing.B) {
	tool := Must(NewJSON("read", "read", json.RawMessage(benchSchema), noop))
	args := map[string]any{"path": "src/file1.go", "line": 42.0, "mode": "r"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tool.Prepare(args); err != nil {
			b.Fatal(err)
		}
	}
}

type benchArgs struct {
	Path  string `json:"path"`
	Line  int    `json:"line"`
	Mode  string `json:"mode,omitempty" jsonschema:"enum=r,enum=w"`
	Force bool   `json:"force,omitempty"`
}

// BenchmarkBind decodes prepared arguments into the body's struct.
func BenchmarkBind(b *testing.B) {
	tool := Must(New("read", "read", func(context.Context, string, benchArgs, UpdateFunc) (Result, error) { return Result{}, nil }))
	args, err := tool.Prepare(map[string]any{"path": "src/file1.go", "line": 42.0, "mode": "r"})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tool.Bind(args); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPrepareBound is the loop's path without hooks, for the bench
// call that needs coercion: one pass from raw arguments to the body's
// struct.
func BenchmarkPrepareBound(b *testing.B) {
	tool := Must(New("read", "read", func(context.Context, string, benchArgs, UpdateFunc) (Result, error) { return Result{}, nil }))
	args := map[string]any{"path": "src/file1.go", "line": "42", "mode": "r"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tool.PrepareBound(args); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPrepareThenBind is the same work through Prepare and Bind.
func BenchmarkPrepareThenBind(b *testing.B) {
	tool := Must(New("read", "read", func(context.Context, string, benchArgs, UpdateFunc) (Result, error) { return Result{}, nil }))
	args := map[string]any{"path": "src/file1.go", "line": "42", "mode": "r"}
	b.ReportAllocs()
	for b.Loop() {
		a, err := tool.Prepare(args)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := tool.Bind(a); err != nil {
			b.Fatal(err)
		}
	}
}
