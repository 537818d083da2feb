package cache

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestLastWriteIsTheNewestManagedFieldsTime(t *testing.T) {
	c := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t1, t2 := metav1.NewTime(c.Add(time.Hour)), metav1.NewTime(c.Add(2*time.Hour))
	m := &metav1.ObjectMeta{CreationTimestamp: c, ManagedFields: []metav1.ManagedFieldsEntry{{Time: &t2}, {Time: &t1}, {}}}
	if got := lastWrite(m); !got.Equal(t2.Time) {
		t.Fatalf("lastWrite = %v, want %v", got, t2)
	}
	if got := lastWrite(&metav1.ObjectMeta{CreationTimestamp: c}); !got.Equal(c.Time) {
		t.Fatalf("without managedFields lastWrite = %v, want the creation %v", got, c)
	}
}

// The write that changed a resource's content is named by the manager that
// owns a key of its data, not by one that owns other fields or only the map
// itself, even when both wrote within the same second (the creator keeps
// data's "." after a rotation job changed every key).
func TestTheChangeIsAttributedToTheManagerOwningTheChangedKeys(t *testing.T) {
	at := func(s int) *metav1.Time { v := metav1.NewTime(time.Unix(1_800_000_000+int64(s), 0)); return &v }
	entry := func(manager string, op metav1.ManagedFieldsOperationType, s int, fields string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, Time: at(s), FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)}
	}
	for _, tc := range []struct {
		name    string
		entries []metav1.ManagedFieldsEntry
		want    string
	}{
		{"rotation in the creation's second", []metav1.ManagedFieldsEntry{
			entry("argocd-controller", metav1.ManagedFieldsOperationUpdate, 0, `{"f:data":{".":{}},"f:type":{}}`),
			entry("secret-rotator", metav1.ManagedFieldsOperationUpdate, 0, `{"f:data":{"f:password":{}}}`)}, "secret-rotator"},
		{"a later label edit is not a content change", []metav1.ManagedFieldsEntry{
			entry("kubectl-client-side-apply", metav1.ManagedFieldsOperationUpdate, 0, `{"f:data":{".":{},"f:token":{}}}`),
			entry("kubectl-label", metav1.ManagedFieldsOperationUpdate, 5, `{"f:metadata":{"f:labels":{"f:team":{}}}}`)}, "kubectl-client-side-apply"},
		{"the newest of two content owners", []metav1.ManagedFieldsEntry{
			entry("flux", metav1.ManagedFieldsOperationApply, 3, `{"f:data":{"f:a":{}}}`),
			entry("vault-agent", metav1.ManagedFieldsOperationUpdate, 9, `{"f:binaryData":{"f:b":{}}}`)}, "vault-agent"},
		{"no content owner", []metav1.ManagedFieldsEntry{
			entry("kubectl", metav1.ManagedFieldsOperationUpdate, 2, `{"f:metadata":{"f:annotations":{"f:data":{}}}}`)}, ""},
		{"an entry that is not an object", []metav1.ManagedFieldsEntry{
			entry("odd", metav1.ManagedFieldsOperationUpdate, 2, `[]`)}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &metav1.ObjectMeta{CreationTimestamp: *at(0), ManagedFields: tc.entries}
			written, manager, _ := newestWrite(m)
			if manager != tc.want {
				t.Errorf("attributed to %q, want %q", manager, tc.want)
			}
			if !written.Equal(lastWrite(m)) {
				t.Errorf("the last write %v is not lastWrite's %v", written, lastWrite(m))
			}
		})
	}
}
