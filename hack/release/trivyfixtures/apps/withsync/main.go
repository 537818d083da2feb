// Command withsync links golang.org/x/sync, the package the synthetic
// database marks with a HIGH vulnerability that has a fix.
package main

import (
	"fmt"

	"golang.org/x/sync/errgroup"
)

func main() {
	var g errgroup.Group
	g.Go(func() error { return nil })
	fmt.Println(g.Wait())
}
