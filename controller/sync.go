package controller

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/reloader-dev/reloader/controller/alerts"
	"github.com/reloader-dev/reloader/controller/annotations"
	"github.com/reloader-dev/reloader/controller/hash"
	"github.com/reloader-dev/reloader/controller/metrics"
	"github.com/reloader-dev/reloader/controller/refs"
	"github.com/reloader-dev/reloader/controller/workload"
)

func hashConfigMap(o *corev1.ConfigMap) string { return hash.ConfigMap(o.Data, o.BinaryData) }
func hashSecret(o *corev1.Secret) string       { return hash.Secret(o.Data) }

// resource identifies a watched ConfigMap or Secret within a namespace; its
// string form "configmap/name" is the key in the applied-hashes record.
type resource struct {
	Kind refs.Kind
	Name string
}

func (r resource) String() string { return string(r.Kind) + "/" + r.Name }

// watched is what the sync knows of one resource the workload watches.
type watched struct {
	auto     bool   // watched through auto/search: the marker goes on a user
	optional bool   // every use is optional: absence is fine
	named    bool   // watched only through the reload list, not used by the pod spec
	hash     string // current hash; "" when the resource does not exist
	// resourceVersion, created and written place the current content in time
	// (firstsight.go).
	resourceVersion  string
	created, written time.Time
}

func watchedFrom(st state) watched {
	return watched{hash: st.hash, resourceVersion: st.resourceVersion, created: st.created, written: st.written}
}

// transition is why a watched resource's hash differs from the recorded one.
type transition int

const (
	changed transition = iota
	created
	deleted
)

type reload struct {
	res  resource
	w    watched
	kind transition
}

// sync makes one workload's applied state match its resources. It reads only
// caches; it writes only when something differs; it writes at most one
// request per workload kind's reload mechanism.
func (c *Controller) sync(ctx context.Context, key workload.Key) (result, error) {
	v, ok, err := c.getWorkload(key)
	if err == nil {
		if handled, err := c.syncJobRecords(ctx, key, v, ok); handled {
			return result{}, err
		}
	}
	if err != nil || !ok {
		return result{}, err
	}
	if !c.handlerDelivered(key, v) {
		// Enqueued by another event (a ConfigMap changed right after the
		// workload was created) before the workload's own Add ran: that Add
		// records the birth and enqueues the key again. Syncing now would
		// judge the first sight without the birth and adopt the change.
		c.o.Logger.Debug("sync deferred until the workload's Add is handled", "workload", key.String())
		return result{waiting: true}, nil
	}
	// Skips are counted where the original counts them: on the ConfigMap or
	// Secret event (configHandler), not per workload.
	if ok, _ := v.Reloadable(); !ok {
		return result{}, nil
	}
	if c.ignoredNamespace(key.Namespace) || !c.namespaceSelected(key.Namespace) {
		return result{adopted: true}, nil
	}
	w := annotations.Workload{Meta: v.Object.GetAnnotations(), Template: v.Template.Annotations}
	if !c.o.Names.Interested(w, c.o.AutoReloadAll) {
		// Annotated later, it is adopted, not judged against its creation.
		return result{adopted: true}, nil
	}

	if requeue, err := c.resumeIfPauseOver(ctx, v); err != nil || requeue > 0 {
		return result{requeueAfter: requeue}, err
	}

	record, recordText, hadRecord, problems := appliedRecord(v)
	// Recorded: the first sight is over.
	res := result{adopted: hadRecord}
	set, found := c.watchedSet(v, w, record)
	problems = append(problems, found...)
	sort.Strings(problems)

	pl := planChange(c.gatherPlanInput(v, w, set, record, hadRecord))
	reloads, skips := pl.reloads, pl.skips
	c.report(v, problems)

	nextText := encodeRecord(pl.next)
	if len(reloads) == 0 {
		if hadRecord && nextText == recordText {
			return res, nil
		}
		// Record the baseline (or a resource no longer watched) without
		// touching the template: this rolls nothing.
		ch := workload.Change{RecordKey: annotations.Applied, Record: nextText}
		if err := workload.Apply(ctx, c.cs, v, ch, c.writeOptions()); err != nil {
			return res, fmt.Errorf("recording applied hashes: %w", err)
		}
		c.reportSkips(v, skips)
		return res, nil
	}
	if wait := c.tooSoon(v); wait > 0 {
		// Storm control: the record is left as it is, so the deferred sync
		// still sees the difference and applies the latest state once.
		c.o.Metrics.Coalesced.Inc()
		res.requeueAfter = wait
		return res, nil
	}
	d, err := c.buildChange(v, reloads, skips, nextText)
	if err != nil {
		return res, err
	}
	res.reloaded, err = c.apply(ctx, v, d)
	return res, err
}

