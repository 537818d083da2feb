package explain

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/reloader-dev/reloader/controller/annotations"
)

// explain renders what the controller decides; it must not carry its own
// copy of a rule. A list of annotation keys spelt out here (as the opt-in
// keys once were, copied from Names.Interested) is such a copy: the next key
// added to annotations would be missing from it. Key lists belong to
// annotations, which explain asks (Names.OptInKeys, ReloadKey, ...).
func TestExplainSpellsOutNoAnnotationKeyList(t *testing.T) {
	fields := map[string]bool{}
	nt := reflect.TypeOf(annotations.Names{})
	for i := range nt.NumField() {
		fields[nt.Field(i).Name] = true
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(node ast.Node) bool {
			lit, ok := node.(*ast.CompositeLit)
			if !ok {
				return true
			}
			keys := 0
			for _, e := range lit.Elts {
				if sel, ok := e.(*ast.SelectorExpr); ok && fields[sel.Sel.Name] {
					keys++
				}
			}
			if keys >= 2 {
				t.Errorf("%s: a list of %d annotation keys; ask annotations for it instead", fset.Position(lit.Pos()), keys)
			}
			return true
		})
	}
}
