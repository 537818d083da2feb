package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/release/gate"
)

// newGateCmd is the gate subcommand: help text, flags and a short run
// function, kept together as every subcommand of both CLIs is.
func newGateCmd() *cobra.Command {
	var policyPath, now string
	var printPolicy bool
	var out cli.Output
	c := &cobra.Command{
		Use:   "gate REPORT.json...",
		Short: "Judge Trivy JSON reports against the release policy",
		Long: `gate evaluates Trivy JSON reports (trivy image --format json) with the
release policy: HIGH and CRITICAL findings fail, fixed or not, unless an
unexpired exception names the vulnerability and package. An expired
exception fails. A missing, empty or malformed report fails.

The release policy is built into the binary (--print-policy prints it, a
starting point for your own); --policy replaces it with your file.` + cli.ExitCodesHelp,
		Example: `  trivy image --format json --output r.json ghcr.io/reloader-dev/reloader@sha256:...
  reloader-release gate r.json
  reloader-release gate --print-policy > my-policy.yaml
  reloader-release gate --policy my-policy.yaml r.json

  # machine-readable verdict
  reloader-release gate -o json r.json | jq .passed`,
		Args: func(cmd *cobra.Command, args []string) error {
			if printPolicy {
				return cobra.NoArgs(cmd, args)
			}
			return cobra.MinimumNArgs(1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if printPolicy {
				_, err := cmd.OutOrStdout().Write(gate.DefaultPolicyYAML())
				return err
			}
			if err := out.Check(); err != nil {
				return err
			}
			pol, err := gate.LoadPolicy(policyPath)
			if err != nil {
				return cli.Usage(err)
			}
			at := time.Now()
			if now != "" {
				if at, err = time.Parse(time.RFC3339, now); err != nil {
					return cli.Usage(fmt.Errorf("--now: %w", err))
				}
			}
			var imgs []gate.ScannedImage
			var problems []string
			for _, a := range args {
				r, err := gate.ReadReport(a)
				if err != nil {
					problems = append(problems, err.Error())
				}
				imgs = append(imgs, gate.ScannedImage{Image: strings.TrimSuffix(filepath.Base(a), ".json"), Report: r})
			}
			res := gate.Evaluate(pol, imgs, at)
			if out.JSON() {
				if err := cli.WriteJSON(cmd.OutOrStdout(), res); err != nil {
					return err
				}
			} else {
				for _, p := range problems {
					fmt.Fprintln(cmd.OutOrStdout(), "report error:", p)
				}
				if err := res.WriteTable(cmd.OutOrStdout()); err != nil {
					return err
				}
			}
			if !res.Passed {
				return gate.ErrRefused
			}
			return nil
		},
	}
	c.Flags().StringVar(&policyPath, "policy", "", "release policy file (default: the built-in one)")
	c.Flags().BoolVar(&printPolicy, "print-policy", false, "print the built-in release policy and exit (a starting point for --policy)")
	c.Flags().StringVar(&now, "now", "", "judge exception expiry at this RFC 3339 time instead of now")
	out.AddFlags(c.Flags())
	return c
}
