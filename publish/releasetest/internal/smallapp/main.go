// Command smallapp stands in for the controller in releasetest's fast
// releases: the pipeline builds, packages, SBOMs, signs and locks it exactly
// as it does cmd/reloader, in a second instead of a minute per platform.
package main

import "fmt"

// version is stamped by the pipeline's build step, as cmd/reloader's is.
var version = "dev"

func main() { fmt.Println("smallapp", version) }
