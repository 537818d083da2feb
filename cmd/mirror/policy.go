package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/mirror/admission"
	"github.com/reloader-dev/reloader/mirror/registry"
)

// policyFlags are the policy command's own flags. --output names a directory
// here, so it shadows the global text|json --output.
type policyFlags struct {
	format, outDir, namespace, selector, mode, name string
	tufMirror, tufRoot                              string
	approve                                         approveFlags
}

// policyCmd is the policy subcommand. Most of its length is the help text
// describing each format, which reads best in one piece beside its flags.
func (a *app) policyCmd() *cobra.Command {
	g := a.command()
	var pf policyFlags
	c := &cobra.Command{
		Use:   "policy",
		Short: "Print admission policies that admit only the mirrored release's signed, digest-pinned images",
		Long: "policy" + verifiesHelp + ` Then it prints admission policies for the
target the release was mirrored to:

  vap                a ValidatingAdmissionPolicy and its binding (built into
                     Kubernetes): Pods and pod-template workloads in the
                     namespace are rejected unless every image is pinned by
                     digest, comes from a mirrored repository and is an image
                     (index or platform manifest) of an approved release;
                     the message names the container and image.
  policy-controller  sigstore policy-controller ClusterImagePolicies requiring
                     the release's signature and its SPDX SBOM attestation
                     (and a TrustRoot for a keyless trust policy).
  kyverno            a Kyverno ImageValidatingPolicy (Kyverno >= 1.17) with
                     the same rules: the CEL checks, and the signature, SBOM
                     and provenance attestations verified.
  kyverno-clusterpolicy
                     the same as a Kyverno ClusterPolicy, for Kyverno < 1.17.
  mutating           a MutatingAdmissionPolicy and its binding (Kubernetes
                     >= 1.36) that rewrite images naming the release by tag
                     or by its upstream reference to the mirror's digests;
                     apply it with vap. Not part of "all".

The approved releases are the one given and those you add with -f
(repeated) or --keep-previous N (the N newest older releases at the target,
each lock fetched and verified): any other digest in the mirrored
repositories, an old image still in the registry or anything pushed there
by digest, is denied with a message naming it. Each approved release is
held to the advisory and support rules (see reloader-mirror --help).
Identity regexps are written anchored (^(?:...)$), since policy-controller
and Kyverno match them anywhere in the identity.

Roll out with --mode audit first (violations are warned about and recorded,
nothing is rejected), then --mode enforce, and prove it with
reloader-mirror policy check. See docs/enforce.md.`,
		Example: `  # Print every policy for the namespace Reloader runs in
  reloader-mirror policy -f reloader-v1.2.3.tar.zst --key cosign.pub \
      --target harbor.corp.example/platform/reloader --namespace reloader

  # Audit first: write each dialect to its own file
  reloader-mirror policy --lock reloader-release.json --key cosign.pub \
      --target harbor.corp.example/platform/reloader --mode audit --output ./policies

  # Upgrading to v1.3.0: admit it and the release before it while pods roll
  reloader-mirror policy -f reloader-v1.3.0.tar.zst --key cosign.pub \
      --target harbor.corp.example/platform/reloader --keep-previous 1 --format vap

  # Keyless release, namespaces picked by a label, Kyverno only
  reloader-mirror policy -f reloader-v1.2.3.tar.zst \
      --certificate-identity https://github.com/reloader-dev/reloader/.github/workflows/release.yml@refs/tags/v1.2.3 \
      --certificate-oidc-issuer https://token.actions.githubusercontent.com \
      --target harbor.corp.example/platform/reloader \
      --namespace-selector reloader.dev/enforce=true --format kyverno`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			formats, err := admission.ParseFormat(pf.format)
			if err != nil {
				return cli.Usage(fmt.Errorf("--format: %w", err))
			}
			opts, err := pf.options()
			if err != nil {
				return err
			}
			if len(pf.approve.files) > 0 {
				g.archive = pf.approve.files[0]
			}
			return g.withRelease(cmd, func(cl *registry.Client, in *releaseInput) error {
				prep, m, err := g.verifiedRelease(cmd.Context(), cl, in)
				if err != nil {
					return err
				}
				if err := opts.FromLock(prep.Lock, m.Repository); err != nil {
					return err
				}
				if err := g.approveOthers(cmd.Context(), cl, in, prep.Lock, pf.approve, &opts); err != nil {
					return err
				}
				if opts.Trust, err = g.admissionTrust(in); err != nil {
					return err
				}
				out, err := admission.Generate(opts, formats)
				if err != nil {
					return err
				}
				return pf.write(g, formats, out)
			})
		},
	}
	// Its -f lists every release it approves and --output is a directory.
	g.releaseFlagsBut(c)
	g.targetFlags.register(c, true)
	pf.addFlags(c.Flags())
	c.AddCommand(a.policyCheckCmd())
	return c
}

