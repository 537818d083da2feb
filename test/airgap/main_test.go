package airgap_test

import (
	"flag"
	"os"
	"testing"

	"github.com/reloader-dev/reloader/test/controlplane"
)

var cp *controlplane.ControlPlane

// The drill installs into a real apiserver; in -short mode (make unit) only
// the README check runs.
func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	os.Exit(controlplane.RunTests(m, controlplane.Options{}, &cp))
}
