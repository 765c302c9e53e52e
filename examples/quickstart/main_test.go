package main

import (
	"os"
	"testing"
)

// TestQuickstartOffline runs the scripted conversation end to end.
func TestQuickstartOffline(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	os.Unsetenv("OPENAI_API_KEY")
	if err := run(); err != nil {
		t.Fatal(err)
	}
}
