package cache

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reloader-dev/reloader/controller/annotations"
	"github.com/reloader-dev/reloader/controller/hash"
)

// What the cache retains per ConfigMap with the per-key digests, against
// the same entries without them (the whole hash only): the memory side of
// per-key reloads. Run with -bench ConfigEntry -benchtime 1x.
func BenchmarkConfigEntryRetained(b *testing.B) {
	for _, keys := range []int{1, 10} {
		b.Run(fmt.Sprintf("%d-keys", keys), func(b *testing.B) {
			const n = 2000
			objs := make([]*corev1.ConfigMap, n)
			for i := range objs {
				data := map[string]string{}
				for k := range keys {
					data[fmt.Sprintf("key-%d", k)] = strings.Repeat("v", 1024/keys)
				}
				objs[i] = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i), Namespace: "bench",
					ResourceVersion: "12345"}, Data: data}
			}
			names := annotations.Defaults()
			for b.Loop() {
				with, without := retained(func() []any {
					out := make([]any, n)
					for i, o := range objs {
						out[i] = stripConfig(names, hash.SHA1, benchKeys, o)
					}
					return out
				}), retained(func() []any {
					out := make([]any, n)
					for i, o := range objs {
						e := stripConfig(names, hash.SHA1, benchKeys, o).(*configEntry)
						e.keys = nil
						out[i] = e
					}
					return out
				})
				b.ReportMetric(float64(with)/n, "B/entry")
				b.ReportMetric(float64(without)/n, "B/entry-whole-only")
			}
		})
	}
}

// benchKeys digests under a key, as a controller in per-key mode does.
var benchKeys = func() hash.KeyDigester {
	d, err := hash.Keyed([]byte(strings.Repeat("k", hash.KeySize)))
	if err != nil {
		panic(err)
	}
	return d
}()

// retained is the heap that what build returns keeps alive.
func retained(build func() []any) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	kept := build()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(kept)
	return after.HeapAlloc - before.HeapAlloc
}
