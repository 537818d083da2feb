package main

import (
	"fmt"
	"io"
	"sort"

	"github.com/spf13/cobra"

	"github.com/reloader-dev/reloader/internal/progress"
	"github.com/reloader-dev/reloader/mirror"
	"github.com/reloader-dev/reloader/mirror/registry"
	"github.com/reloader-dev/reloader/release/trust"
)

func (a *app) planCmd() *cobra.Command {
	g := a.command()
	c := &cobra.Command{
		Use:   "plan",
		Short: "Verify a release offline and show what a copy would move; moves nothing",
		Example: `  reloader-mirror plan --lock-ref ghcr.io/reloader-dev/reloader-release:v1.2.3 --key cosign.pub \
      --target harbor.corp.example/platform/reloader
  reloader-mirror plan -f reloader-v1.2.3.tar.zst --key cosign.pub -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.withRelease(cmd, func(cl *registry.Client, in *releaseInput) error {
				repos, err := g.repos()
				if err != nil {
					return err
				}
				po := mirror.PlanOptions{Repos: repos}
				if g.target != "" {
					po.Client, po.Target = cl, g.target
				}
				rel, err := in.lock.Verify(cmd.Context(), in.src)
				if err != nil {
					return err
				}
				p, err := rel.Plan(cmd.Context(), po)
				if err != nil {
					return err
				}
				p.Standing = in.standing
				return g.emit(p, func(w io.Writer) {
					fmt.Fprintf(w, "Release %s from %s\n", p.Version, p.Source)
					fmt.Fprintf(w, "Trusted: %s\n", describeTrust(p.Trust))
					fmt.Fprintf(w, "Signatures: all %d signed artifacts verified offline\n", len(p.Verification.Subjects))
					fmt.Fprintf(w, "%d manifests, %d blobs, %s in total", p.Manifests, p.Blobs, progress.Bytes(p.TotalBytes))
					if p.Target != "" {
						fmt.Fprintf(w, ", %s already at %s, %s to move\n", progress.Bytes(p.BytesPresent), p.Target, progress.Bytes(p.BytesToMove))
						keys := make([]string, 0, len(p.Referrers))
						for k := range p.Referrers {
							keys = append(keys, k)
						}
						sort.Strings(keys)
						for _, k := range keys {
							fmt.Fprintf(w, "  %s: %s\n", k, p.Referrers[k])
						}
					} else {
						fmt.Fprintln(w)
					}
					for _, a := range p.Artifacts {
						fmt.Fprintf(w, "  %-12s %-14s %-14s %s %s\n", a.Kind, a.Name, a.Platform, a.Digest[:19], a.Target)
					}
				})
			})
		},
	}
	g.releaseFlags(c)
	g.targetFlags.register(c, false)
	return c
}

func describeTrust(s trust.Summary) string {
	if s.Mode == "key" {
		return "public key sha256:" + s.KeySHA256
	}
	id := s.Identity
	if id == "" {
		id = "~" + s.IdentityRegexp
	}
	return fmt.Sprintf("keyless identity %s from %s (trusted root %s)", id, s.Issuer, s.TrustedRoot)
}
