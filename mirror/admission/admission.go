// Package admission turns a mirrored, verified release into admission
// policies that keep the cluster the way the user installed it: only images
// pinned by digest, only from the mirrored repositories, and (where the
// admission controller can check signatures) only images signed by the
// release's signer with its SPDX SBOM attested.
//
// It writes four dialects of the same rules: Kubernetes'
// ValidatingAdmissionPolicy (CEL, no extra software), a sigstore
// policy-controller ClusterImagePolicy, a Kyverno ImageValidatingPolicy
// (Kyverno >= 1.17) and a Kyverno ClusterPolicy (before 1.17); and a
// MutatingAdmissionPolicy that pins the release's images to the mirror. It is
// pure: the caller supplies the verified release's repositories at the target
// and the trust policy; nothing is read from disk or the network.
package admission

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/reloader-dev/reloader/release/trust"
)

// Format is one dialect of admission policy.
type Format string

// The formats Generate writes.
const (
	VAP              Format = "vap"
	PolicyController Format = "policy-controller"
	// Kyverno is the ImageValidatingPolicy (policies.kyverno.io/v1) of
	// Kyverno 1.17 and later.
	Kyverno Format = "kyverno"
	// KyvernoClusterPolicy is the kyverno.io/v1 ClusterPolicy, for Kyverno
	// before 1.17 (deprecated there, removal planned for 1.20).
	KyvernoClusterPolicy Format = "kyverno-clusterpolicy"
	// Mutating is the MutatingAdmissionPolicy that rewrites the release's
	// image references to the mirror's digests.
	Mutating Format = "mutating"
)

// Formats lists every validating format, in the order "all" writes them.
// Mutating is not among them: it changes what users apply, so it is
// written only when asked for by name.
var Formats = []Format{VAP, PolicyController, Kyverno, KyvernoClusterPolicy}

// ParseFormat reads a --format value; "all" is every format.
func ParseFormat(s string) ([]Format, error) {
	if s == "all" {
		return Formats, nil
	}
	for _, f := range append(Formats, Mutating) {
		if string(f) == s {
			return []Format{f}, nil
		}
	}
	return nil, fmt.Errorf("format %q: want vap, mutating, policy-controller, kyverno, kyverno-clusterpolicy or all", s)
}

// FileName is the file a format is written to under --output.
func (f Format) FileName() string { return string(f) + ".yaml" }

// Mode is what a policy does with a violation.
type Mode string

const (
	// Enforce rejects the request.
	Enforce Mode = "enforce"
	// Audit admits the request and records the violation (warnings to the
	// client, audit annotations, policy reports), for a rollout that first
	// shows what enforcement would break.
	Audit Mode = "audit"
)

// DefaultSBOMPredicateType is the in-toto predicate type of the release's
// SPDX SBOM attestations.
const DefaultSBOMPredicateType = "https://spdx.dev/Document"

// Options is what the policies are made from.
type Options struct {
	// Name prefixes every object's name; empty means "reloader-mirror".
	Name string
	// Version is the release version, recorded in an annotation.
	Version string
	// Repositories are the mirrored image repositories at the target,
	// without tag or digest (e.g. harbor.example/platform/reloader/reloader).
	Repositories []string
	// Digests are the image digests (indexes and platform manifests) of
	// the approved releases; an image of a mirrored repository with any
	// other digest is denied. Approve fills them from a verified lock.
	Digests []string
	// Approved are the approved releases' versions, for messages.
	Approved []string
	// NoTags: some approved release signs its images only with Sigstore
	// bundle referrers, no cosign .sig tags (publish --signature-format
	// bundle, and every keyless release). NoBundles: some only with .sig
	// tags (legacy). Approve sets them; a key-signed policy reads the form
	// every approved release carries, or is refused where an engine reads
	// neither (pcObjects, kyvernoVerifier).
	NoTags, NoBundles bool
	// Trust is whom the release's images must be signed by.
	Trust Trust
	// Namespace scopes the policies to one namespace (where Reloader runs).
	// Exactly one of Namespace and NamespaceSelector is set.
	Namespace string
	// NamespaceSelector scopes the policies to the namespaces it selects.
	NamespaceSelector *metav1.LabelSelector
	// Mode is Enforce or Audit; empty means Enforce.
	Mode Mode
	// SBOMPredicateType is the SBOM attestation required on every image;
	// empty means DefaultSBOMPredicateType.
	SBOMPredicateType string
	// ProvenancePredicateType, when set, is the build provenance
	// attestation the Kyverno policies require on every image too.
	ProvenancePredicateType string
	// Pins maps each reference that names the release without its
	// mirrored digest (an upstream tag or digest, the mirror's tag) to the
	// reference pinned at the mirror (repository@sha256:…), for the
	// mutating format. FromLock fills it.
	Pins map[string]string
	// KyvernoTUF is the TUF repository Kyverno's ImageValidatingPolicy
	// starts its Sigstore client from for a keyless release; empty means
	// Kyverno's default, the public Sigstore repository.
	KyvernoTUF TUF
}

