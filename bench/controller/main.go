// Command controller is the controller benchmark driver: it runs scenarios
// against any Reloader-compatible controller, given as a command line, on a
// real loopback control plane, and reports reload latency, burst time, memory
// at scale, time to the first reload at scale and apiserver requests per
// change, next to the figures of a minimal in-process "floor" controller.
//
//	go run ./bench/controller [-scale small] [-output json] [-controller '...']
//
// See README.md for the scenarios and flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// Config is one run of the driver.
type Config struct {
	Scale string `json:"scale"`
	// Controller is the command line of the controller under test, a
	// text/template with the placeholders of Placeholders.
	Controller string `json:"controller"`
	// ReadyURL is polled (templated like Controller) to report readiness;
	// empty skips it.
	ReadyURL string `json:"ready_url"`
	// MetricsURL is scraped (templated) for the go_memstats_* gauges, to
	// explain the RSS figure; empty or unanswered skips it.
	MetricsURL string `json:"metrics_url"`
	Output     string `json:"-"`

	Workloads int           `json:"workloads"`
	Changes   int           `json:"changes"`
	Interval  time.Duration `json:"interval_ns"`
	Burst     int           `json:"burst"`

	Namespaces     int `json:"scale_namespaces"`
	Secrets        int `json:"scale_secrets"`
	SecretBytes    int `json:"scale_secret_bytes"`
	ConfigMaps     int `json:"scale_configmaps"`
	ConfigMapBytes int `json:"scale_configmap_bytes"`
	CreateWorkers  int `json:"-"`

	// ScaleWorkloads are opted-in Deployments spread over the scale
	// namespaces, each using one scale ConfigMap: watched, never changed.
	ScaleWorkloads int `json:"scale_workloads"`
	// LargeSecrets of the Secrets are LargeBytes each instead of SecretBytes.
	LargeSecrets int `json:"scale_large_secrets"`
	LargeBytes   int `json:"scale_large_bytes"`
	// Churn is a background rate of unrelated updates per second (scale
	// ConfigMaps nobody uses), from before the first contestant starts to
	// the end of the run.
	Churn int `json:"churn_per_second"`
	// Reps is how many times each contestant runs; their order rotates
	// every repetition, so none is always first or last.
	Reps int `json:"repetitions"`
	// Peer, when set, is another Reloader-compatible controller run in the
	// same alternation (BENCH_PEER, a binary, rendered into PeerCommand).
	Peer           string `json:"peer,omitempty"`
	PeerCommand    string `json:"peer_command,omitempty"`
	PeerReadyURL   string `json:"peer_ready_url,omitempty"`
	PeerMetricsURL string `json:"peer_metrics_url,omitempty"`
	// KeysOnly adds a contestant: the controller's command line with
	// --reload-on-used-keys-only, judged against the same controller
	// without it (a quarter of the workloads read one key each).
	KeysOnly bool `json:"keys_only"`
	// DeclaredShare, when above 0, adds a contestant: the controller's
	// command line with --workload-kind for a CloneSet-shaped kind, whose
	// scenarios change that share of their workloads through workloads of
	// the kind; judged against the same controller without it.
	DeclaredShare float64 `json:"declared_share,omitempty"`
	// Targets are checked after the report is written; a miss fails the run.
	Targets []Target `json:"targets,omitempty"`

	Floor bool `json:"floor"`
	// FloorScope is what the floor watches: "namespace" (the scenarios'
	// one namespace, the least any controller can watch) or "cluster"
	// (every namespace, as a controller serving the whole cluster must,
	// ours and stakater's by default).
	FloorScope  string        `json:"floor_scope"`
	Idle        time.Duration `json:"idle_ns"`
	Settle      time.Duration `json:"settle_ns"`
	Timeout     time.Duration `json:"-"`
	HeapProfile string        `json:"-"`
	// APIServerProfile, when set, is a directory that receives the
	// apiserver's CPU profile over each burst (<tag>-burst.cpu).
	APIServerProfile string `json:"-"`
}

// DefaultController builds ./cmd/reloader ({{.Reloader}}) and points it at the
// control plane; nothing else is set so the controller's defaults are measured.
const DefaultController = "{{.Reloader}} --kubeconfig={{.Kubeconfig}} --metrics-addr={{.MetricsAddr}}"

