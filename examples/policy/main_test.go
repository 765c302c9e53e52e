package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPolicy(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	withGoMod := t.TempDir()
	if err := os.WriteFile(filepath.Join(withGoMod, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()
	for _, tc := range []struct {
		root, answer string
		want         []string
	}{
		{withGoMod, "", []string{"read_file: done", "delete_file: refused (the user did not approve delete_file scratch.tmp)"}},
		{withGoMod, "y\n", []string{"read_file: done", "delete_file: done"}},
		// A read the policy allowed but that failed is a failure, not a refusal.
		{empty, "y\n", []string{"read_file: failed (open " + filepath.Join(empty, "go.mod"), "delete_file: done"}},
	} {
		var out strings.Builder
		if err := run(tc.root, strings.NewReader(tc.answer), &out); err != nil {
			t.Fatal(err)
		}
		for _, want := range append(tc.want, "write_file: refused (../outside.txt is outside the workspace") {
			if !strings.Contains(out.String(), want) {
				t.Errorf("answer %q: output lacks %q:\n%s", tc.answer, want, out.String())
			}
		}
		if tc.root == empty && strings.Contains(out.String(), "read_file: refused") {
			t.Errorf("a failed read is called refused:\n%s", out.String())
		}
	}
}

// TestFailedIsNotRefused: a read the policy allows that fails (no such
// file) is reported as failed, not refused; the refusals still are.
func TestFailedIsNotRefused(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	var out strings.Builder
	if err := run(t.TempDir(), strings.NewReader(""), &out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"read_file: failed (open ", "write_file: refused (../outside.txt is outside", "delete_file: refused (the user did not approve"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "read_file: refused") {
		t.Errorf("a failed read called refused:\n%s", got)
	}
}

func TestInside(t *testing.T) {
	p := &Policy{Root: "/work/root"}
	for path, ok := range map[string]bool{"a.txt": true, "sub/../b": true, "../x": false, "/etc/passwd": false, "/work/root/c": true, "/work/rootkit": false, "": false} {
		if _, err := p.inside(path); (err == nil) != ok {
			t.Errorf("%q: %v", path, err)
		}
	}
}