// TUF is a TUF repository: where it is served and its root of trust.
type TUF struct {
	// Mirror is the repository's http(s) URL.
	Mirror string
	// RootJSON is its root.json.
	RootJSON []byte
}

// Trust is the release's trust policy: a public key, or a keyless identity
// with the trusted root that anchors its certificates.
type Trust struct {
	// PublicKeyPEM is the release's PEM public key (cosign.pub).
	PublicKeyPEM string
	// Identity or IdentityRegexp is the keyless certificate identity (SAN).
	Identity       string
	IdentityRegexp string
	// Issuer is the keyless certificate's OIDC issuer.
	Issuer string
	// TrustedRootJSON is the Sigstore trusted_root.json that anchors keyless
	// certificates (Fulcio CAs, Rekor and CT log keys, timestamp authorities).
	TrustedRootJSON []byte
	// IgnoreSCT accepts keyless certificates without a CT timestamp, as the
	// user's verification did.
	IgnoreSCT bool
	// IgnoreTlog accepts keyless signatures without a transparency log
	// entry, as the user's verification did (--insecure-ignore-tlog). A
	// trusted root that lists a timestamp authority and no log needs no
	// waiver: there, as in reloader-mirror verify, the authority's signed
	// timestamp is the time source and no log entry is looked for (see
	// timestampOnly). A root that lists a log keeps the entry required.
	IgnoreTlog bool
}

// logRequired reports whether the policies require a transparency-log
// entry: unless the user waived it, or the trusted root is timestamp-only.
func (t Trust) logRequired(tm *material) bool {
	return !t.IgnoreTlog && !tm.timestampOnly()
}

// anchoredRegexp is the identity regexp as every generated policy writes
// it: policy-controller and Kyverno match unanchored, so a bare pattern
// would accept any identity that contains it.
func (t Trust) anchoredRegexp() string { return trust.AnchorRegexp(t.IdentityRegexp) }

// Keyless reports whether the trust policy is a certificate identity.
func (t Trust) Keyless() bool { return t.PublicKeyPEM == "" }

// repositoryRE is what a repository reference without tag or digest looks
// like: lower-case path components, an optional host with a port. It also
// keeps the value safe to embed in CEL string literals and globs.
var repositoryRE = regexp.MustCompile(`^[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]+)?(/[a-z0-9]+([._-]+[a-z0-9]+)*)+$`)

func (o *Options) normalise() error {
	if o.Name == "" {
		o.Name = "reloader-mirror"
	}
	if errs := validation.IsDNS1123Subdomain(o.Name + "-trust-root"); len(errs) > 0 {
		return fmt.Errorf("policy name %q: %s", o.Name, strings.Join(errs, "; "))
	}
	if o.Mode == "" {
		o.Mode = Enforce
	}
	if o.Mode != Enforce && o.Mode != Audit {
		return fmt.Errorf("mode %q: want enforce or audit", o.Mode)
	}
	if o.SBOMPredicateType == "" {
		o.SBOMPredicateType = DefaultSBOMPredicateType
	}
	if len(o.Repositories) == 0 {
		return errors.New("no mirrored image repositories: nothing could be admitted")
	}
	seen := map[string]bool{}
	var repos []string
	for _, r := range o.Repositories {
		if !repositoryRE.MatchString(r) {
			return fmt.Errorf("mirrored repository %q is not a registry/path repository name without tag or digest", r)
		}
		if !seen[r] {
			seen[r] = true
			repos = append(repos, r)
		}
	}
	sort.Strings(repos)
	o.Repositories = repos
	if err := o.normaliseDigests(); err != nil {
		return err
	}
	if err := o.checkPins(); err != nil {
		return err
	}
	switch {
	case o.Namespace != "" && o.NamespaceSelector != nil:
		return errors.New("give a namespace or a namespace selector, not both")
	case o.Namespace == "" && o.NamespaceSelector == nil:
		return errors.New("no scope: give the namespace Reloader runs in, or a namespace selector")
	case o.Namespace != "":
		if errs := validation.IsDNS1123Label(o.Namespace); len(errs) > 0 {
			return fmt.Errorf("namespace %q: %s", o.Namespace, strings.Join(errs, "; "))
		}
	default:
		if _, err := metav1.LabelSelectorAsSelector(o.NamespaceSelector); err != nil {
			return fmt.Errorf("namespace selector: %w", err)
		}
		if len(o.NamespaceSelector.MatchLabels) == 0 && len(o.NamespaceSelector.MatchExpressions) == 0 {
			return errors.New("namespace selector is empty: it would select every namespace, kube-system included")
		}
	}
	return o.Trust.validate()
}

