package history

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"

	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/ownership"
)

// How records are stored: a Secret per record (a Secret rather than a ConfigMap because
// the spec may hold sensitive values), of this type, with these labels and this data key.
const (
	SecretType     = "istio.io/install-record"
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedBy      = "istioctl"
	LabelRecord    = "install.istio.io/record"
	LabelNumber    = "install.istio.io/record-number"
	DataKey        = "record.json.gz"
)

// DefaultMax is how many records of a revision are kept unless told otherwise.
const DefaultMax = 10

// Store reads and writes the records in one namespace.
type Store struct {
	Client    *kube.Client
	Namespace string
}

// Rev is the revision label value of a spec revision ("default" for none).
func Rev(revision string) string { return ownership.Rev(revision) }

// SecretName names record n of a revision.
func SecretName(rev string, n int) string {
	return fmt.Sprintf("istioctl-install-%s-v%d", Rev(rev), n)
}

// Selector selects the records of a revision, or of every revision when rev is "".
func Selector(rev string) string {
	s := LabelRecord + "=true," + LabelManagedBy + "=" + ManagedBy
	if rev != "" {
		s += "," + ownership.LabelRevision + "=" + rev
	}
	return s
}

func (s *Store) resource() (dynamic.ResourceInterface, error) {
	ri, _, err := s.Client.Resource(kube.SecretGVK, s.Namespace)
	return ri, err
}

// Secrets lists the record Secrets of a revision (every revision when rev is ""), without
// decoding them: what an uninstall removes.
func (s *Store) Secrets(ctx context.Context, rev string) ([]*unstructured.Unstructured, error) {
	ri, err := s.resource()
	if err != nil {
		return nil, err
	}
	list, err := ri.List(ctx, metav1.ListOptions{LabelSelector: Selector(rev)})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, s.Client.ExplainError(fmt.Errorf("listing install records in %s: %w", s.Namespace, err))
	}
	var out []*unstructured.Unstructured
	for i := range list.Items {
		o := &list.Items[i]
		if t, _, _ := unstructured.NestedString(o.Object, "type"); t == SecretType {
			o.SetGroupVersionKind(kube.SecretGVK)
			out = append(out, o)
		}
	}
	return out, nil
}

// List returns the records of a revision (every revision when rev is ""), sorted by
// revision and number. A record that does not decode is an error naming its Secret.
func (s *Store) List(ctx context.Context, rev string) ([]*Record, error) {
	secrets, err := s.Secrets(ctx, rev)
	if err != nil {
		return nil, err
	}
	out := make([]*Record, 0, len(secrets))
	var seals Seals
	if len(secrets) > 0 {
		seals = ReadSeals(ctx, s.Client, s.Namespace)
	}
	for _, u := range secrets {
		var sec corev1.Secret
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &sec); err != nil {
			return nil, fmt.Errorf("reading Secret %s/%s: %w", u.GetNamespace(), u.GetName(), err)
		}
		r, err := Decode(sec.Data[DataKey])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", ref.Of(u), err)
		}
		r.namespace, r.secret = sec.Namespace, sec.Name
		r.Trust = seals.Judge(u, sec.Data[DataKey])
		if r.Trust == Sealed && sec.Name != SecretName(r.Revision, r.Number) {
			r.Trust = Changed // sealed under its name, but it says it is another record
		}
		out = append(out, r)
	}
	Sort(out)
	return out, nil
}

// secret is r's Secret and its payload (what the seal covers).
func (s *Store) secret(r *Record) (*unstructured.Unstructured, []byte, error) {
	payload, err := Encode(r)
	if err != nil {
		return nil, nil, err
	}
	sec := &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      SecretName(r.Revision, r.Number),
			Namespace: s.Namespace,
			Labels: map[string]string{
				LabelManagedBy:          ManagedBy,
				LabelRecord:             "true",
				ownership.LabelRevision: Rev(r.Revision),
				LabelNumber:             strconv.Itoa(r.Number),
			},
		},
		Type: SecretType,
		Data: map[string][]byte{DataKey: payload},
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(sec)
	if err != nil {
		return nil, nil, err
	}
	return &unstructured.Unstructured{Object: obj}, payload, nil
}

