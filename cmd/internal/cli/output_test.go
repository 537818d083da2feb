package cli_test

import (
	"bytes"
	"io"
	"testing"

	"github.com/spf13/pflag"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
)

func TestOutputIsTextForPeopleAndOneJSONDocumentForScripts(t *testing.T) {
	var o cli.Output
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	o.AddFlags(fs)
	if o.Format != "text" {
		t.Fatalf("default --output is %q, want text", o.Format)
	}
	var b bytes.Buffer
	if err := o.Emit(&b, map[string]int{"a": 1}, func(w io.Writer) { io.WriteString(w, "a is 1\n") }); err != nil || b.String() != "a is 1\n" {
		t.Errorf("text: %q, %v", b.String(), err)
	}
	if err := fs.Parse([]string{"-o", "json"}); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if err := o.Emit(&b, map[string]int{"a": 1}, func(io.Writer) { t.Error("json ran the text printer") }); err != nil || b.String() != "{\n  \"a\": 1\n}\n" {
		t.Errorf("json: %q, %v", b.String(), err)
	}
	o.Format = "yaml"
	if err := o.Check(); cli.ExitCode(err) != cli.ExitUsage {
		t.Errorf("--output yaml: %v, exit %d; want a usage error", err, cli.ExitCode(err))
	}
}