func (t Trust) validate() error {
	if t.PublicKeyPEM != "" {
		if t.Identity != "" || t.IdentityRegexp != "" {
			return errors.New("trust policy: give a public key or a certificate identity, not both")
		}
		if _, err := parsePublicKey(t.PublicKeyPEM); err != nil {
			return fmt.Errorf("trust policy: public key: %w", err)
		}
		return nil
	}
	if (t.Identity == "") == (t.IdentityRegexp == "") {
		return errors.New("trust policy: a keyless policy needs exactly one of a certificate identity or identity regexp")
	}
	if t.IdentityRegexp != "" {
		if _, err := regexp.Compile(t.IdentityRegexp); err != nil {
			return fmt.Errorf("trust policy: identity regexp: %w", err)
		}
	}
	if t.Issuer == "" {
		return errors.New("trust policy: a keyless identity needs its OIDC issuer")
	}
	if len(t.TrustedRootJSON) == 0 {
		return errors.New("trust policy: a keyless identity needs the trusted root (trusted_root.json) that anchors its certificates")
	}
	return nil
}

// Generate writes the policies of each format as a YAML stream of
// ready-to-apply objects.
func Generate(o Options, formats []Format) (map[Format][]byte, error) {
	if err := o.normalise(); err != nil {
		return nil, err
	}
	var tm *material
	if o.Trust.Keyless() {
		var err error
		if tm, err = parseTrustedRoot(o.Trust.TrustedRootJSON); err != nil {
			return nil, err
		}
		if len(tm.tlogs) == 0 && len(tm.tsas) == 0 {
			return nil, errors.New("trust policy: the trusted root lists neither a transparency log nor a timestamp authority, so nothing could time " +
				"the release's short-lived certificates and every image would be denied (reloader-mirror verify refuses such a release too); " +
				"give the root of the Sigstore that signed it")
		}
	}
	out := map[Format][]byte{}
	for _, f := range formats {
		var (
			head string
			objs []any
			err  error
		)
		switch f {
		case VAP:
			head = vapHeader(o)
			objs, err = vapObjects(o)
		case PolicyController:
			head = pcHeader(o)
			objs, err = pcObjects(o, tm)
		case Kyverno:
			head = ivpolHeader(o)
			objs, err = ivpolObjects(o, tm)
		case KyvernoClusterPolicy:
			head = kyvernoHeader(o)
			objs, err = kyvernoObjects(o, tm)
		case Mutating:
			head = mapHeader(o)
			objs, err = mapObjects(o)
		default:
			err = fmt.Errorf("unknown format %q", f)
		}
		if err != nil {
			return nil, fmt.Errorf("writing the %s policy: %w", f, err)
		}
		b, err := stream(head, objs)
		if err != nil {
			return nil, fmt.Errorf("encoding the %s policy: %w", f, err)
		}
		out[f] = b
	}
	return out, nil
}

func stream(head string, objs []any) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(head)
	for i, obj := range objs {
		if i > 0 {
			b.WriteString("---\n")
		}
		y, err := yaml.Marshal(obj)
		if err != nil {
			return nil, err
		}
		b.Write(y)
	}
	return b.Bytes(), nil
}

// comment renders lines as a YAML comment block.
func comment(lines ...string) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(strings.TrimRight("# "+l, " ") + "\n")
	}
	return b.String()
}

func (o Options) scopeText() string {
	if o.Namespace != "" {
		return "namespace " + o.Namespace
	}
	s, _ := metav1.LabelSelectorAsSelector(o.NamespaceSelector)
	return "namespaces selected by " + s.String()
}

func (o Options) annotations() map[string]string {
	a := map[string]string{"reloader.dev/generated-by": "reloader-mirror policy"}
	if o.Version != "" {
		a["reloader.dev/release"] = o.Version
	}
	return a
}

// workloadKinds are the kinds that carry a pod template, with the resource
// names admission matches on.
var workloadKinds = []struct{ group, kind, resource string }{
	{"", "Pod", "pods"},
	{"", "ReplicationController", "replicationcontrollers"},
	{"apps", "Deployment", "deployments"},
	{"apps", "ReplicaSet", "replicasets"},
	{"apps", "StatefulSet", "statefulsets"},
	{"apps", "DaemonSet", "daemonsets"},
	{"batch", "Job", "jobs"},
	{"batch", "CronJob", "cronjobs"},
}
