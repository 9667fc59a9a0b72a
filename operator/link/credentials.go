package link

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/ownership"
)

var (
	secretsGVR        = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	serviceAccountGVK = schema.GroupVersionKind{Version: "v1", Kind: "ServiceAccount"}
)

// ServiceAccountExists says whether the ServiceAccount is there.
func ServiceAccountExists(ctx context.Context, c *kube.Client, ns, name string) (bool, error) {
	o := &unstructured.Unstructured{}
	o.SetGroupVersionKind(serviceAccountGVK)
	o.SetNamespace(ns)
	o.SetName(name)
	live, err := c.Get(ctx, o)
	return live != nil, err
}

// Missing lists those of the reader's objects that do not exist (a ClusterRoleBinding
// someone deleted breaks every link to the cluster).
func (r *Reader) Missing(ctx context.Context, c *kube.Client) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, o := range r.Objects {
		live, err := c.Get(ctx, o)
		if err != nil {
			return nil, err
		}
		if live == nil {
			out = append(out, o)
		}
	}
	return out, nil
}

// Create applies objs (the reader's missing objects), the namespace first when missing.
func Create(ctx context.Context, c *kube.Client, ns string, objs []*unstructured.Unstructured) error {
	if len(objs) == 0 {
		return nil
	}
	if err := ensureNamespace(ctx, c, ns); err != nil {
		return err
	}
	for _, o := range objs {
		if _, err := c.Apply(ctx, o, kube.ApplyOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// ensureNamespace creates namespace ns when it is missing (an install later takes it as
// it is: namespaces are shared).
func ensureNamespace(ctx context.Context, c *kube.Client, ns string) error {
	n := &unstructured.Unstructured{}
	n.SetGroupVersionKind(kube.NamespaceGVK)
	n.SetName(ns)
	live, err := c.Get(ctx, n)
	if err != nil || live != nil {
		return err
	}
	if _, err := c.Dynamic.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Create(ctx, n, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return c.ExplainError(fmt.Errorf("creating namespace %s: %w", ns, err))
	}
	return nil
}

// TokenSecret is a ServiceAccount token Secret: its name, and (once the token controller
// filled it) the token and the CA the cluster gives its pods.
type TokenSecret struct {
	Namespace, Name string
	// ForCluster is the LabelTokenFor value: the cluster it was made for ("" for a shared one).
	ForCluster string
	Created    time.Time
	token, ca  []byte
}

// Describe names it as Secret/namespace/name.
func (t *TokenSecret) Describe() string { return ref.New("Secret", t.Namespace, t.Name).String() }

// Token and CA are what it holds.
func (t *TokenSecret) Token() []byte { return t.token }
func (t *TokenSecret) CA() []byte    { return t.ca }

func tokenSecretOf(o *unstructured.Unstructured) (*TokenSecret, error) {
	var s corev1.Secret
	if err := fromUnstructured(o, &s); err != nil {
		return nil, err
	}
	return &TokenSecret{Namespace: s.Namespace, Name: s.Name, ForCluster: s.Labels[ownership.LabelTokenFor],
		Created: s.CreationTimestamp.Time, token: s.Data[corev1.ServiceAccountTokenKey], ca: s.Data[corev1.ServiceAccountRootCAKey]}, nil
}

// references says s is a token Secret of the ServiceAccount.
func references(s *unstructured.Unstructured, sa string) bool {
	typ, _, _ := unstructured.NestedString(s.Object, "type")
	return typ == string(corev1.SecretTypeServiceAccountToken) && s.GetAnnotations()[corev1.ServiceAccountNameKey] == sa
}

// TokenSecrets lists the token Secrets of the ServiceAccount, oldest first.
func TokenSecrets(ctx context.Context, c *kube.Client, ns, sa string) ([]*TokenSecret, error) {
	items, err := c.ListIn(ctx, kube.SecretGVK, ns, "")
	if err != nil {
		return nil, err
	}
	var out []*TokenSecret
	for i := range items {
		if !references(&items[i], sa) {
			continue
		}
		t, err := tokenSecretOf(&items[i])
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Created.Before(out[j].Created) })
	return out, nil
}

// SharedTokenSecret finds the token Secret upstream's create-remote-secret uses: the one
// named, which must belong to the ServiceAccount; else the first of the ServiceAccount's
// (leaving out those --apply-to made for one cluster: they go when that link rotates);
// else it creates <sa>-istio-remote-secret-token. The token controller may not have
// filled it yet: see Wait.
func SharedTokenSecret(ctx context.Context, c *kube.Client, ns, sa, named string) (t *TokenSecret, created bool, err error) {
	if named != "" {
		o := &unstructured.Unstructured{}
		o.SetGroupVersionKind(kube.SecretGVK)
		o.SetNamespace(ns)
		o.SetName(named)
		live, err := c.Get(ctx, o)
		if err != nil {
			return nil, false, err
		}
		if live == nil {
			return nil, false, fmt.Errorf("could not get specified secret %s/%s: not found; list the ServiceAccount's token Secrets with kubectl get secrets -n %s --field-selector type=%s", ns, named, ns, corev1.SecretTypeServiceAccountToken)
		}
		if !references(live, sa) {
			return nil, false, fmt.Errorf("secret %s/%s does not reference ServiceAccount %s: it must be of type %s with annotation %s: %s", ns, named, sa, corev1.SecretTypeServiceAccountToken, corev1.ServiceAccountNameKey, sa)
		}
		t, err := tokenSecretOf(live)
		return t, false, err
	}
	all, err := TokenSecrets(ctx, c, ns, sa)
	if err != nil {
		return nil, false, err
	}
	for _, t := range all {
		if t.ForCluster == "" {
			return t, false, nil
		}
	}
	t, err = createTokenSecret(ctx, c, ns, sa, ownership.TokenSecretName(sa), nil)
	return t, err == nil, err
}

// NewTokenSecret creates a token Secret of the ServiceAccount for one target cluster (its
// ID in LabelTokenFor), with a generated name: the token of one link alone.
func NewTokenSecret(ctx context.Context, c *kube.Client, ns, sa, forCluster string) (*TokenSecret, error) {
	return createTokenSecret(ctx, c, ns, sa, "", map[string]string{ownership.LabelTokenFor: forCluster})
}

func createTokenSecret(ctx context.Context, c *kube.Client, ns, sa, name string, labels map[string]string) (*TokenSecret, error) {
	s := &unstructured.Unstructured{}
	s.SetGroupVersionKind(kube.SecretGVK)
	s.SetNamespace(ns)
	if name != "" {
		s.SetName(name)
	} else {
		s.SetGenerateName(ownership.TokenSecretName(sa) + "-")
	}
	s.SetAnnotations(map[string]string{corev1.ServiceAccountNameKey: sa})
	s.SetLabels(labels)
	s.Object["type"] = string(corev1.SecretTypeServiceAccountToken)
	live, err := c.Dynamic.Resource(secretsGVR).Namespace(ns).Create(ctx, s, metav1.CreateOptions{})
	if err != nil {
		return nil, c.ExplainError(fmt.Errorf("creating a token Secret for ServiceAccount %s/%s: %w", ns, sa, err))
	}
	return tokenSecretOf(live)
}

// Wait waits until the token controller has filled t with a token and the CA, as upstream
// does (it gives up after a few seconds: the controller fills a Secret at once). It reads
// again after 10 ms, then twice as long each time up to 200 ms: the controller usually
// answers within tens of milliseconds, and a fleet's links wait for it one after another.
func (t *TokenSecret) Wait(ctx context.Context, c *kube.Client, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	backoff := wait.Backoff{Duration: 10 * time.Millisecond, Factor: 2, Cap: 200 * time.Millisecond, Steps: math.MaxInt32}
	for len(t.token) == 0 || len(t.ca) == 0 {
		if time.Now().After(deadline) {
			return fmt.Errorf("token Secret %s/%s still holds no token after %v: is kube-controller-manager's token controller running (--service-account-private-key-file)?", t.Namespace, t.Name, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff.Step()):
		}
		live, err := c.Dynamic.Resource(secretsGVR).Namespace(t.Namespace).Get(ctx, t.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("token Secret %s/%s was deleted while waiting for its token (the controller deletes a token Secret whose ServiceAccount is gone)", t.Namespace, t.Name)
		}
		if err != nil {
			return c.ExplainError(fmt.Errorf("reading token Secret %s/%s: %w", t.Namespace, t.Name, err))
		}
		fresh, err := tokenSecretOf(live)
		if err != nil {
			return err
		}
		t.token, t.ca = fresh.token, fresh.ca
	}
	return nil
}

// Delete removes the token Secret: its token stops authenticating at once.
func (t *TokenSecret) Delete(ctx context.Context, c *kube.Client, dryRun bool) error {
	opts := metav1.DeleteOptions{}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	err := c.Dynamic.Resource(secretsGVR).Namespace(t.Namespace).Delete(ctx, t.Name, opts)
	if err != nil && !apierrors.IsNotFound(err) {
		return c.ExplainError(fmt.Errorf("deleting token Secret %s/%s: %w", t.Namespace, t.Name, err))
	}
	return nil
}

// Write applies a link Secret (server-side, as LinkFieldManager, taking over what another
// manager set: the previous Secret of the same name is replaced).
func Write(ctx context.Context, c *kube.Client, s *corev1.Secret) error {
	return WriteAs(ctx, c, s, ownership.LinkFieldManager)
}

// WriteAs is Write as field manager manager, creating the namespace when it is missing;
// a Secret already as s is left as it is (a server-side apply that changes nothing).
func WriteAs(ctx context.Context, c *kube.Client, s *corev1.Secret, manager string) error {
	if err := ensureNamespace(ctx, c, s.Namespace); err != nil {
		return err
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(s)
	if err != nil {
		return err
	}
	u := &unstructured.Unstructured{Object: obj}
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	data, err := u.MarshalJSON()
	if err != nil {
		return err
	}
	force := true
	_, err = c.Dynamic.Resource(secretsGVR).Namespace(s.Namespace).Patch(ctx, s.Name, types.ApplyPatchType, data,
		metav1.PatchOptions{FieldManager: manager, Force: &force})
	if err != nil {
		// The apiserver's message names fields, never a Secret's values.
		return c.ExplainError(fmt.Errorf("writing Secret %s/%s: %w", s.Namespace, s.Name, err))
	}
	return nil
}

// DeleteLink removes a link Secret, or only some of its keys when it holds other clusters
// too; a Secret already gone is not an error.
func DeleteLink(ctx context.Context, c *kube.Client, ns, name string, keys []string, all, dryRun bool) error {
	ri := c.Dynamic.Resource(secretsGVR).Namespace(ns)
	var err error
	if all {
		opts := metav1.DeleteOptions{}
		if dryRun {
			opts.DryRun = []string{metav1.DryRunAll}
		}
		err = ri.Delete(ctx, name, opts)
	} else {
		drop := map[string]any{}
		for _, k := range keys {
			drop[k] = nil
		}
		patch, perr := json.Marshal(map[string]any{"data": drop})
		if perr != nil {
			return perr
		}
		opts := metav1.PatchOptions{}
		if dryRun {
			opts.DryRun = []string{metav1.DryRunAll}
		}
		_, err = ri.Patch(ctx, name, types.MergePatchType, patch, opts)
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return c.ExplainError(fmt.Errorf("removing Secret %s/%s: %w", ns, name, err))
	}
	return nil
}
