package admission_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"strings"
	"testing"

	"github.com/sigstore/sigstore-go/pkg/testing/ca"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/reloader-dev/reloader/mirror/admission"
	"github.com/reloader-dev/reloader/publish/releasetest"
)

const (
	repo    = "harbor.corp.example/platform/reloader/reloader"
	repoUBI = "harbor.corp.example/platform/reloader/reloader-ubi"
)

func keyPEM(t testing.TB) string {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	b, err := cryptoutils.MarshalPublicKeyToPEM(k.Public())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// trustedRootJSON is the trusted_root.json of a fresh VirtualSigstore: a
// Fulcio CA, a Rekor log, a CT log and a timestamp authority.
func trustedRootJSON(t testing.TB) []byte {
	t.Helper()
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	b, err := releasetest.Signer{Sigstore: vs}.TrustedRootJSON()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// testDigest stands for an approved release's image.
const testDigest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func keyOptions(t testing.TB) admission.Options {
	return admission.Options{Version: "v1.2.3", Repositories: []string{repoUBI, repo, repo}, Digests: []string{testDigest}, Namespace: "reloader", Trust: admission.Trust{PublicKeyPEM: keyPEM(t)}}
}

// objects decodes a generated YAML stream.
func objects(t *testing.T, b []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, doc := range strings.Split(string(b), "\n---\n") {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatalf("decoding %q: %v", doc, err)
		}
		out = append(out, m)
	}
	return out
}

func kinds(objs []map[string]any) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o["kind"].(string))
	}
	return out
}

func TestGenerateWritesEachFormatsObjects(t *testing.T) {
	t.Parallel()
	keyless := admission.Options{Repositories: []string{repo}, Digests: []string{testDigest}, NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"reloader.dev/enforce": "true"}},
		Trust: admission.Trust{Identity: "https://github.com/reloader-dev/reloader/.github/workflows/release.yml@refs/tags/v1.2.3", Issuer: "https://token.actions.githubusercontent.com", TrustedRootJSON: trustedRootJSON(t)}}
	for _, tc := range []struct {
		name   string
		opts   admission.Options
		format admission.Format
		want   []string
		has    []string
	}{
		{"vap", keyOptions(t), admission.VAP, []string{"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"},
			[]string{"validationActions:\n  - Deny", "kubernetes.io/metadata.name", `["` + repo + `", "` + repoUBI + `"]`, "pods/ephemeralcontainers", "cronjobs"}},
		{"policy-controller key", keyOptions(t), admission.PolicyController, []string{"ClusterImagePolicy", "ClusterImagePolicy"},
			[]string{"mode: enforce", "glob: " + repo + "@" + testDigest, "glob: " + repoUBI + "@" + testDigest, "no-match-policy: deny", "BEGIN PUBLIC KEY", "predicateType: https://spdx.dev/Document", "kubectl label namespace reloader policy.sigstore.dev/include=true"}},
		{"policy-controller keyless", keyless, admission.PolicyController, []string{"TrustRoot", "ClusterImagePolicy", "ClusterImagePolicy"},
			[]string{"trustRootRef: reloader-mirror-trust-root", "subject: https://github.com/reloader-dev/reloader/.github/workflows/release.yml@refs/tags/v1.2.3", "certChain:", "tLogs:", "ctlog:", "signatureFormat: bundle"}},
		{"kyverno key", keyOptions(t), admission.KyvernoClusterPolicy, []string{"ClusterPolicy"},
			[]string{"failureAction: Enforce", "ignoreTlog: true", "ignoreSCT: true", "publicKeys: |", "namespaces:\n          - reloader", "autogen-controllers: none", "type: https://spdx.dev/Document", "verifyDigest: true", "type: Cosign", "failurePolicy: Fail"}},
		{"kyverno keyless", keyless, admission.KyvernoClusterPolicy, []string{"ClusterPolicy"},
			[]string{"issuer: https://token.actions.githubusercontent.com", "type: SigstoreBundle", "reloader.dev/enforce", "failurePolicy: Fail", "--enableTuf --tufMirror"}},
		{"kyverno ImageValidatingPolicy key", keyOptions(t), admission.Kyverno, []string{"ImageValidatingPolicy"},
			[]string{"apiVersion: policies.kyverno.io/v1\n", "- Deny", "insecureIgnoreTlog: true", "insecureIgnoreSCT: true", "data: |", "kubernetes.io/metadata.name", "kyverno/kyverno#17109",
				"verifyDigest: true", "mutateDigest: false", "failurePolicy: Fail", "verifyImageSignatures(i, [attestors.release]) > 0", "glob: " + repo + "@*", "cronjobs", "enabled: false"}},
		{"kyverno ImageValidatingPolicy keyless", keyless, admission.Kyverno, []string{"ImageValidatingPolicy"},
			[]string{"issuer: https://token.actions.githubusercontent.com", "subject: https://github.com/reloader-dev/reloader/", "trustedRoot:", "mediaType", "reloader.dev/enforce", "--kyverno-tuf-mirror",
				"type: https://spdx.dev/Document", "verifyAttestationSignatures(i, attestations.sbom, [attestors.release]) > 0"}},
		{"audit vap", func() admission.Options { o := keyOptions(t); o.Mode = admission.Audit; return o }(), admission.VAP, []string{"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"},
			[]string{"validationActions:\n  - Warn\n  - Audit"}},
		{"audit policy-controller", func() admission.Options { o := keyOptions(t); o.Mode = admission.Audit; return o }(), admission.PolicyController, []string{"ClusterImagePolicy", "ClusterImagePolicy"},
			[]string{"mode: warn"}},
		{"audit kyverno", func() admission.Options { o := keyOptions(t); o.Mode = admission.Audit; return o }(), admission.KyvernoClusterPolicy, []string{"ClusterPolicy"},
			[]string{"failureAction: Audit"}},
		{"audit kyverno ImageValidatingPolicy", func() admission.Options { o := keyOptions(t); o.Mode = admission.Audit; return o }(), admission.Kyverno, []string{"ImageValidatingPolicy"},
			[]string{"validationActions:\n  - Audit\n  - Warn"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := admission.Generate(tc.opts, []admission.Format{tc.format})
			if err != nil {
				t.Fatal(err)
			}
			b := out[tc.format]
			if got := kinds(objects(t, b)); strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("kinds %v, want %v", got, tc.want)
			}
			for _, s := range tc.has {
				if !strings.Contains(string(b), s) {
					t.Errorf("%s policy lacks %q:\n%s", tc.format, s, b)
				}
			}
			if !strings.HasPrefix(string(b), "# ") {
				t.Errorf("%s policy does not start with its explanation", tc.format)
			}
		})
	}
}

