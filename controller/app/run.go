package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"github.com/reloader-dev/reloader/controller"
	"github.com/reloader-dev/reloader/controller/alerts"
	"github.com/reloader-dev/reloader/controller/buildinfo"
	"github.com/reloader-dev/reloader/controller/cache"
	"github.com/reloader-dev/reloader/controller/metainfo"
	"github.com/reloader-dev/reloader/controller/metrics"
)

// NewCommand is the reloader command.
func NewCommand() *cobra.Command {
	o := DefaultOptions()
	cmd := &cobra.Command{
		Use:   "reloader",
		Short: "Roll workloads when the ConfigMaps and Secrets they use change",
		Long: `reloader watches ConfigMaps and Secrets and rolls the Deployments, StatefulSets,
DaemonSets, CronJobs and Jobs that use them. It is a drop-in replacement for
stakater/Reloader: the same annotations, flags, strategies and metrics.

It is level-triggered: what was last applied to each workload is recorded on the
workload itself (annotation reloader.dev/applied-hashes), so a restart never rolls
a healthy workload and never misses a change made while the controller was down.`,
		Example: `  # Everything, cluster-wide, in-cluster credentials:
  reloader

  # Only two namespaces, with namespaced permissions, JSON logs:
  reloader --namespaces=team-a,team-b --log-format=json

  # Pod template annotations instead of STAKATER_* variables, reload on delete:
  reloader --reload-strategy=annotations --reload-on-delete=true

  # Opt a Deployment in (on the workload):
  kubectl annotate deployment/web reloader.stakater.com/auto=true`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       versionLine(buildinfo.Get()),
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := o.Resolve(os.Getenv)
			if err != nil {
				return err
			}
			return Run(cmd.Context(), o, r)
		},
	}
	o.AddFlags(cmd.Flags())
	cmd.AddCommand(newExplainCommand("reloader"))
	return cmd
}

// Run runs the controller until ctx ends or leadership is lost. It stays
// whole (clients, metrics, recorder, controller, endpoints, caches, then
// workers or the election) because each step needs the one before it.
func Run(ctx context.Context, o *Options, r *Resolved) error {
	log := r.Logger
	klog.SetSlogLogger(log)
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	// Before the first client exists, so every request is counted.
	metrics.NewClientGo(reg).Install()
	cl, err := newClients(o, r)
	if err != nil {
		return err
	}
	cs := cl.typed
	co := r.Controller
	co.Dynamic, co.WatchClient = cl.dynamic, cl.watch
	if err := detectAPIs(cs, &co, o.IsOpenShift == ""); err != nil {
		return err
	}
	// Before the caches start: their transform digests every key.
	if co.KeyDigests, err = fingerprintKey(ctx, o, r, cs); err != nil {
		return err
	}

	m := metrics.New(reg, metrics.Options{CountByNamespace: r.CountByNamespace})

	if err := startAlerts(ctx, r, reg, &co); err != nil {
		return err
	}

	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	defer broadcaster.Shutdown()
	co.Metrics = m
	fence, err := haLock(o, r, cs)
	if err != nil {
		return err
	}
	if fence != nil {
		co.Fence = fence.check
	}
	co.Recorder = broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "reloader"})
	// The caches are built here and handed in, as sample-controller's main
	// does: the controller adds its handlers, Start runs them.
	caches, err := cache.New(cs, co.CacheOptions())
	if err != nil {
		return fmt.Errorf("building the caches: %w", err)
	}
	c, err := controller.New(cs, caches, co)
	if err != nil {
		return err
	}
	broadcaster.StartRecordingToSink(c.EventSink(ctx, &typedcorev1.EventSinkImpl{Interface: cs.CoreV1().Events("")}))

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var leading atomic.Bool
	health := &healthState{controller: c, ha: o.EnableHA, leading: &leading}
	stop, err := serveEndpoints(ctx, o, metricsMux(reg, health))
	if err != nil {
		return err
	}
	defer stop()
	log.Info("starting reloader", "version", buildinfo.Get().Version, "fips140", buildinfo.Get().FIPS140, "hash", co.Hash, "namespaces", co.Namespaces,
		"strategy", co.Strategy, "ha", o.EnableHA, "metrics", o.MetricsAddr)

	// The GC target is 50 (the heap may grow to 1.5x the live set, not 2x)
	// from the start: the initial lists stream every ConfigMap and Secret
	// through the process, and at that point the heap's growth, not the
	// live set, sets the peak. At the 10x bench tier the peak RSS was 115
	// MiB with the default target during the lists and 87 MiB with 50. An
	// explicit GOGC from the environment wins.
	if !r.GOGCSet {
		debug.SetGCPercent(50)
	}
	if err := c.Start(ctx); err != nil {
		return err
	}
	// The data of the initial lists is hashed and dropped, but the heap
	// that held it would otherwise stay mapped: hand it back now, once.
	debug.FreeOSMemory()
	// Only the replica that leads writes anything, the metadata included.
	if !o.EnableHA {
		leading.Store(true)
		publishMetaInfo(ctx, o, r, cs)
		c.RunWorkers(ctx)
		return ignoreCanceled(ctx)
	}
	runElected(ctx, o, r, fence, func(ctx context.Context) {
		leading.Store(true)
		publishMetaInfo(ctx, o, r, cs)
		c.RunWorkers(ctx)
	}, func() {
		if leading.Load() {
			leading.Store(false)
			// Exiting is the safe answer: a fresh start rebuilds every
			// cache and competes again, and no half-run worker remains.
			cancel(errors.New("leadership lost"))
		}
	})
	return ignoreCanceled(ctx)
}

