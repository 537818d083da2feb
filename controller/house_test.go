package controller_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// The controller stays a house a newcomer can live in (issue 49): *Controller
// keeps at most 15 methods in at most 8 files, and sync, which orders every
// verdict, reads in one screen (at most 60 lines). A feature that grows
// sync puts its steps in methods of their own, as settle and reloadNow are.
func TestTheControllerTypeStaysSmallAndSyncReadsInOneScreen(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	methods, inFiles := 0, map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || len(fn.Recv.List) != 1 {
				continue
			}
			star, ok := fn.Recv.List[0].Type.(*ast.StarExpr)
			if !ok {
				continue
			}
			if id, ok := star.X.(*ast.Ident); !ok || id.Name != "Controller" {
				continue
			}
			methods++
			inFiles[f] = true
			if fn.Name.Name == "sync" {
				if n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1; n > 60 {
					t.Errorf("sync has %d lines; at most 60: move a step into a method of its own", n)
				}
			}
		}
	}
	if methods > 15 || len(inFiles) > 8 {
		t.Errorf("*Controller has %d methods in %d files; at most 15 in at most 8", methods, len(inFiles))
	}
	t.Logf("*Controller: %d methods in %d files", methods, len(inFiles))
}
