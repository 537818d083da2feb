package main

import (
	"fmt"
	"io"
	"sort"

	"github.com/spf13/cobra"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/mirror"
	"github.com/reloader-dev/reloader/mirror/registry"
)

func (a *app) valuesCmd() *cobra.Command {
	g := a.command()
	var variant string
	var check bool
	c := &cobra.Command{
		Use:   "values",
		Short: "Print digest-pinned Helm values and the helm install command for the target",
		Long: "values" + verifiesHelp + ` Then it prints Helm values that pin
every image by digest at --target, and the helm install command for the
chart at --target by digest. --check-chart also reads the chart at the
target and confirms it honours image.digest.`,
		Example: `  reloader-mirror values --lock reloader-release.json --key cosign.pub \
      --target harbor.corp.example/platform/reloader > values.yaml
  reloader-mirror values -f reloader-v1.2.3.tar.zst --key cosign.pub --target harbor.corp.example/platform/reloader --variant ubi
  # FIPS 140-only: the controller built with Go's FIPS module, GODEBUG=fips140=only
  reloader-mirror values -f reloader-v1.2.3.tar.zst --key cosign.pub --target harbor.corp.example/platform/reloader --variant fips
  reloader-mirror values --lock-ref harbor.corp.example/platform/reloader/reloader-release:v1.2.3 --key cosign.pub \
      --target harbor.corp.example/platform/reloader --check-chart -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.withRelease(cmd, func(cl *registry.Client, in *releaseInput) error {
				prep, m, err := g.verifiedRelease(cmd.Context(), cl, in)
				if err != nil {
					return err
				}
				l := prep.Lock
				v, err := mirror.RenderValues(l, m)
				if err != nil {
					return err
				}
				if check {
					tsrc := &mirror.RegistrySource{Client: cl, Map: m.Repository, Name: g.target}
					gr, err := mirror.BuildGraph(cmd.Context(), l, tsrc)
					if err != nil {
						return fmt.Errorf("reading the release at the target: %w", err)
					}
					if err := mirror.CheckChart(cmd.Context(), l, gr, tsrc); err != nil {
						return err
					}
				}
				if _, ok := v.YAML[variant]; !ok {
					return cli.Usage(fmt.Errorf("--variant %q: the release has %v", variant, keys(v.YAML)))
				}
				return g.emit(v, func(w io.Writer) {
					fmt.Fprint(w, v.YAML[variant])
					fmt.Fprintf(w, "# install:\n# %s\n", v.Install[variant])
				})
			})
		},
	}
	g.releaseFlags(c)
	g.targetFlags.register(c, true)
	c.Flags().StringVar(&variant, "variant", "standard", "image variant for the text output: standard, ubi, fips or ubi-fips (json has them all)")
	c.Flags().BoolVar(&check, "check-chart", false, "read the chart at the target and confirm it honours image.digest")
	return c
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
