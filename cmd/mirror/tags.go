package main

import (
	"fmt"
	"io"

	"github.com/reloader-dev/reloader/mirror"
)

// tagsHelp is what copy and import say about tags already at the target.
const tagsHelp = `

Tags are written last. A tag at the target that pointed at something else
is re-pointed and reported, old -> new digest, in the output and in the
receipt ("tags", which lists every tag with what it pointed at before). A
cosign .sig or .att tag there that holds signatures the release does not
carry (an organisation's countersignature, added with cosign sign) is
merged, not overwritten: the tag then points at a manifest with the
release's signature layers first, then the target's others, de-duplicated
by digest, so both verify with cosign. The release's own signature manifest
is stored by digest as well, and that is what verify checks.`

// printTagChanges lists the tags a run re-pointed or merged; created and
// unchanged ones are only counted (they are in the receipt).
func printTagChanges(w io.Writer, tags []mirror.TagChange) {
	for _, c := range tags {
		switch c.Action {
		case mirror.TagMoved:
			fmt.Fprintf(w, "  tag %s:%s moved: %s -> %s\n", c.Repository, c.Tag, c.Old, c.New)
		case mirror.TagMerged:
			fmt.Fprintf(w, "  tag %s:%s merged, keeping %d signature(s) the target held: %s -> %s\n", c.Repository, c.Tag, len(c.Kept), c.Old, c.New)
		case mirror.TagUnchanged:
			if len(c.Kept) > 0 {
				fmt.Fprintf(w, "  tag %s:%s kept as it is: it holds the release's signatures and %d more\n", c.Repository, c.Tag, len(c.Kept))
			}
		}
	}
}
