package fingerprint

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/reloader-dev/reloader/controller/hash"
)

var ref = Ref{Namespace: "reloader", Name: DefaultSecretName}

// sample is what a digester makes of one value: equal samples, equal keys.
func sample(d hash.KeyDigester) uint64 {
	return d.SecretKeys(map[string][]byte{"pin": []byte("4711")})[0].Sum
}

// The first start creates the Secret, immutable, with KeySize random bytes;
// a restart or a second replica reads the same key.
func TestTheFirstStartCreatesTheKeyAndLaterOnesReadIt(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset()
	first, created, err := GetOrCreate(ctx, cs, ref)
	if err != nil || !created || !first.Keyed() {
		t.Fatalf("first start: created %v, keyed %v, %v", created, first.Keyed(), err)
	}
	s, err := cs.CoreV1().Secrets(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Data[DataKey]) != hash.KeySize || s.Immutable == nil || !*s.Immutable || s.Annotations[AboutAnnotation] == "" {
		t.Errorf("the key Secret: %d-byte key, immutable %v, annotations %v", len(s.Data[DataKey]), s.Immutable, s.Annotations)
	}
	again, created, err := GetOrCreate(ctx, cs, ref)
	if err != nil || created || sample(again) != sample(first) {
		t.Fatalf("restart: created %v, same key %v, %v", created, sample(again) == sample(first), err)
	}
	read, found, err := Get(ctx, cs, ref)
	if err != nil || !found || sample(read) != sample(first) {
		t.Fatalf("Get: found %v, same key %v, %v", found, sample(read) == sample(first), err)
	}
	if _, found, err := Get(ctx, cs, Ref{Namespace: "elsewhere", Name: ref.Name}); found || err != nil {
		t.Errorf("Get of a missing Secret: found %v, %v; want neither", found, err)
	}
}

// Two replicas starting together both find no Secret and both create one:
// the one whose create loses reads the winner's key.
func TestReplicasStartingTogetherAgree(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset()
	winner := bytes.Repeat([]byte{7}, hash.KeySize)
	cs.PrependReactor("create", "secrets", func(k8stesting.Action) (bool, runtime.Object, error) {
		// The other replica's create lands first.
		if err := cs.Tracker().Add(newSecret(ref, winner)); err != nil {
			t.Error(err)
		}
		return true, nil, apierrors.NewAlreadyExists(schema.GroupResource{Resource: "secrets"}, ref.Name)
	})
	d, created, err := GetOrCreate(ctx, cs, ref)
	want, _ := hash.Keyed(winner)
	if err != nil || created || sample(d) != sample(want) {
		t.Fatalf("created %v, the winner's key %v, %v", created, sample(d) == sample(want), err)
	}

	cs = fake.NewClientset()
	var wg sync.WaitGroup
	sums := make([]uint64, 8)
	for i := range sums {
		wg.Go(func() {
			d, _, err := GetOrCreate(ctx, cs, ref)
			if err != nil {
				t.Error(err)
			}
			sums[i] = sample(d)
		})
	}
	wg.Wait()
	for _, s := range sums {
		if s != sums[0] {
			t.Fatalf("replicas disagree: %v", sums)
		}
	}
}

// A Secret whose key is missing or short is refused, naming the Secret,
// never its bytes; so is a create the controller may not make.
func TestAnUnusableKeyOrAForbiddenCreateFailsNamingTheSecret(t *testing.T) {
	ctx := context.Background()
	short := newSecret(ref, []byte("short-key-bytes"))
	_, _, err := GetOrCreate(ctx, fake.NewClientset(short), ref)
	if err == nil || !strings.Contains(err.Error(), ref.String()) || strings.Contains(err.Error(), "short-key-bytes") {
		t.Errorf("a 15-byte key: %v; want an error naming %s without the bytes", err, ref)
	}
	cs := fake.NewClientset()
	cs.PrependReactor("create", "secrets", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, ref.Name, nil)
	})
	if _, _, err := GetOrCreate(ctx, cs, ref); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "creating the fingerprint key Secret "+ref.String()) {
		t.Errorf("a forbidden create: %v", err)
	}
}

func TestParseRef(t *testing.T) {
	for in, want := range map[string]Ref{
		"my-key":          {Namespace: "ctl", Name: "my-key"},
		"other/my-key":    {Namespace: "other", Name: "my-key"},
		DefaultSecretName: {Namespace: "ctl", Name: DefaultSecretName},
	} {
		if got, err := ParseRef(in, "ctl"); err != nil || got != want {
			t.Errorf("ParseRef(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "a/b/c", "Upper", "/name", "ns/"} {
		if _, err := ParseRef(bad, "ctl"); err == nil {
			t.Errorf("ParseRef(%q) was accepted", bad)
		}
	}
}