// Create writes r as the revision's next record (setting r.Number) and seals it (Seal, as
// the same field manager, dropping the seals of the records the trim removes), then
// deletes the oldest records so that at most keep remain (keep <= 0 keeps all). Two
// installs recording at once both succeed: the second takes the number after the first's.
// A record written but not sealed is an error wrapping ErrNotSealed, r.Number set.
func (s *Store) Create(ctx context.Context, r *Record, keep int) error {
	r.Revision = Rev(r.Revision)
	ri, err := s.resource()
	if err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		existing, interrupted, listed, err := s.numbers(ctx, r.Revision)
		if err != nil {
			return err
		}
		r.Number = 1
		for _, n := range existing {
			r.Number = max(r.Number, n+1)
		}
		obj, payload, err := s.secret(r)
		if err != nil {
			return err
		}
		created, err := ri.Create(ctx, obj, metav1.CreateOptions{FieldManager: ownership.FieldManager})
		if apierrors.IsAlreadyExists(err) && attempt < 5 {
			continue
		}
		if err != nil {
			return s.Client.ExplainError(fmt.Errorf("writing install record %s/%s: %w", s.Namespace, obj.GetName(), err))
		}
		if r.Outcome == Interrupted {
			interrupted[r.Number] = true
		}
		trimmed := ToTrim(append(existing, r.Number), keep, interrupted)
		var drop []string
		for _, n := range trimmed {
			drop = append(drop, SecretName(r.Revision, n))
		}
		if err := Seal(ctx, s.Client, created, payload, ownership.FieldManager, false, drop...); err != nil {
			return err
		}
		return s.trim(ctx, r.Revision, trimmed, listed)
	}
}

// Update rewrites an existing record (its outcome and description after --atomic) and
// seals it again.
func (s *Store) Update(ctx context.Context, r *Record) error {
	ri, err := s.resource()
	if err != nil {
		return err
	}
	obj, payload, err := s.secret(r)
	if err != nil {
		return err
	}
	live, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
	if err != nil {
		return s.Client.ExplainError(fmt.Errorf("reading install record %s/%s: %w", s.Namespace, obj.GetName(), err))
	}
	obj.SetResourceVersion(live.GetResourceVersion())
	updated, err := ri.Update(ctx, obj, metav1.UpdateOptions{FieldManager: ownership.FieldManager})
	if err != nil {
		return s.Client.ExplainError(fmt.Errorf("updating install record %s/%s: %w", s.Namespace, obj.GetName(), err))
	}
	return Seal(ctx, s.Client, updated, payload, ownership.FieldManager, false)
}

// numbers lists the record numbers of a revision, from their labels, which of them are
// interrupted records (decoded; one that does not decode counts as not interrupted), and
// each record as listed.
func (s *Store) numbers(ctx context.Context, rev string) ([]int, map[int]bool, map[int]*unstructured.Unstructured, error) {
	secrets, err := s.Secrets(ctx, rev)
	if err != nil {
		return nil, nil, nil, err
	}
	var out []int
	interrupted := map[int]bool{}
	listed := map[int]*unstructured.Unstructured{}
	for _, o := range secrets {
		n, err := strconv.Atoi(o.GetLabels()[LabelNumber])
		if err != nil {
			continue
		}
		out = append(out, n)
		listed[n] = o
		data, _, _ := unstructured.NestedString(o.Object, "data", DataKey)
		if raw, err := base64.StdEncoding.DecodeString(data); err == nil {
			if r, err := Decode(raw); err == nil && r.Outcome == Interrupted {
				interrupted[n] = true
			}
		}
	}
	return out, interrupted, listed, nil
}

// trim deletes the records numbered trimmed (ToTrim's pick), each as listed
// (kube.Client.DeleteAsJudged): one that changed since is deleted only while its labels
// still make it record n of rev, and one re-created since is left, for the next trim to
// judge (unsealed: Create dropped its seal).
func (s *Store) trim(ctx context.Context, rev string, trimmed []int, listed map[int]*unstructured.Unstructured) error {
	sel, err := labels.Parse(Selector(rev))
	if err != nil {
		return err
	}
	var errs []error
	for _, n := range trimmed {
		o := listed[n]
		if o == nil {
			continue // the record just written: never trimmed by the run that wrote it
		}
		still := func(live *unstructured.Unstructured) bool {
			return sel.Matches(labels.Set(live.GetLabels())) && live.GetLabels()[LabelNumber] == strconv.Itoa(n)
		}
		if _, err := s.Client.DeleteAsJudged(ctx, o, false, still); err != nil {
			errs = append(errs, fmt.Errorf("deleting old install record %s: %w", SecretName(rev, n), err))
		}
	}
	return errors.Join(errs...)
}
