// Command plain links only the standard library: a clean image.
package main

import "fmt"

func main() { fmt.Println("clean") }
