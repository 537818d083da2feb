package cli_test

import (
	"go/parser"
	"go/token"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// The exit-code table points one way: domains (trust, the gate, review)
// mark their own errors, and the command-line plumbing reads the marks. If
// the table imported a domain to classify its errors, every new domain
// would have to be added to it, and a failed review once had to pretend to
// be the vulnerability gate to get its exit code. (cli's flag groups, such
// as the scan policy's, do build domain values; they are not the table.)
func TestTheExitCodeTableImportsNoDomain(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{join .Imports " "}}`, "github.com/reloader-dev/reloader/internal/exitcode").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	imports := strings.Fields(string(out))
	f, err := parser.ParseFile(token.NewFileSet(), "exit.go", nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range f.Imports {
		p, _ := strconv.Unquote(s.Path.Value)
		imports = append(imports, p)
	}
	for _, imp := range imports {
		if strings.HasPrefix(imp, "github.com/reloader-dev/reloader/") && imp != "github.com/reloader-dev/reloader/internal/exitcode" {
			t.Errorf("the exit-code table imports %s", imp)
		}
	}
}
