package crossprovider

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// TestFloorsApart: the library never links a harness (no package outside
// internal/harness imports one, tests and examples aside), and the ground
// floor (internal/* outside internal/harness) never reaches up to the loop,
// the agent or the events.
func TestFloorsApart(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..", "..")
	const module = "github.com/agentloop/agentloop/"
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "internal/harness" || rel == "examples" || strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked++
		ground := strings.HasPrefix(rel, "internal/")
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			below, ok := strings.CutPrefix(p, module)
			if !ok {
				continue
			}
			if strings.HasPrefix(below, "internal/harness") {
				t.Errorf("%s imports the harness %s", rel, p)
			}
			for _, up := range []string{"loop", "agent", "events"} {
				if ground && (below == up || strings.HasPrefix(below, up+"/")) {
					t.Errorf("%s, on the ground floor, imports %s", rel, p)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 50 {
		t.Fatalf("checked only %d files under %s", checked, root)
	}
}