// publishMetaInfo publishes reloader-meta-info in RELOADER_NAMESPACE.
func publishMetaInfo(ctx context.Context, o *Options, r *Resolved, cs kubernetes.Interface) {
	if r.MetaNamespace == "" {
		r.Logger.Info("RELOADER_NAMESPACE is not set; not publishing reloader-meta-info")
		return
	}
	info := metainfo.Info{Namespace: r.MetaNamespace, DeploymentName: r.DeploymentName, Options: o.effective(r)}
	if err := metainfo.Publish(ctx, cs, info); err != nil {
		// Operational metadata only: worth a warning, not an outage.
		r.Logger.Warn("publishing reloader-meta-info", "error", err)
	}
}

// startAlerts starts the alert sender when alerts are on and has co notify
// it. ctx is passed to the sender, not captured: Run reassigns its own ctx
// while the sender runs.
func startAlerts(ctx context.Context, r *Resolved, reg prometheus.Registerer, co *controller.Options) error {
	ao := r.Alerts
	if !r.AlertsOn {
		return nil
	}
	ao.Registerer, ao.Logger = reg, r.Logger
	n, err := alerts.New(ao)
	if err != nil {
		return fmt.Errorf("configuring alerts: %w", err)
	}
	go func() { _ = n.Run(ctx) }()
	co.Notify = n.Notify
	r.Logger.Info("alerts on", "sink", ao.Sink, "webhook", ao.Redacted().URL)
	return nil
}

// serveEndpoints serves metrics (and pprof when asked); stop shuts them down.
func serveEndpoints(ctx context.Context, o *Options, metricsHandler http.Handler) (stop func(), err error) {
	srv, err := serve(ctx, o.MetricsAddr, metricsHandler)
	if err != nil {
		return nil, err
	}
	if !o.EnablePProf {
		return func() { shutdown(srv) }, nil
	}
	psrv, err := serve(ctx, o.PProfAddr, pprofMux())
	if err != nil {
		shutdown(srv)
		return nil, err
	}
	return func() { shutdown(psrv); shutdown(srv) }, nil
}

// clients are the controller's API clients.
type clients struct {
	typed kubernetes.Interface
	// watch carries the cluster-wide watches over HTTP/1.1, a connection
	// each. Their initial lists stream every Secret, ConfigMap and workload
	// of the cluster; on the shared HTTP/2 connection the client buffers up
	// to 4 MiB per stream in the process (x/net/http2's default window,
	// which client-go does not expose) whenever decoding lags the
	// apiserver. On its own connection the kernel's socket buffer holds it
	// and TCP paces the apiserver: peak RSS at the bench's 10x tier went
	// from 89 to 78 MiB, ready as fast. Namespaced scopes stay on HTTP/2:
	// there can be many of them, each small.
	watch   kubernetes.Interface
	dynamic dynamic.Interface
}