// keysOnlyFlags turn per-key reloads on. The fingerprint key's Secret is
// named with its namespace: the controller runs with no namespace of its own.
const keysOnlyFlags = " --reload-on-used-keys-only --fingerprint-key-secret=kube-system/reloader-bench-fingerprint-key"

// The defaults run stakater/Reloader as the peer: it takes no --kubeconfig
// (it reads KUBECONFIG, which the driver sets) and serves metrics and its
// only health endpoint, /live, on :9090, a port it cannot be told to move.
// /live answers once its HTTP server is up, before its caches sync, so its
// "ready" is earlier than ours means.
const (
	DefaultPeerCommand    = "{{.Peer}}"
	DefaultPeerReadyURL   = "http://127.0.0.1:9090/live"
	DefaultPeerMetricsURL = "http://127.0.0.1:9090/metrics"
)

// presets are the named scales; "full" is the profile and the default
// of `make bench`, "small" is for quick runs, "tiny" is what the test runs.
var presets = map[string]Config{
	"full": {
		Workloads: 200, Changes: 100, Interval: 100 * time.Millisecond, Burst: 200,
		Namespaces: 50, Secrets: 5000, SecretBytes: 50 << 10, ConfigMaps: 2000, ConfigMapBytes: 1 << 10,
		Idle: 5 * time.Second, KeysOnly: true,
	},
	"small": {
		Workloads: 50, Changes: 30, Interval: 100 * time.Millisecond, Burst: 50,
		Namespaces: 5, Secrets: 200, SecretBytes: 50 << 10, ConfigMaps: 100, ConfigMapBytes: 1 << 10,
		Idle: 3 * time.Second,
	},
	// 10x: 2,000 workloads (200 measured in one namespace, 1,800 more over
	// 500 namespaces), 20,000 Secrets and ConfigMaps of 5 KiB of which 500
	// Secrets of 500 KiB, and 200 unrelated updates a second throughout.
	// Five repetitions: on 2 cores a burst here is bound by CPU shared with
	// the churn, and the floor alone moved 1.4x between three-repetition
	// runs, too much to judge a 1.2x target on.
	"10x": {
		Reps:      5,
		Workloads: 200, Changes: 100, Interval: 100 * time.Millisecond, Burst: 200,
		ScaleWorkloads: 1800,
		Namespaces:     500, Secrets: 10000, SecretBytes: 5 << 10, ConfigMaps: 10000, ConfigMapBytes: 5 << 10,
		LargeSecrets: 500, LargeBytes: 500 << 10, Churn: 200,
		Idle:     5 * time.Second,
		KeysOnly: true,
	},
	"tiny": {
		Workloads: 5, Changes: 5, Interval: 50 * time.Millisecond, Burst: 5,
		Namespaces: 2, Secrets: 10, SecretBytes: 1 << 10, ConfigMaps: 10, ConfigMapBytes: 256,
		Idle: time.Second,
	},
}

// Preset returns the named scale with the driver's common defaults.
func Preset(name string) (Config, error) {
	c, ok := presets[name]
	if !ok {
		return Config{}, fmt.Errorf("unknown scale %q (full, 10x, small or tiny)", name)
	}
	c.Scale = name
	c.Targets = targetPresets(name)
	c.Controller = DefaultController
	c.ReadyURL = "http://{{.MetricsAddr}}/readyz"
	c.MetricsURL = "http://{{.MetricsAddr}}/metrics"
	c.Output = "table"
	c.CreateWorkers = 32
	c.Floor = true
	c.FloorScope = floorNamespace
	if c.Reps == 0 {
		c.Reps = 3
	}
	c.PeerCommand, c.PeerReadyURL, c.PeerMetricsURL = DefaultPeerCommand, DefaultPeerReadyURL, DefaultPeerMetricsURL
	c.Settle = 2 * time.Second
	c.Timeout = 30 * time.Minute
	return c, nil
}

func main() {
	cfg, err := parseFlags(os.Args[1:])
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "bench/controller:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()

	rep, err := Run(ctx, cfg, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench/controller:", err)
		os.Exit(1)
	}
	if err := rep.Write(os.Stdout, cfg.Output); err != nil {
		fmt.Fprintln(os.Stderr, "bench/controller: writing the report:", err)
		os.Exit(1)
	}
	if misses := rep.TargetMisses(); len(misses) > 0 {
		for _, m := range misses {
			fmt.Fprintln(os.Stderr, "bench/controller: target missed:", m)
		}
		os.Exit(3)
	}
}