func TestGenerateRefusesWhatWouldTrustTooMuchOrNothing(t *testing.T) {
	t.Parallel()
	good := keyOptions(t)
	for _, tc := range []struct {
		name string
		edit func(*admission.Options)
		want string
	}{
		{"no repositories", func(o *admission.Options) { o.Repositories = nil }, "no mirrored image repositories"},
		{"repository with a tag", func(o *admission.Options) { o.Repositories = []string{repo + ":v1"} }, "without tag or digest"},
		{"repository that would break out of CEL", func(o *admission.Options) { o.Repositories = []string{`harbor.example/a"] || true || ["`} }, "is not a registry/path"},
		{"repository without a registry path", func(o *admission.Options) { o.Repositories = []string{"reloader"} }, "is not a registry/path"},
		{"no scope", func(o *admission.Options) { o.Namespace = "" }, "no scope"},
		{"both scopes", func(o *admission.Options) {
			o.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}
		}, "not both"},
		{"empty selector", func(o *admission.Options) {
			o.Namespace, o.NamespaceSelector = "", &metav1.LabelSelector{}
		}, "select every namespace"},
		{"bad namespace", func(o *admission.Options) { o.Namespace = "Reloader_NS" }, `namespace "Reloader_NS"`},
		{"bad mode", func(o *admission.Options) { o.Mode = "dryrun" }, `mode "dryrun"`},
		{"no trust", func(o *admission.Options) { o.Trust = admission.Trust{} }, "exactly one of a certificate identity"},
		{"garbage key", func(o *admission.Options) { o.Trust.PublicKeyPEM = "not a key" }, "public key"},
		{"key and identity", func(o *admission.Options) { o.Trust.Identity = "me" }, "not both"},
		{"keyless without issuer", func(o *admission.Options) { o.Trust = admission.Trust{Identity: "me", TrustedRootJSON: []byte("{}")} }, "OIDC issuer"},
		{"keyless without root", func(o *admission.Options) { o.Trust = admission.Trust{Identity: "me", Issuer: "https://issuer"} }, "trusted root"},
		{"keyless with a bad regexp", func(o *admission.Options) {
			o.Trust = admission.Trust{IdentityRegexp: "(", Issuer: "https://issuer", TrustedRootJSON: []byte("{}")}
		}, "identity regexp"},
		{"keyless with a root that is not one", func(o *admission.Options) {
			o.Trust = admission.Trust{Identity: "me", Issuer: "https://issuer", TrustedRootJSON: []byte(`{"mediaType":"x"}`)}
		}, "parsing the trusted root"},
		{"bad name", func(o *admission.Options) { o.Name = "Reloader!" }, `policy name "Reloader!"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := good
			o.Repositories = append([]string(nil), good.Repositories...)
			tc.edit(&o)
			_, err := admission.Generate(o, admission.Formats)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestParseFormat(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int{"vap": 1, "mutating": 1, "policy-controller": 1, "kyverno": 1, "kyverno-clusterpolicy": 1, "all": 4} {
		f, err := admission.ParseFormat(in)
		if err != nil || len(f) != want {
			t.Errorf("ParseFormat(%q) = %v, %v", in, f, err)
		}
	}
	if _, err := admission.ParseFormat("opa"); err == nil || !strings.Contains(err.Error(), "want vap, mutating, policy-controller, kyverno, kyverno-clusterpolicy or all") {
		t.Errorf("ParseFormat(opa): %v", err)
	}
}

func TestGenerateIsDeterministic(t *testing.T) {
	t.Parallel()
	o := keyOptions(t)
	a, err := admission.Generate(o, admission.Formats)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := admission.Generate(o, admission.Formats)
	for _, f := range admission.Formats {
		if string(a[f]) != string(b[f]) {
			t.Errorf("%s differs between two runs", f)
		}
	}
}

// FuzzGenerate: outside input (repository names, identities, a trusted root,
// a key) never panics, and whatever is accepted is a YAML stream of objects.
func FuzzGenerate(f *testing.F) {
	f.Add(repo, "reloader", "", "https://issuer", []byte("{}"), keyPEM(f))
	f.Add(repo, "reloader", "id", "https://issuer", trustedRootJSON(f), "")
	f.Fuzz(func(t *testing.T, repository, ns, identity, issuer string, rootJSON []byte, key string) {
		o := admission.Options{Repositories: []string{repository}, Digests: []string{testDigest}, Namespace: ns,
			Trust: admission.Trust{PublicKeyPEM: key, Identity: identity, Issuer: issuer, TrustedRootJSON: rootJSON}}
		out, err := admission.Generate(o, admission.Formats)
		if err != nil {
			return
		}
		for _, f := range admission.Formats {
			for _, obj := range objects(t, out[f]) {
				if obj["kind"] == "" || obj["apiVersion"] == "" {
					t.Fatalf("%s: object without kind or apiVersion: %v", f, obj)
				}
			}
		}
	})
}

// policy-controller and Kyverno match an identity regexp anywhere in the
// certificate identity, so the policies write it anchored; every approved
// digest is in the CEL the VAP and Kyverno share.
func TestGeneratedPoliciesAnchorIdentityRegexpsAndPinDigests(t *testing.T) {
	t.Parallel()
	o := admission.Options{Repositories: []string{repo}, Digests: []string{testDigest, testDigest}, Approved: []string{"v1.2.3"}, Namespace: "reloader",
		Trust: admission.Trust{IdentityRegexp: `https://github\.com/reloader-dev/reloader/\.github/workflows/release\.yml@refs/tags/v.*`,
			Issuer: "https://token.actions.githubusercontent.com", TrustedRootJSON: trustedRootJSON(t)}}
	out, err := admission.Generate(o, admission.Formats)
	if err != nil {
		t.Fatal(err)
	}
	anchored := `subjectRegExp: ^(?:https://github\.com/reloader-dev/reloader/\.github/workflows/release\.yml@refs/tags/v.*)$`
	for _, f := range []admission.Format{admission.PolicyController, admission.Kyverno, admission.KyvernoClusterPolicy} {
		if !strings.Contains(string(out[f]), anchored) {
			t.Errorf("%s policy does not anchor the identity regexp:\n%s", f, out[f])
		}
	}
	for _, f := range []admission.Format{admission.VAP, admission.Kyverno, admission.KyvernoClusterPolicy} {
		if n := strings.Count(string(out[f]), `["`+testDigest+`"]`); n != 1 {
			t.Errorf("%s policy lists the approved digests %d times, want once:\n%s", f, n, out[f])
		}
	}
	o.Digests = nil
	if _, err := admission.Generate(o, admission.Formats); err == nil || !strings.Contains(err.Error(), "no approved image digests") {
		t.Errorf("a policy that approves no digest: %v, want a refusal", err)
	}
}
