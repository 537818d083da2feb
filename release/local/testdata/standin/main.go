// Command standin takes the controller's place in release tests: it is
// stamped like the controller (controller/buildinfo) and answers --help and
// --version, but builds in seconds for every platform.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/reloader-dev/reloader/controller/buildinfo"
)

func main() {
	fs := flag.NewFlagSet("reloader", flag.ContinueOnError)
	version := fs.Bool("version", false, "print the version and exit")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "reloader (release test stand-in): reloads workloads when ConfigMaps and Secrets change")
		fs.PrintDefaults()
	}
	if err := fs.Parse(os.Args[1:]); err != nil {
		if err == flag.ErrHelp {
			os.Exit(0)
		}
		os.Exit(2)
	}
	i := buildinfo.Get()
	if *version {
		fmt.Printf("reloader %s commit %s built %s\n", i.Version, i.Commit, i.Date)
		return
	}
	fmt.Println("reloader stand-in: nothing to do")
}
