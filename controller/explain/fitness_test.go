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
	fset := token.NewFileSet()
	for _, f := range parsed(t, fset, ".") {
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

// explain renders the controller's decision; it evaluates none of its rules.
// Every exported function of annotations is a rule (Decide, Source,
// Interested, MatchList, ...) except the few that only name keys, and the
// decision's own checks are decide's: a call of one from explain is a second
// copy of the rule, whose reason would drift from the verdict. A new
// function of annotations is a rule until listed here as naming keys.
func TestExplainEvaluatesNoRuleOfTheDecision(t *testing.T) {
	namesKeys := map[string]bool{"Defaults": true, "ReloadKey": true, "TypedAutoKey": true, "OptInKeys": true, "MisplacedOnResource": true}
	// explain's one way in is controller.Inspect, which asks decide.
	rules := map[string]string{"Decide": "decide", "KindIgnored": "decide", "NamespaceIgnored": "decide", "EnvVarName": "decide"}
	fset := token.NewFileSet()
	for _, f := range parsed(t, fset, "../annotations") {
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.IsExported() && !namesKeys[fn.Name.Name] {
				rules[fn.Name.Name] = "annotations"
			}
		}
	}
	if len(rules) < 10 {
		t.Fatalf("found only %d rule functions: is ../annotations still where the rules are?", len(rules))
	}
	for _, f := range parsed(t, fset, ".") {
		ast.Inspect(f, func(node ast.Node) bool {
			call, ok := node.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if rules[sel.Sel.Name] != "" {
				t.Errorf("%s: explain calls %s, a rule of %s; take what it decides from the decision controller.Inspect returns instead",
					fset.Position(call.Pos()), sel.Sel.Name, rules[sel.Sel.Name])
			}
			if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "strings" && sel.Sel.Name == "Split" {
				t.Errorf("%s: explain splits a list (strings.Split); lists of names are the decision's to read", fset.Position(call.Pos()))
			}
			return true
		})
	}
}

// parsed are the non-test Go files of dir, parsed.
func parsed(t *testing.T, fset *token.FileSet, dir string) []*ast.File {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var out []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, f)
	}
	return out
}
