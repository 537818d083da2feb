// Command withtime links golang.org/x/time, the package the synthetic
// database marks with a HIGH vulnerability that has no fix.
package main

import (
	"fmt"

	"golang.org/x/time/rate"
)

func main() { fmt.Println(rate.NewLimiter(1, 1).Allow()) }