// parseFlags applies the -scale preset first, then every flag given
// explicitly, so "-scale small -secrets 1000" means what it says.
func parseFlags(args []string) (Config, error) {
	fs := flag.NewFlagSet("bench/controller", flag.ContinueOnError)
	scale := fs.String("scale", "full", "preset: full (the issue's profile), 10x (2,000 workloads, 20,000 objects, churn; targets checked), small (quick) or tiny")
	var c Config
	fs.StringVar(&c.Controller, "controller", DefaultController, "controller command line (text/template; placeholders {{.Reloader}} {{.Kubeconfig}} {{.MetricsAddr}} {{.PprofAddr}} {{.Namespaces}}); split on spaces, no quoting")
	fs.StringVar(&c.ReadyURL, "ready-url", "http://{{.MetricsAddr}}/readyz", "readiness URL of the controller (templated); empty: none")
	fs.StringVar(&c.MetricsURL, "metrics-url", "http://{{.MetricsAddr}}/metrics", "Prometheus endpoint of the controller (templated), read for go_memstats_*; empty: none")
	fs.StringVar(&c.Output, "output", "table", "table or json")
	fs.IntVar(&c.Workloads, "workloads", 0, "Deployments, each using its own ConfigMap")
	fs.IntVar(&c.Changes, "changes", 0, "ConfigMap changes in the latency scenario")
	fs.DurationVar(&c.Interval, "interval", 0, "spacing of the latency scenario's changes")
	fs.IntVar(&c.Burst, "burst", 0, "ConfigMaps updated at once in the burst scenario (<= workloads)")
	fs.IntVar(&c.Namespaces, "namespaces", 0, "namespaces of the scale data set")
	fs.IntVar(&c.Secrets, "secrets", 0, "Secrets of the scale data set")
	fs.IntVar(&c.SecretBytes, "secret-bytes", 0, "size of each Secret")
	fs.IntVar(&c.ConfigMaps, "configmaps", 0, "ConfigMaps of the scale data set")
	fs.IntVar(&c.ConfigMapBytes, "configmap-bytes", 0, "size of each ConfigMap")
	fs.IntVar(&c.CreateWorkers, "create-workers", 0, "parallel creates while loading the data set")
	fs.BoolVar(&c.Floor, "floor", true, "also run the in-process floor controller")
	fs.BoolVar(&c.KeysOnly, "keys-only", false, "also run -controller with"+keysOnlyFlags+" (on in the full and 10x presets)")
	fs.Float64Var(&c.DeclaredShare, "declared-share", 0, "also run -controller with --workload-kind for a CloneSet-shaped kind, that share (0-1) of the changed workloads of the kind (e.g. 0.1)")
	fs.StringVar(&c.FloorScope, "floor-scope", floorNamespace, "what the floor watches: namespace (the scenarios' namespace) or cluster (every namespace, as a cluster-wide controller must)")
	fs.IntVar(&c.Reps, "reps", 3, "repetitions of each contestant, in rotating order")
	fs.StringVar(&c.PeerCommand, "peer-controller", DefaultPeerCommand, "command line of the BENCH_PEER controller (text/template; {{.Peer}} is $BENCH_PEER, other placeholders as -controller)")
	fs.StringVar(&c.PeerReadyURL, "peer-ready-url", DefaultPeerReadyURL, "readiness URL of the peer (templated); empty: none")
	fs.StringVar(&c.PeerMetricsURL, "peer-metrics-url", DefaultPeerMetricsURL, "Prometheus endpoint of the peer (templated); empty: none")
	fs.IntVar(&c.Churn, "churn", 0, "background unrelated updates per second")
	fs.IntVar(&c.ScaleWorkloads, "scale-workloads", 0, "opted-in Deployments over the scale namespaces, not changed by the scenarios")
	fs.DurationVar(&c.Idle, "idle", 0, "idle time before sampling the controller's RSS")
	fs.DurationVar(&c.Settle, "settle", 0, "wait after a scenario before counting requests (late Events)")
	fs.DurationVar(&c.Timeout, "timeout", 0, "overall deadline")
	fs.StringVar(&c.HeapProfile, "heap-profile", "", "write the controller's heap profile here after the RSS sample (needs {{.PprofAddr}} in -controller)")
	fs.StringVar(&c.APIServerProfile, "apiserver-profile", "", "directory for the apiserver's CPU profile over each burst, <contestant>-r<N>-burst.cpu (runs the apiserver with --profiling)")
	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	if fs.NArg() > 0 {
		return Config{}, fmt.Errorf("unexpected arguments %v", fs.Args())
	}
	out, err := Preset(*scale)
	if err != nil {
		return Config{}, err
	}
	fs.Visit(func(f *flag.Flag) { override(&out, &c, f.Name) })
	out.Peer = os.Getenv("BENCH_PEER")
	return out, out.validate()
}