// newClients builds the typed and dynamic clients from the flags.
func newClients(o *Options, r *Resolved) (clients, error) {
	cfg, err := restConfig(o.Kubeconfig, r.KubeconfigEnv)
	if err != nil {
		return clients{}, err
	}
	cfg.QPS, cfg.Burst = o.QPS, o.Burst
	// Secrets are mostly random bytes: gzip costs CPU on both sides of the
	// initial list and saves little.
	cfg.DisableCompression = true
	// Protobuf halves decoding work for the built-in kinds; custom kinds
	// (dynamic client) stay JSON through their own config.
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.UserAgent = "reloader/" + buildinfo.Get().Version
	var cl clients
	if cl.typed, err = kubernetes.NewForConfig(cfg); err != nil {
		return clients{}, fmt.Errorf("building the Kubernetes client: %w", err)
	}

	watchCfg := rest.CopyConfig(cfg)
	watchCfg.NextProtos = []string{"http/1.1"}
	// HTTP/2 pings find a dead connection in 45 s; TCP keepalive probes
	// must do it here, within 30 s, or a watch could miss changes for
	// minutes.
	watchCfg.Dial = (&net.Dialer{
		Timeout:         30 * time.Second,
		KeepAliveConfig: net.KeepAliveConfig{Enable: true, Idle: 15 * time.Second, Interval: 5 * time.Second, Count: 3},
	}).DialContext
	if cl.watch, err = kubernetes.NewForConfig(watchCfg); err != nil {
		return clients{}, fmt.Errorf("building the Kubernetes client of the cluster-wide watches: %w", err)
	}

	dynCfg := rest.CopyConfig(cfg)
	dynCfg.ContentType = "application/json"
	if cl.dynamic, err = dynamic.NewForConfig(dynCfg); err != nil {
		return clients{}, fmt.Errorf("building the dynamic client: %w", err)
	}
	return cl, nil
}

// runElected runs lead while this replica holds the lease (taken and
// renewed through lock, which fences the controller's writes), and calls lost
// when it stops leading, until ctx ends.
func runElected(ctx context.Context, o *Options, r *Resolved, lock resourcelock.Interface, lead func(context.Context), lost func()) {
	log := r.Logger
	leaderelection.RunOrDie(ctx, leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   o.HALeaseDuration,
		RenewDeadline:   o.HARenewDeadline,
		RetryPeriod:     o.HARetryPeriod,
		ReleaseOnCancel: true,
		Name:            o.HALockName,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				log.Info("became leader", "lease", r.PodNS+"/"+o.HALockName, "identity", r.PodName)
				lead(ctx)
			},
			OnStoppedLeading: lost,
			OnNewLeader: func(identity string) {
				if identity != r.PodName {
					log.Info("following leader", "leader", identity)
				}
			},
		},
	})
}

func ignoreCanceled(ctx context.Context) error {
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return cause
	}
	return nil
}

func restConfig(kubeconfig, kubeconfigEnv string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if kubeconfig != "" {
		rules.ExplicitPath = kubeconfig
	}
	if kubeconfig == "" && kubeconfigEnv == "" {
		if cfg, err := rest.InClusterConfig(); err == nil {
			return cfg, nil
		}
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading Kubernetes client configuration (--kubeconfig, $KUBECONFIG, in-cluster): %w", err)
	}
	return cfg, nil
}

// healthState answers the probes.
type healthState struct {
	controller *controller.Controller
	ha         bool
	leading    *atomic.Bool
}

func metricsMux(reg *prometheus.Registry, h *healthState) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	mux.HandleFunc("/live", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !h.controller.Ready() {
			http.Error(w, "caches not synced\n", http.StatusServiceUnavailable)
			return
		}
		role := "leader"
		if h.ha && !h.leading.Load() {
			// A warm standby is ready to take over; it says which it is.
			role = "standby"
		}
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("ok " + role + "\n"))
	})
	return mux
}

func pprofMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

func serve(ctx context.Context, addr string, h http.Handler) (*http.Server, error) {
	l, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", addr, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	return srv, nil
}

func shutdown(srv *http.Server) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(ctx)
}

// versionLine is what --version prints after the name: the version, and
// the FIPS 140 mode when the binary runs Go's FIPS module, so an auditor can
// check the mode of the binary the image runs.
func versionLine(i buildinfo.Info) string {
	if i.FIPS140 == "off" {
		return i.Version
	}
	return i.Version + " (fips140=" + i.FIPS140 + ")"
}
