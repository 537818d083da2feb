package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/reloader-dev/reloader/release/scancheck"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
)

// reportScanRefusal writes, with -o json, the scan check's result of a
// release refused by it, and returns err unchanged.
func reportScanRefusal(cmd *cobra.Command, f *verifyFlags, err error) error {
	var re *scancheck.RefusedError
	if f.output.JSON() && errors.As(err, &re) {
		_ = cli.WriteJSON(cmd.OutOrStdout(), map[string]any{"version": re.Version, "verified": false, "scanCheck": re.Result, "error": err.Error()})
	}
	return err
}