// LastReload is our annotation, on the workload's metadata, holding when the
// controller last rolled it: the durable clock of storm control.
const LastReload = "reloader.dev/last-reload"

// tooSoon returns how long a reload of v must wait under MinReloadInterval.
func (c *Controller) tooSoon(v workload.View) time.Duration {
	if c.o.MinReloadInterval <= 0 {
		return 0
	}
	last, err := time.Parse(time.RFC3339Nano, v.Object.GetAnnotations()[LastReload])
	if err != nil {
		return 0
	}
	return last.Add(c.o.MinReloadInterval).Sub(c.o.Now())
}

// watchedSet lists the resources the workload watches, with their current
// hashes, and the problems worth telling the user about.
func (c *Controller) watchedSet(v workload.View, w annotations.Workload, record map[string]string) (map[resource]watched, []string) {
	set := map[resource]watched{}
	var problems []string
	seenErr := map[string]bool{}
	addErrs := func(errs []error) {
		for _, e := range errs {
			if s := e.Error(); !seenErr[s] {
				seenErr[s] = true
				problems = append(problems, s)
			}
		}
	}
	ns := v.Object.GetNamespace()
	for _, r := range refs.Find(&v.Template.Spec) {
		if c.kindIgnored(r.Kind) {
			continue
		}
		st := c.lookup(r.Kind, ns, r.Name)
		ann := st.annotations
		if !st.exists && r.Kind != refs.SecretProviderClass {
			// A missing resource carries no annotations. Decide as if it
			// carried match, so a search workload watches it too: its
			// creation and deletion are then changes like any other, and once
			// it exists its real annotations decide.
			ann = map[string]string{c.o.Names.Match: "true"}
		}
		d := c.o.Names.Decide(w, annotations.Resource{Kind: r.Kind, Name: r.Name, Annotations: ann}, c.o.AutoReloadAll)
		addErrs(d.Errors)
		if !d.Reload {
			continue
		}
		wt := watchedFrom(st)
		wt.auto, wt.optional = d.Auto, r.Optional
		if !st.exists {
			wt.hash = ""
			if !r.Optional && c.o.ResourceSelector == "" && r.Kind != refs.SecretProviderClass {
				// A SecretProviderClass has no status until a pod mounts it.
				problems = append(problems, fmt.Sprintf("uses %s %q, which does not exist", kindTitle(r.Kind), r.Name))
			}
		}
		set[resource{r.Kind, r.Name}] = wt
	}
	for _, k := range []refs.Kind{refs.ConfigMap, refs.Secret, refs.SecretProviderClass} {
		if c.kindIgnored(k) || !c.o.Names.HasNamedReload(w, k) {
			continue
		}
		for _, obj := range c.configsIn(k, ns) {
			res := resource{k, obj.GetName()}
			if _, done := set[res]; done {
				continue
			}
			st := c.lookup(k, ns, res.Name)
			d := c.o.Names.Decide(w, annotations.Resource{Kind: k, Name: res.Name, Annotations: st.annotations}, c.o.AutoReloadAll)
			addErrs(d.Errors)
			// An unused resource can only be watched by name: auto and search
			// need a container that uses it.
			if d.Reload && !d.Auto {
				wt := watchedFrom(st)
				wt.named = true
				set[res] = wt
			}
		}
		if k == refs.SecretProviderClass {
			continue
		}
		// A resource the record holds that is gone and still named was
		// deleted: keep it in the set as missing, so its deletion is a change.
		for entry, h := range record {
			rk, name, ok := strings.Cut(entry, "/")
			if !ok || refs.Kind(rk) != k || name == "*" || h == "" {
				continue
			}
			res := resource{k, name}
			if _, done := set[res]; done {
				continue
			}
			if _, exists := c.config(k, ns, name); exists {
				continue // there, but no longer watched (ignored): not a deletion
			}
			d := c.o.Names.Decide(w, annotations.Resource{Kind: k, Name: name}, c.o.AutoReloadAll)
			if d.Reload && !d.Auto {
				set[res] = watched{named: true}
			}
		}
	}
	if s, ok := v.Object.GetAnnotations()[c.o.Names.PausePeriod]; ok && v.Kind == workload.Deployment {
		if _, err := parsePausePeriod(s); err != nil {
			problems = append(problems, fmt.Sprintf("annotation %s: %v", c.o.Names.PausePeriod, err))
		}
	}
	if s, ok := v.Object.GetAnnotations()[c.o.Names.RolloutStrategy]; ok && s != "rollout" && s != "restart" {
		problems = append(problems, fmt.Sprintf("annotation %s=%q: want \"rollout\" or \"restart\"", c.o.Names.RolloutStrategy, s))
	}
	return set, problems
}

