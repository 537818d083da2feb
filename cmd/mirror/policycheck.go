package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/mirror/policycheck"
	"github.com/reloader-dev/reloader/mirror/registry"
)

type policyCheckFlags struct {
	kubeconfig, context, namespace string
}

// policyCheckCmd is policy's check subcommand. Most of its length is the
// help text, which reads best in one piece beside its flags.
func (a *app) policyCheckCmd() *cobra.Command {
	g := a.command()
	var f policyCheckFlags
	c := &cobra.Command{
		Use:   "check",
		Short: "Prove on a live cluster that the admission policies admit the release and deny everything else",
		Long: `policy check asks the cluster, with your kubeconfig, to create one Pod per
case as a server-side dry run, which runs every admission policy and webhook
exactly as a real create does and persists nothing:

  - each image of the release, by digest from the mirror: must be admitted
  - the same repository by tag: must be denied
  - the same digest from the lock's source registry: must be denied
  - a digest in the mirrored repository that no approved release lists
    (what anyone with push rights could add): must be denied

It reports each verdict and the policy or webhook that gave it. It needs only
create on pods in --namespace (a namespace the policies cover); the probe
Pods meet the restricted Pod Security standard, so a denial is the image
policy's. The release is read and its lock verified as by every command.

Exit 0 when every verdict is as expected; 3 when any image that must be
denied is admitted (no policy, or a policy in audit mode) or the release is
denied (the install would fail); 1 when the check could not run (cluster
unreachable, namespace missing, no create permission).`,
		Example: `  # After applying the output of reloader-mirror policy
  reloader-mirror policy check -f reloader-v1.2.3.tar.zst --key cosign.pub \
      --target harbor.corp.example/platform/reloader --namespace reloader

  # For the change record: the verdicts as JSON, from the auditor's kubeconfig
  reloader-mirror policy check --lock reloader-release.json --key cosign.pub \
      --target harbor.corp.example/platform/reloader --kubeconfig auditor.kubeconfig -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.withRelease(cmd, func(_ *registry.Client, in *releaseInput) error {
				l, m, err := g.lockAndMapping(in)
				if err != nil {
					return err
				}
				cases, err := policycheck.Cases(l, m.Repository)
				if err != nil {
					return err
				}
				rules := clientcmd.NewDefaultClientConfigLoadingRules()
				rules.ExplicitPath = f.kubeconfig
				cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: f.context}).ClientConfig()
				if err != nil {
					return cli.Usage(fmt.Errorf("reading the kubeconfig: %w", err))
				}
				cfg.UserAgent = "reloader-mirror"
				rep, err := policycheck.Run(cmd.Context(), policycheck.Options{Config: cfg, Namespace: f.namespace}, cases)
				if err != nil {
					return err
				}
				if err := g.emit(rep, func(w io.Writer) { describeCheck(w, l.Version, rep) }); err != nil {
					return err
				}
				return rep.Err()
			})
		},
	}
	g.releaseFlags(c)
	g.targetFlags.register(c, true)
	c.Flags().StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)")
	c.Flags().StringVar(&f.context, "context", "", "kubeconfig context (default: the current context)")
	c.Flags().StringVar(&f.namespace, "namespace", "reloader", "namespace to probe: one the policies apply to")
	return c
}

func describeCheck(w io.Writer, version string, rep *policycheck.Report) {
	fmt.Fprintf(w, "Admission check of release %s in namespace %s (server-side dry run, nothing created):\n", version, rep.Namespace)
	for _, v := range rep.Verdicts {
		verdict, mark := "denied", "ok"
		if v.Admitted {
			verdict = "admitted"
		}
		if !v.OK {
			mark = "FAIL"
		}
		fmt.Fprintf(w, "  %-4s %-8s %s\n         %s\n", mark, verdict, v.Name, v.Image)
		switch {
		case !v.Admitted && v.By != "":
			fmt.Fprintf(w, "         by %s\n", v.By)
		case !v.Admitted:
			fmt.Fprintf(w, "         %s\n", v.Message)
		}
		for _, warn := range v.Warnings {
			fmt.Fprintf(w, "         warning: %s\n", warn)
		}
	}
	if rep.Holds {
		fmt.Fprintln(w, "The policies hold: the release is admitted and every other image is denied.")
	} else {
		fmt.Fprintln(w, "The policies do NOT hold (see FAIL above).")
	}
}
