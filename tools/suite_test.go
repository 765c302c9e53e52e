package tools

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// suiteDir finds the JSON-Schema-Test-Suite (draft 2020-12) that ships in
// google/jsonschema-go's module, read in place from the module cache.
func suiteDir(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/google/jsonschema-go").Output()
	if err != nil {
		t.Fatalf("locating github.com/google/jsonschema-go: %v", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "jsonschema", "testdata", "draft2020-12")
}

// TestCheckerAgreesWithGoogleOnSuite runs every case of the official test
// suite that the compiled checker decides on its own, and requires its
// verdict to be google/jsonschema-go's.
func TestCheckerAgreesWithGoogleOnSuite(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(suiteDir(t), "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no suite files: %v", err)
	}
	var decided, judged int
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var groups []struct {
			Description string
			Schema      json.RawMessage
			Tests       []struct {
				Description string
				Data        any
			}
		}
		if err := json.Unmarshal(data, &groups); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, g := range groups {
			var s jsonschema.Schema
			if json.Unmarshal(g.Schema, &s) != nil {
				continue
			}
			resolved, err := s.Resolve(&jsonschema.ResolveOptions{})
			if err != nil {
				continue
			}
			root, err := compileSchema(&s)
			if err != nil || !decides(root) {
				judged += len(g.Tests)
				continue
			}
			for _, tc := range g.Tests {
				decided++
				want := resolved.Validate(tc.Data) == nil
				if got := root.valid(tc.Data); got != want {
					t.Errorf("%s / %s / %s: checker says valid=%v, google says %v\nschema: %s",
						filepath.Base(file), g.Description, tc.Description, got, want, g.Schema)
				}
			}
		}
	}
	t.Logf("%d cases decided by the checker, %d left to google", decided, judged)
	if decided < 500 {
		t.Errorf("only %d suite cases decided by the checker", decided)
	}
}