// evidence reads what a reload marker in the template says was last applied
// for res: a STAKATER_* variable in any container, or the last-reloaded-from
// annotation naming res. Both strategies are read, so switching strategy or
// migrating from the original never rolls a workload that is up to date.
func (c *Controller) evidence(v workload.View, res resource) (string, bool) {
	name := EnvVarName(res.Kind, res.Name)
	for _, ctr := range v.Template.Spec.Containers {
		for _, e := range ctr.Env {
			if e.Name == name && e.ValueFrom == nil {
				return e.Value, true
			}
		}
	}
	if s, ok := v.Template.Annotations[c.o.Names.LastReloadedFrom]; ok {
		var src reloadSource
		if json.Unmarshal([]byte(s), &src) == nil && src.Name == res.Name && src.Namespace == v.Object.GetNamespace() && strings.EqualFold(src.Type, typeName(res.Kind)) {
			return src.Hash, true
		}
	}
	return "", false
}

// decision is the write one sync decided on: the change, the reloads it
// carries, and what is deliberately left out of it.
type decision struct {
	change  workload.Change
	applied []reload
	skips   []skip
	// noContainer counts reloads with no container to carry a marker.
	noContainer int
}

// buildChange turns the planned reloads (sorted) into one workload.Change:
// the reload markers of the strategy, the new record, storm control's clock
// and, for a Deployment with a pause period, the pause. It writes nothing.
func (c *Controller) buildChange(v workload.View, reloads []reload, skips []skip, nextText string) (decision, error) {
	d := decision{change: workload.Change{RecordKey: annotations.Applied, Record: nextText}, skips: skips}
	ch := &d.change
	spec := &v.Template.Spec
	if v.Kind == workload.Rollout && v.Object.GetAnnotations()[c.o.Names.RolloutStrategy] == "restart" {
		// Argo's restart strategy: restart the pods in place through
		// spec.restartAt, leaving the template (and its revision) alone.
		at := c.o.Now().UTC().Format(time.RFC3339)
		ch.RestartAt = &at
		d.applied = reloads
		reloads = nil
	}
	for _, r := range reloads {
		container, ok := refs.ContainerFor(spec, r.res.Kind, r.res.Name, r.w.auto)
		if !ok {
			d.noContainer++
			continue
		}
		name := EnvVarName(r.res.Kind, r.res.Name)
		if c.o.Strategy == EnvVars && r.kind == deleted && !hasEnv(spec, container, name) {
			// Nothing to remove: as in the original, the deletion of a
			// resource never reloaded for changes nothing.
			d.skips = append(d.skips, skip{r.res, skipNoVariable})
			continue
		}
		d.applied = append(d.applied, r)
		switch c.o.Strategy {
		case EnvVars:
			env := workload.EnvChange{Container: container, Name: name, Value: r.w.hash}
			if r.kind == deleted {
				env.Remove = true
			}
			ch.Env = append(ch.Env, env)
		case Annotations:
			h := r.w.hash
			if r.kind == deleted {
				h = hash.Empty()
			}
			src, err := json.Marshal(reloadSource{
				Type: typeName(r.res.Kind), Name: r.res.Name, Namespace: v.Object.GetNamespace(),
				Hash: h, ContainerRefs: []string{container}, ObservedAt: c.o.Now().Unix(),
			})
			if err != nil {
				return decision{}, fmt.Errorf("encoding %s: %w", c.o.Names.LastReloadedFrom, err)
			}
			// One annotation holds one source; the last one wins, as in the
			// original. The record keeps every hash.
			ch.TemplateAnnotations = map[string]string{c.o.Names.LastReloadedFrom: string(src)}
		}
	}
	if ch.Rollout() && c.o.MinReloadInterval > 0 {
		now := c.o.Now().UTC().Format(time.RFC3339Nano)
		setMeta(ch, LastReload, now)
	}
	if v.Kind == workload.Deployment && ch.Rollout() && !pausedByPerson(v, c.o.Names.PausedAt) {
		if s, ok := v.Object.GetAnnotations()[c.o.Names.PausePeriod]; ok {
			if _, err := parsePausePeriod(s); err == nil {
				paused := true
				ch.Paused = &paused
				setMeta(ch, c.o.Names.PausedAt, c.o.Now().UTC().Format(time.RFC3339))
			}
		}
	}
	return d, nil
}

