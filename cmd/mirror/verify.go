package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/reloader-dev/reloader/mirror"
	"github.com/reloader-dev/reloader/mirror/registry"
)

func (a *app) verifyCmd() *cobra.Command {
	g := a.command()
	rf := &rescanFlags{}
	c := &cobra.Command{
		Use:   "verify",
		Short: "Verify a release in a registry or an archive against a trust policy, offline",
		Example: `  reloader-mirror verify -f reloader-v1.2.3.tar.zst --key cosign.pub
  reloader-mirror verify --lock-ref harbor.corp.example/platform/reloader/reloader-release:v1.2.3 \
      --key cosign.pub --target harbor.corp.example/platform/reloader -o json
  # two keys during a rotation; the JSON's lock.signer.keySha256 is the one that verified
  reloader-mirror verify -f reloader-v1.2.3.tar.zst --key new.pub --key old.pub,not-after=2027-01-31 -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := rf.check(); err != nil {
				return err
			}
			return g.withRelease(cmd, func(cl *registry.Client, in *releaseInput) error {
				src, from := in.src, in.given
				if g.target != "" {
					// Verify the copy at the target rather than the source the
					// lock names.
					_, m, err := g.lockAndMapping(in)
					if err != nil {
						return err
					}
					src = &mirror.RegistrySource{Client: cl, Map: m.Repository, Name: g.target}
					from = "the target " + g.target
				}
				prep, err := in.lock.Verify(cmd.Context(), src)
				if err != nil {
					var ve *mirror.VerificationError
					if errors.As(err, &ve) && g.out.JSON() {
						_ = g.emit(ve.Result, nil)
					}
					return err
				}
				if err := g.rescan(cmd.Context(), prep, rf); err != nil {
					return err
				}
				return g.emit(withStanding(prep.Verification, in.standing), func(w io.Writer) {
					fmt.Fprintf(w, "Release %s verified offline from %s against %s\n", prep.Lock.Version, from, describeTrust(in.policy.Summary()))
					describeStanding(w, in.standing)
					for _, s := range prep.Verification.Subjects {
						fmt.Fprintf(w, "  %-12s %-14s %s  %d signature(s) ok (%s)\n", s.Kind, s.Name, s.Digest, len(s.Signatures), strings.Join(s.Formats, ", "))
					}
				})
			})
		},
	}
	g.releaseFlags(c)
	g.targetFlags.register(c, false)
	rf.register(c)
	return c
}
