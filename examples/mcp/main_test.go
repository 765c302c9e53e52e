package main

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/internal/harness/needs"
	"github.com/agentloop/agentloop/providers"
)

// TestMCPOffline runs the example against the filesystem server installed
// for tools/mcp's tests (npm ci in tools/mcp/testdata/npm; skipped with a
// printed reason without it, failed under CI) and checks what it
// advertises: the listing arrives, the wrong read gets the validation
// listing, the corrected read returns the note, the answer quotes it.
func TestMCPOffline(t *testing.T) {
	node, script := needs.NPMPackage(t, "../../tools/mcp/testdata/npm", "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js")
	msgs, err := run(context.Background(), io.Discard, []string{node, script}, true)
	if err != nil {
		t.Fatal(err)
	}
	results := map[string]providers.ToolResultMessage{}
	for _, m := range msgs {
		if tr, ok := m.(providers.ToolResultMessage); ok {
			results[tr.ToolCallID] = tr
		}
	}
	if r := results["call_1"]; r.IsError || !strings.Contains(r.Text(), "tuesday.txt") {
		t.Errorf("listing: %q", r.Text())
	}
	if r := results["call_2"]; !r.IsError || !strings.Contains(r.Text(), "Validation failed") || !strings.Contains(r.Text(), "  - path: ") {
		t.Errorf("wrong read: %q", r.Text())
	}
	if r := results["call_3"]; r.IsError || r.Text() != "Lunch with Ada at noon; bring the design doc." {
		t.Errorf("read: %q", r.Text())
	}
}