func setMeta(ch *workload.Change, key, value string) {
	if ch.MetaAnnotations == nil {
		ch.MetaAnnotations = map[string]*string{}
	}
	ch.MetaAnnotations[key] = &value
}

// apply carries out a decided reload: to the webhook in --webhook-url mode,
// else to the workload; then records the outcome. It returns whether it
// rolled the workload (or sent its webhook).
func (c *Controller) apply(ctx context.Context, v workload.View, d decision) (bool, error) {
	for range d.noContainer {
		c.o.Metrics.RecordSkipped(metrics.SkipStrategyNotUpdated)
	}
	if c.o.Webhook != nil && d.change.Rollout() {
		if err := c.sendWebhook(ctx, v, d.applied, d.change.Record); err != nil {
			return false, err
		}
		c.reportSkips(v, d.skips)
		return true, nil
	}
	start := c.o.Now()
	err := workload.Apply(ctx, c.cs, v, d.change, c.writeOptions())
	if err := c.recordOutcome(v, d, start, err); err != nil {
		return false, err
	}
	return d.change.Rollout(), nil
}

// recordOutcome tells what a write did: metrics, the Event, the log line
// and the alert. A conflict or a vanished object is only returned: the retry
// decides again from fresh state.
func (c *Controller) recordOutcome(v workload.View, d decision, start time.Time, err error) error {
	key := v.Key()
	latency := time.Duration(0)
	if t := c.keys.read(key).enqueuedAt; !t.IsZero() {
		latency = c.o.Now().Sub(t)
	} else {
		latency = c.o.Now().Sub(start)
	}
	if err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return err
		}
		c.o.Metrics.RecordReload(false, key.Namespace)
		c.o.Metrics.RecordAction(string(v.Kind), "error", latency)
		c.o.Recorder.Eventf(eventObject(v), corev1.EventTypeWarning, ReasonReloadFail,
			msgReloadFailed, v.Kind, key.Name, key.Namespace, describe(d.applied), err)
		return err
	}
	c.reportSkips(v, d.skips)
	if !d.change.Rollout() {
		return nil
	}
	c.o.Metrics.WorkloadsMatched.WithLabelValues(string(v.Kind)).Inc()
	c.o.Metrics.RecordReload(true, key.Namespace)
	c.o.Metrics.RecordAction(string(v.Kind), "success", latency)
	msg := fmt.Sprintf(msgReloaded, describe(d.applied), key.Namespace, key.Name, v.Kind, key.Namespace)
	c.o.Recorder.Event(eventObject(v), corev1.EventTypeNormal, ReasonReloaded, msg)
	c.o.Logger.Info("reloaded", "workload", key.String(), "resources", describe(d.applied), "latency", latency.String())
	if c.o.Notify != nil {
		c.o.Notify(alertEvent(v, d.applied, c.o.Now()))
	}
	return nil
}

