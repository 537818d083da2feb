package controlplane

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Grant binds rules to subject: a Role and RoleBinding in namespace, or a
// ClusterRole and ClusterRoleBinding when namespace is empty. name names the
// role and binding; granting the same name again replaces the rules.
func (cp *ControlPlane) Grant(ctx context.Context, name, namespace string, subject rbacv1.Subject, rules []rbacv1.PolicyRule) error {
	cs, err := kubernetes.NewForConfig(cp.Admin)
	if err != nil {
		return fmt.Errorf("building the admin client: %w", err)
	}
	meta := metav1.ObjectMeta{Name: name, Namespace: namespace}
	if namespace == "" {
		role := &rbacv1.ClusterRole{ObjectMeta: meta, Rules: rules}
		if _, err := cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
			_, err = cs.RbacV1().ClusterRoles().Update(ctx, role, metav1.UpdateOptions{})
			if err != nil {
				return fmt.Errorf("updating ClusterRole %s: %w", name, err)
			}
		} else if err != nil {
			return fmt.Errorf("creating ClusterRole %s: %w", name, err)
		}
		binding := &rbacv1.ClusterRoleBinding{
			ObjectMeta: meta,
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
			Subjects:   []rbacv1.Subject{subject},
		}
		if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating ClusterRoleBinding %s: %w", name, err)
		}
		return nil
	}
	if err := EnsureNamespace(ctx, cs, namespace); err != nil {
		return err
	}
	role := &rbacv1.Role{ObjectMeta: meta, Rules: rules}
	if _, err := cs.RbacV1().Roles(namespace).Create(ctx, role, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
		if _, err := cs.RbacV1().Roles(namespace).Update(ctx, role, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("updating Role %s/%s: %w", namespace, name, err)
		}
	} else if err != nil {
		return fmt.Errorf("creating Role %s/%s: %w", namespace, name, err)
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: meta,
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects:   []rbacv1.Subject{subject},
	}
	if _, err := cs.RbacV1().RoleBindings(namespace).Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating RoleBinding %s/%s: %w", namespace, name, err)
	}
	return nil
}

// User is the RBAC subject of a user minted with UserConfig.
func User(name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: name}
}

// ServiceAccount is the RBAC subject of a ServiceAccount.
func ServiceAccount(namespace, name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: name}
}

// Allowed asks the apiserver, through a SubjectAccessReview, whether user (with
// groups) may do verb on resource. namespace empty asks cluster-wide; name
// empty asks for any object.
func (cp *ControlPlane) Allowed(ctx context.Context, user string, groups []string, attrs authorizationv1.ResourceAttributes) (bool, string, error) {
	cs, err := kubernetes.NewForConfig(cp.Admin)
	if err != nil {
		return false, "", fmt.Errorf("building the admin client: %w", err)
	}
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user, Groups: groups, ResourceAttributes: &attrs,
	}}
	res, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
	if err != nil {
		return false, "", fmt.Errorf("reviewing %s %s for %s: %w", attrs.Verb, attrs.Resource, user, err)
	}
	return res.Status.Allowed, res.Status.Reason, nil
}

// tokenRequest asks for a token that outlives any test run.
func tokenRequest() *authenticationv1.TokenRequest {
	seconds := int64(6 * 3600)
	return &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &seconds}}
}

func deleteBackground() metav1.DeleteOptions {
	p := metav1.DeletePropagationBackground
	return metav1.DeleteOptions{PropagationPolicy: &p}
}
