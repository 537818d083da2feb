package controlplane

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// UserConfig returns a client configuration that authenticates as user with
// groups, through a client certificate signed by the control plane's CA. The
// user has no permissions beyond what RBAC grants it (see Grant).
func (cp *ControlPlane) UserConfig(user string, groups ...string) (*rest.Config, error) {
	cert, key, err := cp.ca.issue(user, groups, false)
	if err != nil {
		return nil, err
	}
	return &rest.Config{
		Host: cp.URL(),
		TLSClientConfig: rest.TLSClientConfig{
			CAData: cp.ca.certPEM, CertData: cert, KeyData: key,
		},
		QPS: 1000, Burst: 2000,
	}, nil
}

// ServiceAccountConfig returns a client configuration that authenticates with
// a fresh token of the ServiceAccount namespace/name, creating the namespace
// and the ServiceAccount if they are missing.
func (cp *ControlPlane) ServiceAccountConfig(ctx context.Context, namespace, name string) (*rest.Config, error) {
	cs, err := kubernetes.NewForConfig(cp.Admin)
	if err != nil {
		return nil, fmt.Errorf("building the admin client: %w", err)
	}
	if err := EnsureNamespace(ctx, cs, namespace); err != nil {
		return nil, err
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
	if _, err := cs.CoreV1().ServiceAccounts(namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("creating ServiceAccount %s/%s: %w", namespace, name, err)
	}
	token, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, tokenRequest(), metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("requesting a token for ServiceAccount %s/%s: %w", namespace, name, err)
	}
	return &rest.Config{
		Host:            cp.URL(),
		BearerToken:     token.Status.Token,
		TLSClientConfig: rest.TLSClientConfig{CAData: cp.ca.certPEM},
		QPS:             1000, Burst: 2000,
	}, nil
}

// EnsureNamespace creates namespace unless it exists.
func EnsureNamespace(ctx context.Context, cs kubernetes.Interface, namespace string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", namespace, err)
	}
	return nil
}

// WriteKubeconfig writes cfg as a kubeconfig file with everything embedded.
func WriteKubeconfig(cfg *rest.Config, path string) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["test"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["test"] = &clientcmdapi.AuthInfo{
		ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken,
	}
	kc.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "test", Namespace: "default"}
	kc.CurrentContext = "test"
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		return fmt.Errorf("writing kubeconfig %s: %w", path, err)
	}
	return nil
}