func hasEnv(spec *corev1.PodSpec, container, name string) bool {
	for _, ctr := range spec.Containers {
		if ctr.Name != container {
			continue
		}
		for _, e := range ctr.Env {
			if e.Name == name {
				return true
			}
		}
	}
	return false
}

// sendWebhook is --webhook-url mode: the change goes to the webhook instead
// of the workload. Only the record is written, after the webhook accepted
// it, so each change is sent until delivered and then never again.
func (c *Controller) sendWebhook(ctx context.Context, v workload.View, applied []reload, nextText string) error {
	if err := c.o.Webhook.Send(ctx, alertEvent(v, applied, c.o.Now())); err != nil {
		return fmt.Errorf("sending the webhook for %s: %w", v.Key(), err)
	}
	// The webhook has been delivered: record it whatever else changed on
	// the object meanwhile (no resourceVersion guard), or a conflict would
	// send it again.
	ch := workload.Change{RecordKey: annotations.Applied, Record: nextText, Unguarded: true}
	if err := workload.Apply(ctx, c.cs, v, ch, c.writeOptions()); err != nil {
		return fmt.Errorf("recording the applied hashes after the webhook: %w", err)
	}
	c.o.Logger.Info("sent webhook instead of reloading", "workload", v.Key().String(), "resources", describe(applied))
	return nil
}

func alertEvent(v workload.View, applied []reload, now time.Time) alerts.Event {
	key := v.Key()
	e := alerts.Event{Workload: alerts.Object{Kind: string(v.Kind), Namespace: key.Namespace, Name: key.Name}, Time: now}
	for _, r := range applied {
		e.Resources = append(e.Resources, alerts.Object{Kind: kindTitle(r.res.Kind), Namespace: key.Namespace, Name: r.res.Name})
	}
	return e
}

// resumeIfPauseOver resumes a Deployment this controller paused once its
// pause period has passed. The deadline lives on the object (paused-at +
// pause-period), so a restart or a failed resume is caught up on the next
// sync. It returns how long to wait when the pause is still running.
func (c *Controller) resumeIfPauseOver(ctx context.Context, v workload.View) (time.Duration, error) {
	d, ok := v.Object.(*appsv1.Deployment)
	if !ok {
		return 0, nil
	}
	at, paused := d.Annotations[c.o.Names.PausedAt]
	if !paused || !d.Spec.Paused {
		return 0, nil
	}
	period, err := parsePausePeriod(d.Annotations[c.o.Names.PausePeriod])
	start, terr := time.Parse(time.RFC3339, at)
	if err == nil && terr == nil {
		if remaining := start.Add(period).Sub(c.o.Now()); remaining > 0 {
			return remaining, nil
		}
	}
	// Period over, or no longer readable: never leave a Deployment paused.
	resume := false
	ch := workload.Change{Paused: &resume, MetaAnnotations: map[string]*string{c.o.Names.PausedAt: nil}}
	if err := workload.Apply(ctx, c.cs, v, ch, c.writeOptions()); err != nil {
		return 0, fmt.Errorf("resuming paused %s: %w", v.Key(), err)
	}
	c.o.Logger.Info("resumed after pause period", "workload", v.Key().String())
	return 0, nil
}

// pausedByPerson: the Deployment is paused and not by this controller (no
// paused-at annotation). Its pause is left alone, as the original does: the
// reload lands in the template and rolls out when that person resumes it.
func pausedByPerson(v workload.View, pausedAt string) bool {
	d, ok := v.Object.(*appsv1.Deployment)
	if !ok || !d.Spec.Paused {
		return false
	}
	_, ours := d.Annotations[pausedAt]
	return !ours
}