func (pf *policyFlags) addFlags(f *pflag.FlagSet) {
	f.StringVar(&pf.format, "format", "all", "policies to write: vap, mutating, policy-controller, kyverno, kyverno-clusterpolicy or all (every one but mutating)")
	f.StringVar(&pf.outDir, "output", "", "write each format to DIR/<format>.yaml instead of standard output")
	f.StringVar(&pf.namespace, "namespace", "reloader", "namespace the policies apply to (where Reloader is installed)")
	f.StringVar(&pf.selector, "namespace-selector", "", "apply to the namespaces this label selector picks instead of --namespace, e.g. reloader.dev/enforce=true")
	f.StringVar(&pf.mode, "mode", "enforce", "enforce (reject) or audit (warn and record only)")
	f.StringVar(&pf.name, "name", "reloader-mirror", "prefix of the policies' object names")
	f.StringVar(&pf.tufMirror, "kyverno-tuf-mirror", "", "keyless, --format kyverno: URL of the TUF repository Kyverno starts its Sigstore client from (air-gapped sites); default the public one")
	f.StringVar(&pf.tufRoot, "kyverno-tuf-root", "", "the root.json of --kyverno-tuf-mirror")
	f.StringArrayVarP(&pf.approve.files, "file", "f", nil, "release archive to approve; repeat to approve several releases (the first is the one the policy is for)")
	f.IntVar(&pf.approve.keepPrevious, "keep-previous", 0, "also approve the N newest releases at --target older than this one (their locks fetched there and verified), for an upgrade's rollout window")
}

func (pf policyFlags) options() (admission.Options, error) {
	o := admission.Options{Name: pf.name, Mode: admission.Mode(pf.mode), Namespace: pf.namespace}
	if pf.selector != "" {
		sel, err := metav1.ParseToLabelSelector(pf.selector)
		if err != nil {
			return o, cli.Usage(fmt.Errorf("--namespace-selector %q: %w", pf.selector, err))
		}
		o.Namespace, o.NamespaceSelector = "", sel
	}
	if o.Mode != admission.Enforce && o.Mode != admission.Audit {
		return o, cli.Usage(fmt.Errorf("--mode %q: want enforce or audit", pf.mode))
	}
	if (pf.tufMirror == "") != (pf.tufRoot == "") {
		return o, cli.Usage(errors.New("--kyverno-tuf-mirror and --kyverno-tuf-root go together"))
	}
	if pf.tufRoot != "" {
		b, err := os.ReadFile(pf.tufRoot)
		if err != nil {
			return o, cli.Usage(fmt.Errorf("--kyverno-tuf-root: %w", err))
		}
		o.KyvernoTUF = admission.TUF{Mirror: pf.tufMirror, RootJSON: b}
	}
	return o, nil
}

// admissionTrust is the trust policy the user verified the release with, in
// the forms admission controllers take: the key's PEM, or the identity and
// the trusted root's JSON (the user's file, else the archive's copy).
func (g *command) admissionTrust(in *releaseInput) (admission.Trust, error) {
	t := admission.Trust{Identity: g.trust.Identity, IdentityRegexp: g.trust.IdentityRegexp, Issuer: g.trust.Issuer, IgnoreSCT: g.trust.IgnoreSCT, IgnoreTlog: g.trust.IgnoreTlog}
	var err error
	switch {
	case len(g.trust.Keys) > 1:
		// Admission controllers have no key windows: a rotated-out key
		// written into a cluster policy would be accepted there forever.
		return t, cli.Usage(errors.New("policy writes one key: admission policies cannot expire a key, so give only the key the cluster must accept " +
			"(during a rotation, write the policy with the new key once the mirrored releases are signed with it)"))
	case len(g.trust.Keys) == 1:
		k, err := cli.ParseKeySpec(g.trust.Keys[0])
		if err != nil {
			return t, cli.Usage(fmt.Errorf("--key: %w", err))
		}
		if !k.NotAfter.IsZero() {
			return t, cli.Usage(errors.New("policy cannot give a key a window (not-after): admission policies cannot expire a key"))
		}
		var b []byte
		if b, err = os.ReadFile(k.Path); err != nil {
			return t, cli.Usage(fmt.Errorf("reading public key %s: %w", k.Path, err))
		}
		t.PublicKeyPEM = string(b)
	case g.trust.TrustedRoot != "":
		if t.TrustedRootJSON, err = os.ReadFile(g.trust.TrustedRoot); err != nil {
			return t, cli.Usage(fmt.Errorf("reading trusted root %s: %w", g.trust.TrustedRoot, err))
		}
	case in.archive != nil && len(in.archive.TrustedRootJSON) > 0:
		t.TrustedRootJSON = in.archive.TrustedRootJSON
	default:
		return t, cli.Usage(errors.New("a keyless trust policy needs --trusted-root (or an archive that carries one) to write policies"))
	}
	return t, nil
}

func (pf policyFlags) write(g *command, formats []admission.Format, out map[admission.Format][]byte) error {
	if pf.outDir == "" {
		for i, f := range formats {
			if i > 0 {
				fmt.Fprintln(g.stdout, "---")
			}
			if _, err := g.stdout.Write(out[f]); err != nil {
				return fmt.Errorf("writing the %s policy: %w", f, err)
			}
		}
		return nil
	}
	if err := os.MkdirAll(pf.outDir, 0o755); err != nil {
		return fmt.Errorf("creating the output directory: %w", err)
	}
	for _, f := range formats {
		p := filepath.Join(pf.outDir, f.FileName())
		if err := os.WriteFile(p, out[f], 0o644); err != nil {
			return fmt.Errorf("writing the %s policy: %w", f, err)
		}
		fmt.Fprintf(g.stdout, "wrote %s\n", p)
	}
	return nil
}
