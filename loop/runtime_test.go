package loop

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestOnlyWallRuntimeBlocks holds the package to its Runtime seam: outside
// wall.go (the default runtime) no file reads the wall clock, makes a
// timer or a deadline, starts a goroutine, or sends, receives or selects
// on a channel. So a run under another Runtime does none of these itself:
// every clock reading, fan-out and wait goes through the Runtime.
//
// Package compact is held to the same rule: its clock is CompactInput.Now,
// and only stampAt falls back to the wall clock when a caller left it zero
// (the default runtime).
func TestOnlyWallRuntimeBlocks(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	more, err := filepath.Glob(filepath.Join("compact", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, more...)
	forbidden := map[string]bool{
		"time.Now": true, "time.Since": true, "time.Until": true, "time.After": true, "time.AfterFunc": true,
		"time.NewTimer": true, "time.NewTicker": true, "time.Tick": true, "time.Sleep": true,
		"context.WithTimeout": true, "context.WithDeadline": true, "context.WithTimeoutCause": true,
		"context.WithDeadlineCause": true, "providers.Now": true,
	}
	checked := 0
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") || file == "wall.go" {
			continue
		}
		checked++
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == "golang.org/x/sync/errgroup" {
				t.Errorf("%s imports errgroup: fan-out belongs to the Runtime", fset.Position(imp.Pos()))
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			var what string
			switch n := n.(type) {
			case *ast.FuncDecl:
				// The wall clock when the run gave none (see stampAt).
				return !(file == filepath.Join("compact", "summarize.go") && n.Name.Name == "stampAt")
			case *ast.GoStmt:
				what = "a go statement"
			case *ast.SelectStmt:
				what = "a select"
			case *ast.SendStmt:
				what = "a channel send"
			case *ast.UnaryExpr:
				if n.Op == token.ARROW {
					what = "a channel receive"
				}
			case *ast.ChanType:
				what = "a channel type"
			case *ast.SelectorExpr:
				if id, ok := n.X.(*ast.Ident); ok && forbidden[id.Name+"."+n.Sel.Name] {
					what = id.Name + "." + n.Sel.Name
				}
			case *ast.RangeStmt:
				// A range over a channel cannot be told from its syntax;
				// the package has no channel types outside wall.go, so
				// there is none to range over.
			}
			if what != "" {
				t.Errorf("%s: %s outside wall.go: it must go through the Runtime", fset.Position(n.Pos()), what)
			}
			return true
		})
	}
	if checked < 15 {
		t.Fatalf("checked %d files; the package has more", checked)
	}
}
