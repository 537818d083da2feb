// Package metainfo publishes the reloader-meta-info ConfigMap: what build is
// running and with which effective options, in the controller's namespace,
// with the original's name, label and keys so existing tooling finds it.
// Secrets among the options (the webhook URL) are redacted.
package metainfo

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/reloader-dev/reloader/controller/buildinfo"
)

const (
	// Name of the ConfigMap.
	Name = "reloader-meta-info"
	// LabelKey and LabelValue label it, as the original does.
	LabelKey   = "reloader.stakater.com/meta-info"
	LabelValue = "reloader"
)

// Info is what is published.
type Info struct {
	Namespace      string
	DeploymentName string
	// Options are the effective options, already redacted, as JSON-encodable
	// values with the original's field names.
	Options any
}

type buildInfo struct {
	GoVersion      string `json:"goVersion"`
	ReleaseVersion string `json:"releaseVersion"`
	CommitHash     string `json:"commitHash"`
	CommitTime     string `json:"commitTime"`
	Edition        string `json:"edition"`
}

type deploymentInfo struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
}

// ConfigMap renders the ConfigMap.
func ConfigMap(i Info) (*corev1.ConfigMap, error) {
	b := buildinfo.Get()
	data := map[string]any{
		"buildInfo": buildInfo{GoVersion: b.GoVersion, ReleaseVersion: b.Version, CommitHash: b.Commit, CommitTime: b.Date,
			Edition: "reloader-dev"},
		"reloaderOptions": i.Options,
		"deploymentInfo":  deploymentInfo{Name: i.DeploymentName, Namespace: i.Namespace},
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: Name, Namespace: i.Namespace, Labels: map[string]string{LabelKey: LabelValue}},
		Data:       map[string]string{},
	}
	for k, v := range data {
		j, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("encoding %s of %s: %w", k, Name, err)
		}
		cm.Data[k] = string(j)
	}
	return cm, nil
}

// Publish creates or updates the ConfigMap.
func Publish(ctx context.Context, cs kubernetes.Interface, i Info) error {
	cm, err := ConfigMap(i)
	if err != nil {
		return err
	}
	cms := cs.CoreV1().ConfigMaps(i.Namespace)
	cur, err := cms.Get(ctx, Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		if _, err := cms.Create(ctx, cm, metav1.CreateOptions{FieldManager: "reloader"}); err != nil {
			return fmt.Errorf("creating ConfigMap %s/%s: %w", i.Namespace, Name, err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("reading ConfigMap %s/%s: %w", i.Namespace, Name, err)
	}
	cur.Labels = cm.Labels
	cur.Data = cm.Data
	if _, err := cms.Update(ctx, cur, metav1.UpdateOptions{FieldManager: "reloader"}); err != nil {
		return fmt.Errorf("updating ConfigMap %s/%s: %w", i.Namespace, Name, err)
	}
	return nil
}