// override copies the explicitly set flag name from set into out.
func override(out, set *Config, name string) {
	switch name {
	case "controller":
		out.Controller = set.Controller
	case "ready-url":
		out.ReadyURL = set.ReadyURL
	case "metrics-url":
		out.MetricsURL = set.MetricsURL
	case "output":
		out.Output = set.Output
	case "workloads":
		out.Workloads = set.Workloads
	case "changes":
		out.Changes = set.Changes
	case "interval":
		out.Interval = set.Interval
	case "burst":
		out.Burst = set.Burst
	case "namespaces":
		out.Namespaces = set.Namespaces
	case "secrets":
		out.Secrets = set.Secrets
	case "secret-bytes":
		out.SecretBytes = set.SecretBytes
	case "configmaps":
		out.ConfigMaps = set.ConfigMaps
	case "configmap-bytes":
		out.ConfigMapBytes = set.ConfigMapBytes
	case "create-workers":
		out.CreateWorkers = set.CreateWorkers
	case "floor":
		out.Floor = set.Floor
	case "keys-only":
		out.KeysOnly = set.KeysOnly
	case "declared-share":
		out.DeclaredShare = set.DeclaredShare
	case "floor-scope":
		out.FloorScope = set.FloorScope
	case "reps":
		out.Reps = set.Reps
	case "peer-controller":
		out.PeerCommand = set.PeerCommand
	case "peer-ready-url":
		out.PeerReadyURL = set.PeerReadyURL
	case "peer-metrics-url":
		out.PeerMetricsURL = set.PeerMetricsURL
	case "churn":
		out.Churn = set.Churn
	case "scale-workloads":
		out.ScaleWorkloads = set.ScaleWorkloads
	case "idle":
		out.Idle = set.Idle
	case "settle":
		out.Settle = set.Settle
	case "timeout":
		out.Timeout = set.Timeout
	case "heap-profile":
		out.HeapProfile = set.HeapProfile
	case "apiserver-profile":
		out.APIServerProfile = set.APIServerProfile
	}
}

func (c Config) validate() error {
	switch {
	case c.Workloads < 1 || c.Changes < 1 || c.Burst < 1:
		return errors.New("-workloads, -changes and -burst must be positive")
	case c.Burst > c.Workloads:
		return fmt.Errorf("-burst %d exceeds -workloads %d: each burst change needs its own workload", c.Burst, c.Workloads)
	case c.Namespaces < 1 || c.Secrets < 1:
		return errors.New("-namespaces and -secrets must be positive")
	case c.Reps < 1:
		return errors.New("-reps must be positive")
	case c.DeclaredShare < 0 || c.DeclaredShare > 1:
		return fmt.Errorf("-declared-share %v: want a share between 0 and 1", c.DeclaredShare)
	case c.DeclaredShare > 0 && declaredCount(c.DeclaredShare, c.Workloads) == 0:
		return fmt.Errorf("-declared-share %v of %d workloads is none", c.DeclaredShare, c.Workloads)
	case c.ScaleWorkloads > c.ConfigMaps:
		return fmt.Errorf("-scale-workloads %d exceeds -configmaps %d: each uses its own ConfigMap", c.ScaleWorkloads, c.ConfigMaps)
	case c.Churn > 0 && c.ConfigMaps <= c.ScaleWorkloads:
		return errors.New("-churn needs ConfigMaps no scale workload uses")
	case c.FloorScope != floorNamespace && c.FloorScope != floorCluster:
		return fmt.Errorf("-floor-scope %q: want %s or %s", c.FloorScope, floorNamespace, floorCluster)
	case c.Output != "table" && c.Output != "json":
		return fmt.Errorf("-output %q: want table or json", c.Output)
	}
	return nil
}

// logf writes progress to w, timestamped, so a long run shows where it is.
func logf(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05.000")}, args...)...)
}
