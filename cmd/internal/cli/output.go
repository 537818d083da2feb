package cli

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/pflag"
)

// Output is the --output flag both CLIs give their commands: text for
// people, json for scripts. One type so the flag, its check and the JSON
// encoding (indented, one document) are the same everywhere.
type Output struct{ Format string }

// AddFlags declares --output/-o on fs.
func (o *Output) AddFlags(fs *pflag.FlagSet) {
	fs.StringVarP(&o.Format, "output", "o", "text", "output format: text or json (for scripts)")
}

// Check refuses a format other than text or json as a usage error.
func (o *Output) Check() error {
	if o.Format != "text" && o.Format != "json" {
		return Usage(fmt.Errorf("--output must be text or json, not %q", o.Format))
	}
	return nil
}

// JSON reports whether scripts asked for JSON.
func (o *Output) JSON() bool { return o.Format == "json" }

// Emit writes v as indented JSON when JSON was asked for, else runs text.
func (o *Output) Emit(w io.Writer, v any, text func(io.Writer)) error {
	if o.JSON() {
		return WriteJSON(w, v)
	}
	text(w)
	return nil
}

// WriteJSON writes v as one indented JSON document.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
