package main

import (
	"encoding/json"
	"io"
)

// emit writes v as indented JSON with -o json, else runs text.
func (g *globals) emit(v any, text func(w io.Writer)) error {
	if g.output == "json" {
		enc := json.NewEncoder(g.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	text(g.stdout)
	return nil
}
