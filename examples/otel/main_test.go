package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestOtelOffline runs the example on the scripted model and checks the
// tree it prints: the run at the root, two model calls and three tool
// calls under it (the unknown one an error), no content, and a few dozen
// lines rather than pages of JSON.
func TestOtelOffline(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), &out, true); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > 20 {
		t.Errorf("%d lines of output", len(lines))
	}
	if !strings.HasPrefix(lines[1], "invoke_agent weather  ") {
		t.Errorf("the root is not the run: %q", lines[1])
	}
	for want, n := range map[string]int{"├── chat scripted  ": 1, "└── chat scripted  ": 1, "├── execute_tool weather  ": 2,
		"├── execute_tool forecast  ": 1, "ERROR unknown_tool": 1, "error.type=unknown_tool": 1, "gen_ai.tool.call.id=c2": 1} {
		if got := strings.Count(s, want); got != n {
			t.Errorf("%d of %q, want %d", got, want, n)
		}
	}
	if strings.Contains(s, "light rain") {
		t.Error("content on the spans by default")
	}
	if !strings.Contains(s, "OTLP exporter") {
		t.Error("the output does not say how to send spans to a collector")
	}
}
