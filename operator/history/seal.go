package history

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
)

// Records that steer writes (install records: rollback, --atomic, --pin-digests; the
// revision upgrade's progress record: its resume and --rollback) live in the istio
// namespace, where istiod's ServiceAccount may create and update Secrets and ConfigMaps.
// So each is sealed: the run that writes it keeps a digest of it, as written, in an
// annotation of the istio Namespace object itself, which no Role or ClusterRole an install
// renders lets any of its ServiceAccounts write (TestSealHolderUnwritable renders every
// profile to check). A record is trusted only when its digest is there and matches; the
// digest covers the object's kind, namespace, name and UID with its payload, so a copy
// under another name, or a deleted record re-created with the same bytes, matches nothing.

// SealHolder is the kind of the object that keeps the seals (the records' namespace), and
// SealResource its resource, as RBAC rules name it.
var SealHolder = kube.NamespaceGVK

// SealResource is SealHolder's resource in RBAC rules.
const SealResource = "namespaces"

// SealPrefix prefixes the holder's annotations that keep the seals: SealPrefix + the
// record's object name (shortened with a hash beyond the 63 characters a key's name may have).
const SealPrefix = "seal.install.istio.io/"

// Trust is what a record's seal says of it, as read.
type Trust string

// The trust states. Only Sealed is trusted.
const (
	// Sealed: its digest is kept on the holder and matches the record as read.
	Sealed Trust = "sealed"
	// Unsealed: no digest of it is kept: written by another account, by an istioctl from
	// before seals, or by a run that stopped between the record and its seal.
	Unsealed Trust = "unsealed"
	// Changed: the digest kept differs: the record was changed, or deleted and
	// re-created, since istioctl wrote it.
	Changed Trust = "changed"
	// Unverified: the holder could not be read, so nothing could be checked.
	Unverified Trust = "unverified"
)

// digest is the seal of one object's payload.
func digest(obj *unstructured.Unstructured, payload []byte) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00", obj.GetKind(), obj.GetNamespace(), obj.GetName(), obj.GetUID())
	h.Write(payload)
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// sealKey is the holder's annotation keeping the seal of the object named name.
func sealKey(name string) string {
	if len(name) > 63 {
		sum := sha256.Sum256([]byte(name))
		name = name[:54] + "-" + hex.EncodeToString(sum[:4])
	}
	return SealPrefix + name
}

// Seals are the seals kept on one namespace, as read once.
type Seals struct {
	namespace string
	kept      map[string]string
	// unread says the holder could not be read: nothing can be trusted.
	unread bool
}

// ReadSeals reads the seals kept on namespace. A holder that cannot be read leaves every
// record Unverified; one that does not exist holds none.
func ReadSeals(ctx context.Context, c *kube.Client, namespace string) Seals {
	holder := &unstructured.Unstructured{}
	holder.SetGroupVersionKind(SealHolder)
	holder.SetName(namespace)
	live, err := c.Get(ctx, holder)
	if err != nil {
		return Seals{namespace: namespace, unread: true}
	}
	var kept map[string]string
	if live != nil {
		kept = live.GetAnnotations()
	}
	return Seals{namespace: namespace, kept: kept}
}

// Judge says whether obj, read with payload (the bytes its writer sealed), is the record
// its seal describes.
func (s Seals) Judge(obj *unstructured.Unstructured, payload []byte) Trust {
	if s.unread {
		return Unverified
	}
	kept, ok := s.kept[sealKey(obj.GetName())]
	switch {
	case !ok:
		return Unsealed
	case kept != digest(obj, payload):
		return Changed
	}
	return Sealed
}

// Seal keeps the seal of obj (as the apiserver returned it: with its UID), whose payload is
// the bytes to seal, on its namespace, and drops the seals of the objects named in drop,
// in one merge patch as manager: the field manager that wrote the record, through the same
// client (the same write guard). Called by the run that wrote the record, right after it.
func Seal(ctx context.Context, c *kube.Client, obj *unstructured.Unstructured, payload []byte, manager string, dryRun bool, drop ...string) error {
	keys := map[string]any{sealKey(obj.GetName()): digest(obj, payload)}
	for _, name := range drop {
		keys[sealKey(name)] = nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": keys}})
	if err != nil {
		return err
	}
	ri, _, err := c.Resource(SealHolder, "")
	if err != nil {
		return err
	}
	opts := metav1.PatchOptions{FieldManager: manager}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	if _, err := ri.Patch(ctx, obj.GetNamespace(), types.MergePatchType, patch, opts); err != nil {
		if apierrors.IsNotFound(err) {
			err = fmt.Errorf("namespace %s is gone", obj.GetNamespace())
		}
		return fmt.Errorf("%w: sealing %s on Namespace %s: %w", ErrNotSealed, ref.Of(obj).String(), obj.GetNamespace(), c.ExplainError(err))
	}
	return nil
}

// ErrNotSealed says a record was written but its seal was not: it stays untrusted until a
// run writes it again.
var ErrNotSealed = errors.New("record written but not sealed")

// UntrustedError refuses a record whose seal does not hold: which record, why, and what
// to do instead.
type UntrustedError struct {
	// Object is the record, Kind/namespace/name.
	Object string
	Trust  Trust
	// Fix says what to do.
	Fix string
}

func (e *UntrustedError) Error() string {
	r, _ := ref.Parse(e.Object)
	holder := "Namespace " + r.Namespace
	var why string
	switch e.Trust {
	case Unsealed:
		why = "no digest of it is kept on " + holder + " (istioctl keeps one for every record it writes; this one was written by another account, such as istiod's ServiceAccount, or by an istioctl from before records were sealed)"
	case Changed:
		why = "it differs from the digest kept on " + holder + ": it was changed, or deleted and re-created, since istioctl wrote it"
	default:
		why = "the digests on " + holder + " could not be read, so it cannot be checked"
	}
	return fmt.Sprintf("%s is not trusted: %s. %s", e.Object, why, e.Fix)
}

// Namespace is where List read the record ("" for one not read).
func (r *Record) Namespace() string { return r.namespace }

// Untrusted is nil for a sealed record, else the *UntrustedError that refuses it.
func (r *Record) Untrusted() error {
	if r.Trust == Sealed {
		return nil
	}
	name := r.secret
	if name == "" {
		name = SecretName(r.Revision, r.Number)
	}
	return &UntrustedError{Object: ref.New("Secret", r.namespace, name).String(), Trust: r.Trust,
		Fix: fmt.Sprintf("Check what it holds ('istioctl history -r %s -o json'); to install its spec, install it with 'istioctl install -f': that run writes a sealed record. Records an istioctl from before seals wrote stay untrusted: re-run install to seal what stands",
			Rev(r.Revision))}
}