func parsePausePeriod(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration: %w", s, err)
	}
	if d <= 0 {
		return 0, fmt.Errorf("%q is not a positive duration", s)
	}
	return d, nil
}

// report turns problems into a ReloadFail Event and a metric, once per
// distinct set of problems per workload, so a bad annotation does not spam.
func (c *Controller) report(v workload.View, problems []string) {
	key := v.Key()
	text := strings.Join(problems, "; ")
	if !c.keys.onReported(key, text) || text == "" {
		return
	}
	c.o.Metrics.InvalidAnnotations.WithLabelValues(string(v.Kind)).Inc()
	c.o.Recorder.Eventf(eventObject(v), corev1.EventTypeWarning, ReasonReloadFail, msgProblems, v.Kind, key.Name, key.Namespace, text)
	c.o.Logger.Warn("workload configuration problem", "workload", key.String(), "problems", text)
}

// reloadSource is the original's last-reloaded-from JSON.
type reloadSource struct {
	Type          string   `json:"type"`
	Name          string   `json:"name"`
	Namespace     string   `json:"namespace"`
	Hash          string   `json:"hash"`
	ContainerRefs []string `json:"containerRefs"`
	ObservedAt    int64    `json:"observedAt"`
}

func typeName(k refs.Kind) string {
	switch k {
	case refs.Secret:
		return "SECRET"
	case refs.SecretProviderClass:
		return "SECRETPROVIDERCLASS"
	}
	return "CONFIGMAP"
}

func kindTitle(k refs.Kind) string {
	switch k {
	case refs.Secret:
		return "Secret"
	case refs.SecretProviderClass:
		return "SecretProviderClass"
	}
	return "ConfigMap"
}

func (c *Controller) writeOptions() workload.Options {
	return workload.Options{FieldManager: c.o.FieldManager, Dynamic: c.o.Dynamic}
}

// EnvVarName is the original's reload variable name:
// STAKATER_<NAME>_CONFIGMAP|SECRET, the name upper-cased with every run of
// other characters turned into one underscore.
func EnvVarName(kind refs.Kind, name string) string {
	var b strings.Builder
	b.WriteString("STAKATER_")
	upper := strings.ToUpper(name)
	lastValid := false
	for i := 0; i < len(upper); i++ {
		ch := upper[i]
		if (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') {
			b.WriteByte(ch)
			lastValid = true
		} else {
			if lastValid {
				b.WriteByte('_')
			}
			lastValid = false
		}
	}
	b.WriteByte('_')
	b.WriteString(typeName(kind))
	return b.String()
}

func describe(rs []reload) string {
	parts := make([]string, 0, len(rs))
	for _, r := range rs {
		parts = append(parts, fmt.Sprintf("'%s' of type '%s'", r.res.Name, typeName(r.res.Kind)))
	}
	return strings.Join(parts, ", ")
}

// encodeRecord is canonical (sorted keys, compact), so an unchanged state
// compares equal as text and causes no write.
func encodeRecord(m map[string]string) string {
	b, err := json.Marshal(m) // map keys are sorted by encoding/json
	if err != nil {
		return "{}"
	}
	return string(b)
}

// appliedRecord reads the applied-hashes record on v. An unreadable one is a
// problem to report and counts as no record: the current state is then taken
// as applied.
func appliedRecord(v workload.View) (record map[string]string, text string, had bool, problems []string) {
	text, had = v.Object.GetAnnotations()[annotations.Applied]
	record, err := parseRecord(text)
	if err != nil && had {
		problems = append(problems, fmt.Sprintf("annotation %s is unreadable (%v); taking the current state as applied", annotations.Applied, err))
		record, had = map[string]string{}, false
	}
	return record, text, had, problems
}

const maxRecordBytes = 256 << 10

func parseRecord(s string) (map[string]string, error) {
	m := map[string]string{}
	if s == "" {
		return m, nil
	}
	if len(s) > maxRecordBytes {
		return m, errors.New("too large")
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	if err := dec.Decode(&m); err != nil {
		return map[string]string{}, err
	}
	return m, nil
}
