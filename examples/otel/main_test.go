package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestOtelOffline runs the example on the scripted model and checks the
// spans it prints: the run, two model calls, three tool calls (the unknown
// one an error), no content.
func TestOtelOffline(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), &out, "offline"); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for want, n := range map[string]int{`"Name": "invoke_agent weather"`: 1, `"Name": "chat scripted"`: 2, `"Name": "execute_tool weather"`: 2,
		`"Name": "execute_tool forecast"`: 1, `"Value": "unknown_tool"`: 2} {
		if got := strings.Count(s, want); got != n {
			t.Errorf("%d of %s, want %d", got, want, n)
		}
	}
	if strings.Contains(s, "light rain") {
		t.Error("content on the spans by default")
	}
}
