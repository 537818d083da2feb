package test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/reloader-dev/reloader/controller/annotations"
)

// Size limits a reader can hold in their head. They are measured the way
// anyone can rerun them (wc -l, a function's first to last line), over the
// module's own code: tests are specifications and may be long, and
// hack/tools holds only the pinned tool modules.
const (
	maxFileLines = 450
	maxFuncLines = 100
	// A function longer than this says in its doc comment why it stays
	// whole (a linear sequence of steps, one table, ...).
	explainedFuncLines = 60
)

// moduleGoFiles returns the module's non-test .go files, relative to the
// repository root, leaving out nested modules (hack/tools/..., fixtures with
// their own go.mod) and testdata.
func moduleGoFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("..", path)
		if d.IsDir() {
			name := d.Name()
			if rel != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			if rel == filepath.Join("hack", "tools") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(rel, ".go") && !strings.HasSuffix(rel, "_test.go") {
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walking the module: %v", err)
	}
	if len(files) == 0 {
		t.Fatal("found no Go files: is the test running from test/?")
	}
	return files
}

func TestFitnessNoFileIsOverTheLimit(t *testing.T) {
	for _, rel := range moduleGoFiles(t) {
		data, err := os.ReadFile(filepath.Join("..", rel))
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(data), "\n"); n > maxFileLines {
			t.Errorf("%s has %d lines; at most %d (split it by what it holds)", rel, n, maxFileLines)
		}
	}
}

func TestFitnessNoFunctionIsOverTheLimitAndLongOnesSayWhy(t *testing.T) {
	fset := token.NewFileSet()
	for _, rel := range moduleGoFiles(t) {
		f, err := parser.ParseFile(fset, filepath.Join("..", rel), nil, parser.ParseComments)
		if err != nil {
			t.Fatalf("parsing %s: %v", rel, err)
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
			name := funcName(fn)
			switch {
			case n > maxFuncLines:
				t.Errorf("%s: %s has %d lines; at most %d", rel, name, n, maxFuncLines)
			case n > explainedFuncLines && fn.Doc == nil:
				t.Errorf("%s: %s has %d lines and no doc comment saying why it stays whole", rel, name, n)
			}
		}
	}
}

func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	recv := fn.Recv.List[0].Type
	if star, ok := recv.(*ast.StarExpr); ok {
		recv = star.X
	}
	if idx, ok := recv.(*ast.IndexExpr); ok {
		recv = idx.X
	}
	if id, ok := recv.(*ast.Ident); ok {
		return "(" + id.Name + ")." + fn.Name.Name
	}
	return fn.Name.Name
}

// explain renders the controller's Decision; an annotation key spelt out in
// it is a rule it could get from the annotations package (or from the
// Decision), and the first renamed key would leave explain printing the old
// one.
func TestFitnessExplainSpellsOutNoAnnotationKey(t *testing.T) {
	keys := []string{annotations.Applied}
	names := reflect.ValueOf(annotations.Defaults())
	for i := range names.NumField() {
		keys = append(keys, names.Field(i).String())
	}
	files, err := filepath.Glob("../controller/explain/*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatalf("parsing %s: %v", path, err)
		}
		ast.Inspect(f, func(node ast.Node) bool {
			lit, ok := node.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			for _, k := range keys {
				if strings.Contains(s, k) {
					t.Errorf("%s: the literal %q spells out the annotation key %s; ask annotations for it", fset.Position(lit.Pos()), s, k)
				}
			}
			if strings.Contains(s, "reloader.stakater.com/") {
				t.Errorf("%s: the literal %q spells out a reloader.stakater.com annotation; ask annotations for it", fset.Position(lit.Pos()), s)
			}
			return true
		})
	}
}
