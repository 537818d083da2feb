package main

import "io"

// emit writes v as indented JSON with -o json, else runs text.
func (g *globals) emit(v any, text func(w io.Writer)) error {
	return g.out.Emit(g.stdout, v, text)
}
